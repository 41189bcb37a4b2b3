// lu: block LU factorization with partial pivoting on a DPS flow graph (Schaeli, Gerlach & Hersch, "A simulator for
// adaptive parallel applications", §5), on a cluster of node processes, or simulated (lu-sim). Every run checks its
// factors, then prints one line of JSON with n, r, variant, nodes, time_s (predicted_s when simulated), gflops and
// residual.
//
//   lu --nodes 4 --n 2592 --r 324 --variant pipelined --window 8 --trace traces/lu.dpstrace
//   lu --nodes 8 --variant basic --column-nodes 4 --remove-after 1:4      # Schaeli et al., Fig. 13
//   lu --nodes 4 --n 2592 --r 324 --variant pipelined --sub-block 81       # Schaeli et al., Fig. 8
//   lu-sim --nodes 8 --model cluster.json --pdexec --noalloc --n 2592 --r 81
#include "kernel_model.hpp"
#include "kernels.hpp"
#include "lu.hpp"
#include "result_line.hpp"

#include <dps/cli.hpp>
#include <dps/dps.hpp>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <algorithm>

namespace {

using apps::kProgram;

// "I:C" (after iteration I, C threads) from --remove-after / --add-after.
std::pair<int, int> iteration_and_count(const std::string& option, const std::string& text) {
  const auto colon = text.find(':');
  try {
    if (colon != std::string::npos) {
      std::size_t used = 0, used2 = 0;
      const int iteration = std::stoi(text.substr(0, colon), &used);
      const int count = std::stoi(text.substr(colon + 1), &used2);
      if (used == colon && used2 == text.size() - colon - 1 && iteration > 0 && count > 0) return {iteration, count};
    }
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(option + " expects ITERATION:COUNT with both positive, got '" + text + "'");
}

// --scale factor=0.9,multiply=0.25: the kernel times multiplied.
lu::KernelTimes scaled(lu::KernelTimes t, const std::string& text) {
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    const auto equals = item.find('=');
    std::size_t used = 0;
    double factor = -1;
    try {
      if (equals != std::string::npos) factor = std::stod(item.substr(equals + 1), &used);
    } catch (const std::exception&) {
    }
    const std::string kernel = item.substr(0, equals);
    if (equals == std::string::npos || used != item.size() - equals - 1 || !(factor > 0))
      throw std::invalid_argument("--scale expects KERNEL=FACTOR with a positive factor, got '" + item + "'");
    bool known = false;
    for (auto [name, field] : {std::pair{"factor", &lu::KernelTimes::factor_per_row}, {"swap", &lu::KernelTimes::swap},
                               {"solve", &lu::KernelTimes::solve}, {"multiply", &lu::KernelTimes::multiply},
                               {"subtract", &lu::KernelTimes::subtract}, {"copy", &lu::KernelTimes::copy},
                               {"update", &lu::KernelTimes::update}})
      if (kernel == name || kernel == "all") {
        t.*field *= factor;
        if (field == &lu::KernelTimes::swap) t.swap_more *= factor;  // one kernel, dlaswp, charged in two parts
        known = true;
      }
    if (!known)
      throw std::invalid_argument("--scale: no kernel '" + kernel + "' (factor, swap, solve, multiply, subtract, copy, update, all)");
  }
  return t;
}

lu::MatrixKind matrix_kind(const std::string& text) {
  if (text == "random") return lu::MatrixKind::Random;
  if (text == "zero-column") return lu::MatrixKind::ZeroColumn;
  if (text == "zero-row") return lu::MatrixKind::ZeroRow;
  throw std::invalid_argument("--matrix expects random, zero-column or zero-row, got '" + text + "'");
}

}  // namespace

