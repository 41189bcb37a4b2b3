// Workloads from SWF traces and JSON files, and the synthetic mix of Sudarsan, Ribbens & Varadarajan ("Priority-enabled
// Scheduling for Resizable Parallel Applications", §4).
#include "dps/cluster/workload.hpp"

#include "draws.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <string_view>
#include <sstream>
#include <stdexcept>

namespace dps::cluster {

namespace {

using nlohmann::json;

using draws::exponential;
using draws::uniform;

template <class T>
void shuffle(std::vector<T>& v, std::mt19937_64& rng) {  // Fisher–Yates (vector<bool> has no swap of references)
  for (std::size_t i = v.size(); i > 1; --i) {
    const std::size_t j = draws::below(rng, i);
    const T a = v[i - 1];
    v[i - 1] = v[j];
    v[j] = a;
  }
}

void sort_by_submit(std::vector<Job>& jobs) {
  std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.submit < b.submit; });
}

// Jobs wider than the cluster: skipped and counted (the archive's convention), or refused.
void fit(Workload& w, bool strict, const std::string& name) {
  if (w.nodes == 0) throw std::runtime_error(name + ": the cluster's size is unknown: give --procs or --model");
  std::vector<Job> kept;
  kept.reserve(w.jobs.size());
  for (Job& j : w.jobs) {
    if (j.size <= w.nodes) {
      kept.push_back(std::move(j));
      continue;
    }
    if (strict)
      throw std::runtime_error(name + ": job " + std::to_string(j.id) + " needs " + std::to_string(j.size) +
                               " nodes, the cluster has " + std::to_string(w.nodes));
    ++w.skipped;
  }
  w.jobs = std::move(kept);
}

// --- JSON ---

class Entry {  // one object of the file, its keys checked: a misspelt key is an error, not a default
 public:
  Entry(const json& j, std::string where) : j_(j), where_(std::move(where)) {
    if (!j.is_object()) fail("expected an object");
  }
  [[noreturn]] void fail(const std::string& why) const { throw std::runtime_error(where_ + ": " + why); }
  [[noreturn]] void fail(const char* key, const std::string& why) const {  // "where: "key" why"
    std::string line = where_;
    line += ": \"";
    line += key;
    line += "\" ";
    line += why;
    throw std::runtime_error(line);
  }
  bool has(const char* key) const { return j_.contains(key); }
  double number(const char* key, double otherwise, double low = -HUGE_VAL) {
    if (!has(key)) return otherwise;
    const json& v = j_.at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < low)
      fail(key, "expects a number" + (low > -HUGE_VAL ? " >= " + format(low) : "") + ", got " + v.dump());
    return v.get<double>();
  }
  double required(const char* key, double low) {
    if (!has(key)) fail(key, "is missing");
    return number(key, 0, low);
  }
  std::size_t count(const char* key, std::size_t otherwise) {
    if (!has(key)) return otherwise;
    const json& v = j_.at(key);
    if (!v.is_number_unsigned() || v.get<std::size_t>() == 0) fail(key, "expects a positive integer, got " + v.dump());
    return v.get<std::size_t>();
  }
  std::string text(const char* key, std::string otherwise) {
    if (!has(key)) return otherwise;
    const json& v = j_.at(key);
    if (!v.is_string()) fail(key, "expects a string, got " + v.dump());
    return v.get<std::string>();
  }
  bool boolean(const char* key, bool otherwise) {
    if (!has(key)) return otherwise;
    if (!j_.at(key).is_boolean()) fail(key, "expects true or false");
    return j_.at(key).get<bool>();
  }
  const json& at(const char* key) const { return j_.at(key); }
  // Every key is one of these: checked before any value, so a misspelt key is named as such.
  void allow(std::initializer_list<std::string_view> keys) const {
    for (const auto& [key, value] : j_.items())
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) fail(key.c_str(), "is not a key of this entry");
  }
  const std::string& where() const { return where_; }

 private:
  static std::string format(double x) {
    std::ostringstream s;
    s << x;
    return s.str();
  }
  const json& j_;
  std::string where_;
};

