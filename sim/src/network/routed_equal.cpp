// Equal sharing on routes: each of a link's n flows gets capacity / n; a flow goes at the least of its
// shares, bound to that link. A flow is filed, on every other link of its route, in the bucket of the
// flows bound where it is, so that a change of shares touches only the flows it moves:
//   - a flow joins: its links' shares fall; on each, the buckets bound to a link of larger share move
//     there, all their flows at once;
//   - a flow leaves: its links' shares rise; the flows bound to one of them that cross a link of
//     smaller share are the buckets of its heap whose link's share is below its own, found first.
// Each link's buckets are few (the distinct bottlenecks of its flows), so an event costs about its
// route's length, however many flows share the links.
#include "routed.hpp"

#include <cassert>

namespace dps::sim::network {

LinkId RoutedEqual::least(FlowId id) const {
  const Flow& f = flows_[id];
  LinkId best = f.route.front();
  for (LinkId l : f.route)
    if (links_[l].rate < links_[best].rate) best = l;
  return best;
}

std::uint32_t RoutedEqual::bucket(LinkId link, LinkId bound) {
  for (std::uint32_t b : on_link_[link])
    if (buckets_[b].bound == bound) return b;
  std::uint32_t b;
  if (free_.empty()) {
    b = static_cast<std::uint32_t>(buckets_.size());
    buckets_.emplace_back();
  } else {
    b = free_.back();
    free_.pop_back();
  }
  Bucket& made = buckets_[b];
  made.link = link, made.bound = bound, made.share = links_[link].rate;
  made.at_link = static_cast<std::uint32_t>(on_link_[link].size());
  on_link_[link].push_back(b);
  heap::insert(watch_[bound], b, by_share(), watch_at());
  return b;
}

void RoutedEqual::release(std::uint32_t b) {
  Bucket& gone = buckets_[b];
  std::vector<std::uint32_t>& list = on_link_[gone.link];
  const std::uint32_t moved = list.back();
  list[gone.at_link] = moved;
  buckets_[moved].at_link = gone.at_link;
  list.pop_back();
  heap::remove(watch_[gone.bound], gone.at_watch, by_share(), watch_at());
  gone.link = gone.bound = kNone;
  free_.push_back(b);
}

void RoutedEqual::file(FlowId id, LinkId to) {
  Flow& f = flows_[id];
  f.filed = to;
  f.bucket.assign(f.route.size(), kNone);
  f.in_bucket.assign(f.route.size(), kNone);
  for (std::size_t k = 0; k < f.route.size(); ++k) {
    if (f.route[k] == to) continue;
    const std::uint32_t b = bucket(f.route[k], to);
    f.bucket[k] = b;
    f.in_bucket[k] = static_cast<std::uint32_t>(buckets_[b].flows.size());
    buckets_[b].flows.push_back({id, static_cast<std::uint32_t>(k)});
  }
}

void RoutedEqual::unfile(FlowId id) {
  Flow& f = flows_[id];
  if (f.filed == kNone) return;
  for (std::size_t k = 0; k < f.route.size(); ++k) {
    const std::uint32_t b = f.bucket[k];
    if (b == kNone) continue;
    std::vector<Entry>& list = buckets_[b].flows;
    const Entry moved = list.back();
    list[f.in_bucket[k]] = moved;
    flows_[moved.flow].in_bucket[moved.hop] = f.in_bucket[k];
    list.pop_back();
    if (list.empty()) release(b);
  }
  f.filed = kNone;
}

void RoutedEqual::move(FlowId id, LinkId to) {
  if (flows_[id].filed != to) {
    unfile(id);
    file(id, to);
  }
  rebind(id, to);
}

void RoutedEqual::reshare(std::span<const LinkId> changed, FlowId joined) {
  reshare_buckets(changed, joined);
#ifndef NDEBUG  // the buckets' bookkeeping is subtle: debug builds check its outcome, every flow at its least share
  for (LinkId l : changed)
    for (const Entry& e : links_[l].flows) assert(links_[flows_[e.flow].bound].rate <= links_[least(e.flow)].rate);
#endif
}

void RoutedEqual::reshare_buckets(std::span<const LinkId> changed, FlowId joined) {
  if (on_link_.size() < links_.size()) on_link_.resize(links_.size()), watch_.resize(links_.size());
  // The changed links' shares, and their buckets' places in the heaps of the links they are bound to:
  // one key at a time, so that each sift finds the rest of its heap in order.
  for (LinkId l : changed) {
    Link& link = links_[l];
    link.rate = link.flows.empty() ? 0.0 : link.capacity / static_cast<double>(link.flows.size());
    for (std::uint32_t b : on_link_[l]) {
      Bucket& bucket = buckets_[b];
      std::vector<std::uint32_t>& heap = watch_[bucket.bound];
      const bool fell = link.rate < bucket.share;
      bucket.share = link.rate;
      if (fell) heap::sift_up(heap, bucket.at_watch, by_share(), watch_at());
      else heap::sift_down(heap, bucket.at_watch, by_share(), watch_at());
    }
  }
  if (joined != kNone) {
    flows_[joined].filed = kNone;
    move(joined, least(joined));
    for (LinkId l : changed) {
      const double share = links_[l].rate;
      const std::vector<std::uint32_t>& list = on_link_[l];
      for (std::size_t i = 0; i < list.size();) {
        const std::uint32_t b = list[i];
        if (links_[buckets_[b].bound].rate <= share) {
          ++i;
          continue;
        }
        // All its flows go at this link's share from now on. The last one's move releases the bucket
        // (list[i] becomes another), and a bucket made meanwhile is never on this link.
        while (buckets_[b].link == l) move(buckets_[b].flows.back().flow, l);
      }
    }
    return;
  }
  for (LinkId l : changed) {
    const double share = links_[l].rate;
    const std::vector<std::uint32_t>& heap = watch_[l];
    while (!heap.empty() && buckets_[heap.front()].share < share) {
      // Its flows cross a link of smaller share: each goes to its least. A bucket made meanwhile is
      // never bound to this link.
      const std::uint32_t b = heap.front();
      while (buckets_[b].link != kNone && buckets_[b].bound == l) {
        const FlowId f = buckets_[b].flows.back().flow;
        move(f, least(f));
      }
    }
  }
}

}  // namespace dps::sim::network
