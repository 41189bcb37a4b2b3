// KernelModel: relative least squares over the measured sizes; JSON in and out.
#include "kernel_model.hpp"

#include "provenance.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

namespace lu {

namespace {

// a + b·x through the points, minimizing relative errors (weights 1/t²): the small sizes count as
// much as the large ones.
KernelModel::Fit fit(const std::vector<double>& x, const std::vector<double>& t, double power) {
  double sw = 0, swx = 0, swxx = 0, swt = 0, swxt = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double w = 1 / (t[i] * t[i]);
    sw += w, swx += w * x[i], swxx += w * x[i] * x[i], swt += w * t[i], swxt += w * x[i] * t[i];
  }
  const double det = sw * swxx - swx * swx;
  if (x.size() < 2 || det <= 0) return {0, t.empty() ? 0 : t.back() / x.back(), power};  // through the origin
  const double b = (sw * swxt - swx * swt) / det, a = (swt - b * swx) / sw;
  if (a < 0 || b < 0) {  // noise: keep the proportional part only
    double num = 0, den = 0;
    for (std::size_t i = 0; i < x.size(); ++i) num += x[i] / t[i], den += x[i] * x[i] / (t[i] * t[i]);
    return {0, num / den, power};
  }
  return {a, b, power};
}

}  // namespace

double KernelModel::Fit::at(int r) const { return a + b * std::pow(static_cast<double>(r), power); }

KernelModel KernelModel::measure(std::vector<int> sizes, int n) {
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  if (sizes.empty() || sizes.front() < 1) throw std::invalid_argument("kernel sizes must be positive");
  KernelModel m;
  m.sizes = sizes;
  m.measured_on = ::measured_on();
  m.measured_at = ::measured_at();
  std::vector<double> r2, r3, factor, swap, solve, multiply, subtract, copy, update_r3, update, more_r, swap_more;
  for (const int r : sizes) {
    const KernelTimes t = Kernels::measure(r, n).times();
    if (t.update > 0) {
      update_r3.push_back(std::pow(static_cast<double>(r), 3));
      update.push_back(t.update);
    }
    if (t.swap_more > 0) {
      more_r.push_back(r);
      swap_more.push_back(t.swap_more);
    }
    r2.push_back(std::pow(static_cast<double>(r), 2));
    r3.push_back(std::pow(static_cast<double>(r), 3));
    factor.push_back(t.factor_per_row);
    swap.push_back(t.swap);
    solve.push_back(t.solve);
    multiply.push_back(t.multiply);
    subtract.push_back(t.subtract);
    copy.push_back(t.copy);
  }
  m.factor_per_row = fit(r2, factor, 2);
  m.swap = fit(r2, swap, 2);
  m.solve = fit(r3, solve, 3);
  m.multiply = fit(r3, multiply, 3);
  m.subtract = fit(r2, subtract, 2);
  m.copy = fit(r2, copy, 2);
  if (!update.empty()) {
    m.update = fit(update_r3, update, 3);
    m.n = n;
  }
  if (!swap_more.empty()) m.swap_more = fit(more_r, swap_more, 1);
  return m;
}

KernelTimes KernelModel::at(int r) const {
  return {r,           factor_per_row.at(r), swap.at(r),   solve.at(r),    multiply.at(r),
          subtract.at(r), copy.at(r),         update.at(r), swap_more.at(r)};
}

void KernelModel::save(const std::string& path) const {
  nlohmann::json out;
  out["sizes"] = sizes;
  const auto put = [&](const char* name, const Fit& f) { out[name] = {{"a", f.a}, {"b", f.b}, {"power", f.power}}; };
  put("factor_per_row", factor_per_row);
  put("swap", swap);
  put("solve", solve);
  put("multiply", multiply);
  put("subtract", subtract);
  put("copy", copy);
  put("update", update);
  put("swap_more", swap_more);
  out["n"] = n;
  out["measured_on"] = measured_on;
  out["measured_at"] = measured_at;
  std::ofstream file(path);
  file << out.dump(2) << "\n";
  if (!file) throw std::runtime_error("cannot write the kernel model " + path);
}

KernelModel KernelModel::load(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot read the kernel model " + path);
  try {
    const nlohmann::json in = nlohmann::json::parse(file);
    KernelModel m;
    m.sizes = in.at("sizes").get<std::vector<int>>();
    const auto get = [&](const char* name, Fit& f) {
      const auto& j = in.at(name);
      f = {j.at("a").get<double>(), j.at("b").get<double>(), j.at("power").get<double>()};
      if (!(f.a >= 0) || !(f.b >= 0)) throw std::invalid_argument(std::string(name) + " has a negative coefficient");
    };
    get("factor_per_row", m.factor_per_row);
    get("swap", m.swap);
    get("solve", m.solve);
    get("multiply", m.multiply);
    get("subtract", m.subtract);
    if (in.contains("copy")) get("copy", m.copy);  // files from before copies were charged: free
    if (in.contains("update")) get("update", m.update);  // before updates were measured: charged as multiply
    if (in.contains("swap_more")) get("swap_more", m.swap_more);  // before: every pivot charged as swap's
    m.n = in.value("n", 0);
    m.measured_on = in.value("measured_on", std::string());
    m.measured_at = in.value("measured_at", std::string());
    return m;
  } catch (const std::exception& e) {
    throw std::runtime_error("the kernel model " + path + " is not valid: " + e.what());
  }
}

}  // namespace lu