ProcessorTopology topology_named(Entry& e, const std::string& name) {
  if (name == "arbitrary") return ProcessorTopology::Arbitrary;
  if (name == "nearly-square") return ProcessorTopology::NearlySquare;
  if (name == "power-of-2") return ProcessorTopology::PowerOfTwo;
  e.fail("\"topology\" expects arbitrary, nearly-square or power-of-2, got '" + name + "'");
}

std::uint16_t class_named(Workload& w, Entry& e, const std::string& name) {
  for (std::size_t i = 0; i < w.classes.size(); ++i)
    if (w.classes[i].name == name) return static_cast<std::uint16_t>(i);
  e.fail("no class '" + name + "' (\"classes\" names them)");
}

// One entry of "jobs": `count` copies of a job, or the mix of Sudarsan et al.
void add_jobs(Workload& w, Entry e, std::uint64_t seed) {
  const std::string kind = e.text("kind", "");
  if (kind == "reshape-mix") {
    e.allow({"kind", "jobs", "resizable", "platinum", "mean_arrival_s", "alpha", "scale", "submit", "seed"});
    ReshapeMix mix;
    mix.jobs = e.count("jobs", mix.jobs);
    mix.resizable = e.number("resizable", mix.resizable, 0);
    mix.platinum = e.number("platinum", mix.platinum, 0);
    mix.mean_arrival_s = e.number("mean_arrival_s", mix.mean_arrival_s, 0);
    mix.alpha = e.number("alpha", mix.alpha, 0);
    mix.scale = e.number("scale", mix.scale, 0);
    mix.start_s = e.number("submit", 0, 0);
    mix.seed = static_cast<std::uint64_t>(e.number("seed", static_cast<double>(seed), 0));
    if (mix.resizable > 1 || mix.platinum > 1) e.fail("\"resizable\" and \"platinum\" are shares, from 0 to 1");
    if (!(mix.alpha > 0 && mix.alpha <= 1)) e.fail("\"alpha\" must be in (0, 1]");
    if (!(mix.scale > 0)) e.fail("\"scale\" must be positive");
    auto find = [&](const char* name) -> std::uint16_t {
      for (std::size_t i = 0; i < w.classes.size(); ++i)
        if (w.classes[i].name == name) return static_cast<std::uint16_t>(i);
      w.classes.push_back({name, name == std::string("platinum") ? 1000.0 : 0.0});
      return static_cast<std::uint16_t>(w.classes.size() - 1);
    };
    const std::uint16_t gold = find("gold");
    const std::uint16_t platinum = mix.platinum > 0 ? find("platinum") : gold;
    for (Job& j : reshape_mix(mix, gold, platinum)) {
      j.priority = w.classes[j.klass].priority;
      w.jobs.push_back(std::move(j));
    }
    return;
  }
  if (kind == "traffic-stream") {
    e.allow({"kind", "jobs", "mean_size", "mean_arrival_s", "messages", "message_bytes", "io_share", "walltime", "submit", "seed"});
    TrafficStream stream;
    stream.jobs = e.count("jobs", stream.jobs);
    stream.mean_size = e.number("mean_size", stream.mean_size, 0);
    stream.mean_arrival_s = e.number("mean_arrival_s", stream.mean_arrival_s, 0);
    stream.messages = static_cast<long>(e.count("messages", static_cast<std::size_t>(stream.messages)));
    stream.message_bytes = e.number("message_bytes", stream.message_bytes, 0);
    stream.io_share = e.number("io_share", stream.io_share, 0);
    stream.walltime = e.number("walltime", stream.walltime, 0);
    stream.start_s = e.number("submit", 0, 0);
    stream.seed = static_cast<std::uint64_t>(e.number("seed", static_cast<double>(seed), 0));
    if (stream.io_share > 1) e.fail("\"io_share\" is a share, from 0 to 1");
    if (!(stream.mean_size >= 1)) e.fail("\"mean_size\" must be at least 1");
    if (!(stream.walltime > 0)) e.fail("\"walltime\" must be positive");
    if (w.nodes == 0) e.fail("needs the cluster's \"nodes\" first");
    for (Job& j : traffic_stream(stream, w.nodes)) w.jobs.push_back(std::move(j));
    return;
  }
  Job j;
  if (kind == "rigid") {
    j.kind = JobKind::Rigid;
    e.allow({"kind", "submit", "size", "class", "count", "walltime", "runtime"});
  } else if (kind == "malleable") {
    j.kind = JobKind::Malleable;
    e.allow({"kind", "submit", "size", "class", "count", "walltime", "iterations", "iteration_s", "alpha", "topology",
             "step", "resizable", "redistribution_s"});
  } else if (kind == "application") {
    j.kind = JobKind::Application;
    e.allow({"kind", "submit", "size", "class", "count", "walltime", "resizable", "max_size", "command"});
  } else if (kind == "traffic") {
    j.kind = JobKind::Traffic;
    e.allow({"kind", "submit", "size", "class", "count", "walltime", "messages", "message_bytes", "io_share"});
  } else {
    e.fail("\"kind\" expects rigid, malleable, application, traffic, reshape-mix or traffic-stream, got '" + kind + "'");
  }
  j.submit = e.number("submit", 0, 0);
  j.size = e.count("size", 0);
  if (j.size == 0) e.fail("\"size\" is missing");
  j.klass = class_named(w, e, e.text("class", w.classes.front().name));
  j.priority = w.classes[j.klass].priority;
  switch (j.kind) {
    case JobKind::Rigid:
      j.runtime = e.required("runtime", 0);
      j.walltime = e.number("walltime", j.runtime, 0);
      break;
    case JobKind::Malleable:
      j.iterations = static_cast<long>(e.count("iterations", 0));
      if (j.iterations == 0) e.fail("\"iterations\" is missing");
      j.iteration_s = e.required("iteration_s", 0);
      if (!(j.iteration_s > 0)) e.fail("\"iteration_s\" must be positive");
      j.alpha = e.number("alpha", j.alpha, 0);
      if (!(j.alpha > 0 && j.alpha <= 1)) e.fail("\"alpha\" must be in (0, 1]");
      j.topology = topology_named(e, e.text("topology", "arbitrary"));
      j.step = e.count("step", 1);
      j.resizable = e.boolean("resizable", true);
      j.redistribution_s = e.number("redistribution_s", 0, 0);
      j.walltime = e.required("walltime", 0);
      break;
    case JobKind::Application: {
      j.walltime = e.required("walltime", 0);
      j.resizable = e.boolean("resizable", true);
      j.max_size = e.count("max_size", 0);
      if (j.max_size != 0 && j.max_size < j.size) e.fail("\"max_size\" is below \"size\"");
      const json& command = e.at("command");
      if (!command.is_array() || command.empty()) e.fail("\"command\" expects a list of words, the program first");
      for (const json& word : command) {
        if (!word.is_string()) e.fail("\"command\" expects strings, got " + word.dump());
        j.command.push_back(word.get<std::string>());
      }
      break;
    }
    case JobKind::Traffic:
      j.messages = static_cast<long>(e.count("messages", 0));
      if (j.messages == 0) e.fail("\"messages\" is missing");
      j.message_bytes = e.required("message_bytes", 0);
      if (!(j.message_bytes > 0)) e.fail("\"message_bytes\" must be positive");
      j.io_share = e.number("io_share", 0, 0);
      if (j.io_share > 1) e.fail("\"io_share\" is a share, from 0 to 1");
      j.walltime = e.required("walltime", 0);
      break;
  }
  if (!(j.walltime > 0)) e.fail("\"walltime\" must be positive");
  const std::size_t copies = e.count("count", 1);
  for (std::size_t c = 0; c < copies; ++c) w.jobs.push_back(j);
}

}  // namespace

