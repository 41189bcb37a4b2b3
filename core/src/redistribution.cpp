// The redistribution plan: pieces per dimension, messages per superblock position, a contention-free
// schedule by bipartite edge colouring.
#include "dps/redistribution_plan.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>
#include <tuple>

namespace dps {

namespace {

// [global, global + length) held by `from` at `from_local` and by `to` at `to_local`.
struct Piece {
  std::size_t global, length;
  std::uint32_t from, to;
  std::size_t from_local, to_local;
};

std::vector<Piece> overlap(const Distribution& from, const Distribution& to) {
  std::vector<Piece> pieces;
  auto a = from.runs().begin(), b = to.runs().begin();
  std::size_t at = 0;
  while (a != from.runs().end() && b != to.runs().end()) {
    const std::size_t end = std::min(a->global + a->length, b->global + b->length);
    pieces.push_back({at, end - at, a->part, b->part, a->local + (at - a->global), b->local + (at - b->global)});
    at = end;
    if (at == a->global + a->length) ++a;
    if (at == b->global + b->length) ++b;
  }
  return pieces;
}

// The pieces of one dimension grouped into what one message carries: the same parts at the same
// position in every period of the joint pattern.
struct Group {
  std::uint32_t from, to;
  std::vector<Piece> pieces;
};
std::vector<Group> groups(const Distribution& from, const Distribution& to, std::size_t& period) {
  period = std::min(std::lcm(from.period(), to.period()), from.extent());
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::size_t>, std::size_t> index;
  std::vector<Group> result;
  for (const Piece& p : overlap(from, to)) {
    const auto key = std::make_tuple(p.from, p.to, period ? p.global % period : 0);
    auto [at, added] = index.try_emplace(key, result.size());
    if (added) result.push_back({p.from, p.to, {}});
    result[at->second].pieces.push_back(p);
  }
  return result;
}

// Steps in which every source sends at most one message and every destination receives at most one:
// a proper edge colouring of the bipartite multigraph of messages, with as many colours as its
// largest degree (König). Each uncoloured edge (u, v) takes a colour a free at u; if a is taken at v,
// the a/b path from v (b free at v) is swapped first, which frees a at v.
std::vector<std::vector<std::uint32_t>> colour(const std::vector<Transfer>& transfers, std::size_t sources,
                                               std::size_t destinations) {
  std::vector<std::size_t> out(sources), in(destinations);
  for (const Transfer& t : transfers)
    if (t.from != t.to) ++out[t.from], ++in[t.to];
  const std::size_t degree =
      std::max(*std::max_element(out.begin(), out.end()), *std::max_element(in.begin(), in.end()));
  constexpr std::int64_t kFree = -1;
  std::vector<std::vector<std::int64_t>> at_source(sources, std::vector<std::int64_t>(degree, kFree));
  std::vector<std::vector<std::int64_t>> at_destination(destinations, std::vector<std::int64_t>(degree, kFree));
  std::vector<std::size_t> colour_of(transfers.size(), 0);
  const auto free_colour = [&](const std::vector<std::int64_t>& used) {
    return static_cast<std::size_t>(std::find(used.begin(), used.end(), kFree) - used.begin());
  };
  for (std::size_t e = 0; e < transfers.size(); ++e) {
    const std::uint32_t u = transfers[e].from, v = transfers[e].to;
    if (u == v) continue;
    const std::size_t a = free_colour(at_source[u]);
    if (at_destination[v][a] != kFree) {
      const std::size_t b = free_colour(at_destination[v]);
      // The path from v: an a-edge to a source, a b-edge to a destination, and so on.
      std::vector<std::size_t> path;
      std::uint32_t vertex = v;
      bool at_dest = true;
      for (std::size_t c = a;;) {
        const std::int64_t edge = at_dest ? at_destination[vertex][c] : at_source[vertex][c];
        if (edge == kFree) break;
        path.push_back(static_cast<std::size_t>(edge));
        vertex = at_dest ? transfers[edge].from : transfers[edge].to;
        at_dest = !at_dest;
        c = c == a ? b : a;
      }
      for (std::size_t edge : path) {
        at_source[transfers[edge].from][colour_of[edge]] = kFree;
        at_destination[transfers[edge].to][colour_of[edge]] = kFree;
      }
      for (std::size_t edge : path) {
        colour_of[edge] = colour_of[edge] == a ? b : a;
        at_source[transfers[edge].from][colour_of[edge]] = static_cast<std::int64_t>(edge);
        at_destination[transfers[edge].to][colour_of[edge]] = static_cast<std::int64_t>(edge);
      }
    }
    colour_of[e] = a;
    at_source[u][a] = static_cast<std::int64_t>(e);
    at_destination[v][a] = static_cast<std::int64_t>(e);
  }
  std::vector<std::vector<std::uint32_t>> steps(std::max<std::size_t>(degree, 1));
  for (std::size_t e = 0; e < transfers.size(); ++e)
    steps[transfers[e].from == transfers[e].to ? 0 : colour_of[e]].push_back(static_cast<std::uint32_t>(e));
  if (steps.front().empty()) steps.clear();  // nothing to move at all
  return steps;
}

}  // namespace

std::size_t RedistributionPlan::moved() const noexcept {
  std::size_t elements = 0;
  for (const Transfer& t : transfers)
    if (t.from != t.to) elements += t.elements;
  return elements;
}

RedistributionPlan plan_redistribution(const Layout& from, const Layout& to) {
  if (from.rows().extent() != to.rows().extent() || from.cols().extent() != to.cols().extent())
    throw std::invalid_argument("dps::plan_redistribution: a " + std::to_string(from.rows().extent()) + " x " +
                                std::to_string(from.cols().extent()) + " array cannot become " +
                                std::to_string(to.rows().extent()) + " x " + std::to_string(to.cols().extent()));
  RedistributionPlan plan{from, to, 0, 0, {}, {}};
  const std::vector<Group> rows = groups(from.rows(), to.rows(), plan.row_period);
  const std::vector<Group> cols = groups(from.cols(), to.cols(), plan.col_period);
  for (const Group& r : rows)
    for (const Group& c : cols) {
      Transfer t{static_cast<std::uint32_t>(r.from * from.cols().parts() + c.from),
                 static_cast<std::uint32_t>(r.to * to.cols().parts() + c.to), {}, 0};
      for (const Piece& pr : r.pieces)
        for (const Piece& pc : c.pieces) {
          t.rects.push_back({pr.from_local, pc.from_local, pr.to_local, pc.to_local, pr.length, pc.length});
          t.elements += pr.length * pc.length;
        }
      plan.transfers.push_back(std::move(t));
    }
  plan.steps = colour(plan.transfers, from.parts(), to.parts());
  return plan;
}

}  // namespace dps