int main(int argc, char** argv) {
  return dps::run_main(kProgram, [&] {
    lu::use_one_blas_thread();  // in every node process: DPS threads are the parallelism
    // The figures are printed once the application has ended, after what its backend prints (the
    // simulator's report): the last line is this program's.
    std::string figures;
    int code = 0;
    {
      dps::Application app(argc, argv);  // returns on node 0 only
      long n = 2592, r = 0, window = 0, sub_block = 0, multipliers = 0, column_nodes = 0, seed = 1;
      std::string variant = "owner", remove_after, add_after, matrix = "random", kernels, scale;
      bool no_check = false;
      dps::Cli cli(kProgram,
                   "Block LU factorization with partial pivoting on a DPS flow graph (Schaeli, Gerlach & Hersch, "
                   "A simulator for adaptive parallel applications, Fig. 6): column "
                   "threads hold r-wide column blocks, multiplier threads multiply r x r blocks.");
      cli.option("--n", n, "matrix order (default 2592)")
          .option("--r", r, "block size, dividing n (default: about 8 column blocks per node, 128 to 512 wide; owner: 12, 96 to 512)")
          .option("--variant", variant,
                  "basic (the paper's merge-split barriers), pipelined (its Fig. 6: streams) or owner (each "
                  "column's thread updates it with one dgemm per iteration; default)")
          .option("--window", window, "flow control: at most this many multiplication jobs (owner: panel shares) of a level in flight (default: no limit)")
          .option("--sub-block", sub_block,
                  "S  basic and pipelined: each r x r product by the multiplication threads together, in r x S and "
                  "S x r pieces (the paper's Fig. 8; S divides r; default: one thread per product)")
          .option("--multipliers", multipliers, "multiplication threads (default: one per node)")
          .option("--column-nodes", column_nodes, "place the column threads on the first this many nodes (default: all)")
          .option("--remove-after", remove_after, "I:C  remove C multiplication threads after iteration I")
          .option("--add-after", add_after, "I:C  add C multiplication threads after iteration I")
          .option("--matrix", matrix, "random (default), zero-column or zero-row (singular: the run says where)")
          .option("--seed", seed, "seed of the random matrix (default 1)")
          .option("--kernels", kernels,
                  "FILE  the kernel model partial direct execution charges: read if it exists, else measured "
                  "here and written (default: measured at r/2, r and 2r, not kept)")
          .option("--scale", scale,
                  "KERNEL=F[,...]  under --pdexec, charge kernel F times its modelled time (factor, swap, solve, "
                  "multiply, subtract, copy, update, or all): what if the LU kernel were 10 % faster (factor=0.9)")
          .flag("--no-check", no_check, "skip the residual check");
      if (!cli.parse(app.args(), dps::Application::options_help())) return 0;
      lu::Options o{.n = static_cast<int>(n),
                    .r = static_cast<int>(r),
                    .variant = lu::variant_named(variant),
                    .window = static_cast<int>(window),
                    .sub_block = static_cast<int>(sub_block),
                    .multipliers = static_cast<int>(multipliers),
                    .column_nodes = static_cast<int>(column_nodes),
                    .matrix = matrix_kind(matrix),
                    .seed = static_cast<std::uint64_t>(seed),
                    .check = !no_check};
      if (!remove_after.empty()) {
        const auto [i, c] = iteration_and_count("--remove-after", remove_after);
        o.changes[i] -= c;
      }
      if (!add_after.empty()) {
        const auto [i, c] = iteration_and_count("--add-after", add_after);
        o.changes[i] += c;
      }
      if (dps::ResizePolicy* scheduler = app.resize_policy(); scheduler && o.changes.empty()) {
        // A job of dps-cluster: after every iteration, its scheduler says how many nodes to go on with.
        if (multipliers != 0) throw std::invalid_argument("a job of dps-cluster has a multiplier per node: no --multipliers");
        o.scheduler = scheduler;
      }
      o = o.resolved(app.nodes());
      if (app.models_compute()) {  // only a partial direct execution charges estimates
        lu::KernelModel model;
        if (!kernels.empty() && std::filesystem::exists(kernels)) {
          model = lu::KernelModel::load(kernels);
        } else if (!kernels.empty()) {
          model = lu::KernelModel::measure({32, 64, 128, 256, 512, o.r}, o.n);
          model.save(kernels);
        } else {
          model = lu::KernelModel::measure({std::max(8, o.r / 2), o.r, 2 * o.r}, o.n);
        }
        lu::set_kernels(lu::Kernels(scaled(model.at(o.r), scale)));
      } else if (!scale.empty()) {
        throw std::invalid_argument("--scale changes what partial direct execution charges: it needs lu-sim --pdexec");
      }

      const lu::Result result = lu::run(app, o);
      if (result.residual && !(*result.residual < 10)) {
        std::fprintf(stderr, "%s: the scaled residual %g is not below 10: the factorization is wrong\n", kProgram,
                     *result.residual);
        code = 1;
      }
      apps::ResultLine line;
      line.add("n", o.n)
          .add("r", o.r)
          .add("variant", lu::name(o.variant))
          .add("window", o.window)
          .add("sub_block", o.sub_block)
          .add("nodes", app.nodes())
          .add("multipliers", result.multipliers)
          .seconds(result.seconds)
          .add("gflops", result.gflops, "%.3f")
          .add("residual", result.residual, "%f");
      if (result.restarted_from) line.add("restarted_from", *result.restarted_from);  // --restart
      figures = line.json();
    }
    std::printf("%s\n", figures.c_str());
    return code;
  });
}