std::vector<Job> reshape_mix(const ReshapeMix& mix, std::uint16_t gold, std::uint16_t platinum) {
  struct Size {
    std::size_t nodes, power_of_two;
    double walltime, iteration_s;
  };
  constexpr Size kSizes[] = {{35, 32, 156, 8}, {81, 64, 240, 20}, {136, 128, 324, 32}};
  std::mt19937_64 rng(mix.seed);
  const std::size_t n = mix.jobs;
  auto shares = [&](double share) {  // exactly round(share·n) of the jobs, at random
    std::vector<bool> v(n, false);
    std::fill_n(v.begin(), static_cast<std::size_t>(std::lround(share * static_cast<double>(n))), true);
    shuffle(v, rng);
    return v;
  };
  std::vector<int> sizes(n);
  for (std::size_t i = 0; i < n; ++i) sizes[i] = static_cast<int>(i * 3 / n);  // thirds
  shuffle(sizes, rng);
  const std::vector<bool> resizable = shares(mix.resizable), high = shares(mix.platinum);
  std::vector<Job> jobs(n);
  double t = mix.start_s;
  for (std::size_t i = 0; i < n; ++i) {
    const Size& s = kSizes[sizes[i]];
    Job& j = jobs[i];
    j.id = i + 1;
    j.kind = JobKind::Malleable;
    if (i > 0) t += exponential(rng, mix.mean_arrival_s);
    j.submit = t;
    const double u = uniform(rng);
    j.topology = u < 0.6 ? ProcessorTopology::Arbitrary : u < 0.9 ? ProcessorTopology::NearlySquare : ProcessorTopology::PowerOfTwo;
    const std::size_t nodes = j.topology == ProcessorTopology::PowerOfTwo ? s.power_of_two : s.nodes;
    j.size = std::max<std::size_t>(1, static_cast<std::size_t>(std::lround(static_cast<double>(nodes) * mix.scale)));
    j.step = std::max<std::size_t>(1, static_cast<std::size_t>(std::lround(10 * mix.scale)));
    j.walltime = s.walltime;
    j.iterations = 7;
    j.iteration_s = s.iteration_s;
    j.alpha = mix.alpha;
    j.resizable = resizable[i];
    j.klass = high[i] ? platinum : gold;
  }
  return jobs;
}

