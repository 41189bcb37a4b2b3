// A real trace against a simulated one: each side tallied by operation kind, phase name and node
// pair, the tallies joined by key (zeros where one side lacks it), then sorted by difference.
#include "dps/trace/comparison.hpp"

#include "dps/trace/statistics.hpp"
#include "dps/trace/json.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace dps::trace {

namespace {

struct Tally {
  double count = 0, total = 0;
};

// Keyed by name: the two traces intern names in their own order.
std::map<std::string, Tally> tally_operations(const Trace& t) {
  std::map<std::pair<NameId, NameId>, Tally> by_id;  // no string built per step
  for (const Step& s : t.steps) {
    Tally& x = by_id[{s.collection, s.operation}];
    x.count += 1;
    x.total += s.end - s.start;
  }
  std::map<std::string, Tally> out;
  for (const auto& [ids, x] : by_id) {
    Tally& y = out[t.names[ids.first] + "/" + t.names[ids.second]];
    y.count += x.count;
    y.total += x.total;
  }
  return out;
}

std::map<std::string, Tally> tally_phases(const Trace& t, double run_end) {
  std::map<std::string, Tally> out;
  for (const PhaseSpan& span : phase_spans(t, run_end)) {
    Tally& x = out[t.names[span.name]];
    x.count += 1;
    x.total += span.end - span.begin;
  }
  return out;
}

struct PairTally {
  double count = 0, bytes = 0, total = 0;
};
using NodePair = std::pair<std::uint32_t, std::uint32_t>;  // from, to

std::map<NodePair, PairTally> tally_pairs(const Trace& t) {
  std::map<NodePair, PairTally> out;
  for (const Transfer& x : t.transfers) {
    PairTally& p = out[{x.from, x.to}];
    p.count += 1;
    p.bytes += static_cast<double>(x.bytes);
    p.total += x.end - x.start;
  }
  return out;
}

// Calls `row(key, real, simulated)` for every key of either map, in key order, with a default value
// for the side that lacks it.
template <class Key, class Value, class Row>
void join(const std::map<Key, Value>& real, const std::map<Key, Value>& simulated, Row row) {
  std::map<Key, std::pair<Value, Value>> both;
  for (const auto& [key, v] : real) both[key].first = v;
  for (const auto& [key, v] : simulated) both[key].second = v;
  for (const auto& [key, v] : both) row(key, v.first, v.second);
}

std::vector<DurationRow> duration_rows(const std::map<std::string, Tally>& real,
                                       const std::map<std::string, Tally>& simulated) {
  std::vector<DurationRow> rows;
  const auto mean = [](const Tally& x) { return x.count > 0 ? x.total / x.count : 0.0; };
  join(real, simulated, [&](const std::string& name, const Tally& r, const Tally& s) {
    rows.push_back({name, {r.count, s.count}, {r.total, s.total}, {mean(r), mean(s)}});
  });
  std::stable_sort(rows.begin(), rows.end(), [](const DurationRow& a, const DurationRow& b) {
    return std::abs(a.total.difference()) > std::abs(b.total.difference());
  });
  return rows;
}

// Counts and bytes are whole numbers: printed as integers, exact beyond %.9g's digits.
std::string object(const Versus& v, bool whole) {
  const auto value = [whole](double x) {
    return whole && std::isfinite(x) ? std::to_string(static_cast<long long>(x)) : json::number(x);
  };
  return "{\"real\": " + value(v.real) + ", \"simulated\": " + value(v.simulated) +
         ", \"difference\": " + value(v.difference()) + ", \"relative\": " + json::number(v.relative()) + "}";
}

std::string object(const DurationRow& r, const char* count) {
  return "{\"name\": " + json::quoted(r.name) + ", \"" + count + "\": " + object(r.count, true) +
         ", \"total_s\": " + object(r.total, false) + ", \"mean_s\": " + object(r.mean, false) + "}";
}

std::string object(const PairRow& p) {
  return "{\"from\": " + std::to_string(p.from) + ", \"to\": " + std::to_string(p.to) +
         ", \"transfers\": " + object(p.count, true) + ", \"bytes\": " + object(p.bytes, true) +
         ", \"total_s\": " + object(p.total, false) + "}";
}

template <class Row, class Write>
std::string array(const std::vector<Row>& rows, Write write) {
  std::string out = "[";
  for (std::size_t i = 0; i < rows.size(); ++i) out += (i ? ", " : "") + write(rows[i]);
  return out + "]";
}

}  // namespace

Comparison compare(const Trace& real, const Trace& simulated) {
  Comparison c;
  const RunSpan r = run_span(real), s = run_span(simulated);
  c.duration = {r.end - r.start, s.end - s.start};
  c.operations = duration_rows(tally_operations(real), tally_operations(simulated));
  c.phases = duration_rows(tally_phases(real, r.end), tally_phases(simulated, s.end));
  join(tally_pairs(real), tally_pairs(simulated), [&](const NodePair& key, const PairTally& a, const PairTally& b) {
    c.pairs.push_back({key.first, key.second, {a.count, b.count}, {a.bytes, b.bytes}, {a.total, b.total}});
  });
  std::stable_sort(c.pairs.begin(), c.pairs.end(), [](const PairRow& a, const PairRow& b) {
    const double da = std::abs(a.bytes.difference()), db = std::abs(b.bytes.difference());
    if (da != db) return da > db;
    return std::abs(a.total.difference()) > std::abs(b.total.difference());
  });
  return c;
}

std::string to_json(const Comparison& c) {
  return "{\"duration_s\": " + object(c.duration, false) +
         ", \"operations\": " + array(c.operations, [](const DurationRow& r) { return object(r, "steps"); }) +
         ", \"phases\": " + array(c.phases, [](const DurationRow& r) { return object(r, "spans"); }) +
         ", \"pairs\": " + array(c.pairs, [](const PairRow& p) { return object(p); }) + "}";
}

}  // namespace dps::trace