std::vector<Job> traffic_stream(const TrafficStream& stream, std::size_t nodes) {
  std::mt19937_64 rng(stream.seed);
  std::vector<Job> jobs(stream.jobs);
  double t = stream.start_s;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    Job& j = jobs[i];
    j.id = i + 1;
    j.kind = JobKind::Traffic;
    if (i > 0) t += exponential(rng, stream.mean_arrival_s);
    j.submit = t;
    // Exponential, rounded up: a mean of 16 gives sizes from 1 with a mean near 16.5.
    const double size = std::ceil(exponential(rng, stream.mean_size));
    j.size = std::clamp<std::size_t>(static_cast<std::size_t>(size), 1, nodes);
    j.walltime = stream.walltime;
    j.messages = stream.messages;
    j.message_bytes = stream.message_bytes;
    j.io_share = stream.io_share;
  }
  return jobs;
}

Workload from_swf(const SwfTrace& trace, const WorkloadOptions& options) {
  Workload w;
  w.nodes = options.nodes ? options.nodes : static_cast<std::size_t>(std::max(0L, trace.max_procs > 0 ? trace.max_procs : trace.max_nodes));
  if (w.nodes == 0) w.nodes = options.fallback_nodes;
  // Per-class figures by the trace's queues (named by the header, else "queue N"); jobs of no known
  // queue make a class of their own.
  long top = static_cast<long>(trace.queues.size()) - 1;
  bool unknown = false;
  for (const SwfJob& s : trace.jobs) top = std::max(top, std::min(s.queue, 255L)), unknown |= s.queue < 0 || s.queue > 255;
  for (long q = 0; q <= top; ++q) {
    const std::string named = q < static_cast<long>(trace.queues.size()) ? trace.queues[q] : "";
    w.classes.push_back({named.empty() ? "queue " + std::to_string(q) : named, 0});
  }
  const auto unknown_class = static_cast<std::uint16_t>(w.classes.size());
  if (unknown || w.classes.empty()) w.classes.push_back({"unknown queue", 0});
  for (const SwfJob& s : trace.jobs) {
    // The archive's conventions: -1 is unknown. The size is the processors allocated, else those
    // requested; a job with no known size or run time cannot be replayed. Without a requested time
    // the run time stands for it (a perfect estimate), so the job is never killed.
    const long size = s.allocated > 0 ? s.allocated : s.requested;
    if (size <= 0 || s.runtime < 0) {
      if (options.strict)
        throw std::runtime_error("job " + std::to_string(s.number) + " has no known " + (size <= 0 ? "size" : "run time"));
      ++w.unusable;
      continue;
    }
    Job j;
    j.id = static_cast<std::uint64_t>(std::max(0L, s.number));
    j.kind = JobKind::Rigid;
    j.submit = s.submit;
    j.size = static_cast<std::size_t>(size);
    j.runtime = s.runtime;
    j.walltime = s.requested_time > 0 ? s.requested_time : s.runtime;
    j.klass = s.queue >= 0 && s.queue <= 255 ? static_cast<std::uint16_t>(s.queue) : unknown_class;
    w.jobs.push_back(std::move(j));
  }
  sort_by_submit(w.jobs);
  fit(w, options.strict, "the trace");
  return w;
}

Workload from_json(const std::string& text, const std::string& name, const WorkloadOptions& options) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(name + ": not JSON: " + e.what());
  }
  Entry top(j, name);
  top.allow({"nodes", "seed", "classes", "jobs", "arrivals"});
  Workload w;
  w.nodes = options.nodes ? options.nodes : top.count("nodes", options.fallback_nodes);
  const auto seed = static_cast<std::uint64_t>(top.number("seed", 1, 0));
  if (top.has("classes")) {
    const json& classes = top.at("classes");
    if (!classes.is_array() || classes.empty()) top.fail("\"classes\" expects a list of {\"name\", \"priority\"}");
    for (std::size_t i = 0; i < classes.size(); ++i) {
      Entry c(classes[i], name + ": classes[" + std::to_string(i) + "]");
      c.allow({"name", "priority"});
      JobClass k{c.text("name", ""), c.number("priority", 0)};
      if (k.name.empty()) c.fail("\"name\" is missing");
      w.classes.push_back(std::move(k));
    }
  } else {
    w.classes.push_back({"normal", 0});
  }
  if (!top.has("jobs") || !top.at("jobs").is_array()) top.fail("\"jobs\" expects a list of jobs");
  const json& jobs = top.at("jobs");
  for (std::size_t i = 0; i < jobs.size(); ++i) add_jobs(w, Entry(jobs[i], name + ": jobs[" + std::to_string(i) + "]"), seed + i);
  if (top.has("arrivals")) {  // a Poisson process replaces the submit times, in list order
    Entry a(top.at("arrivals"), name + ": arrivals");
    a.allow({"mean_s", "start_s"});
    const double mean = a.required("mean_s", 0);
    const double start = a.number("start_s", 0, 0);
    std::mt19937_64 rng(seed);
    double t = start;
    for (std::size_t i = 0; i < w.jobs.size(); ++i) w.jobs[i].submit = t += i == 0 ? 0 : exponential(rng, mean);
  }
  for (std::size_t i = 0; i < w.jobs.size(); ++i) w.jobs[i].id = i + 1;
  sort_by_submit(w.jobs);
  fit(w, options.strict, name);
  return w;
}

Workload load_workload(const std::string& path, const WorkloadOptions& options) {
  const auto ends = [&](const char* s) { return path.size() >= std::strlen(s) && path.ends_with(s); };
  if (ends(".swf") || ends(".swf.gz")) return from_swf(read_swf(path), options);
  if (!ends(".json")) throw std::runtime_error(path + ": a workload is a .swf, .swf.gz or .json file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return from_json(text.str(), path, options);
}

}  // namespace dps::cluster
