// A thread's records for its recovery (recovery_log.hpp): numbered links, kept copies, admission.
#include "dps/kernel/recovery_log.hpp"

#include "dps/kernel/graph_core.hpp"
#include "dps/wire_archive.hpp"

#include <algorithm>
#include <span>

namespace dps::detail {

namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) noexcept {  // splitmix64's finalizer over a running hash
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

}  // namespace

std::uint64_t identity(const Envelope& e) noexcept {
  std::uint64_t h = mix(e.graph ? e.graph->id : 0, e.vertex);
  h = mix(h, e.call);
  h = mix(h, e.seq);
  for (std::uint32_t i = 0; i < e.frames.size(); ++i) h = mix(h, e.frames[i].id);
  return h;
}

Envelope* rejoin_message(std::uint64_t from, const std::vector<std::pair<std::uint64_t, Envelope*>>& copies,
                         std::vector<FrameClaim> claims, bool rebuilt_too) {
  auto* e = new Envelope;
  e->kind = Message::Rejoin;
  e->peer = from;
  e->count = static_cast<std::int64_t>(copies.size());
  e->seq = copies.empty() ? 0 : copies.back().second->stamp.link;  // copies come in link order
  e->credit = rebuilt_too;
  e->payload = Payload::local(std::move(claims));
  return e;
}

Envelope* KeptObject::envelope() const {
  auto* e = new Envelope;
  e->graph = graph;
  e->vertex = vertex;
  e->call = call;
  e->seq = seq;
  e->frames = frames;
  e->stamp = stamp;
  e->payload = payload->clone();
  return e;
}

// --- Outbox ---

void Outbox::send(Envelope& e, std::uint64_t from, std::uint64_t to, std::uint32_t epoch, std::uint32_t committed,
                  std::uint64_t time) {
  e.stamp = {from, std::uint64_t{incarnation_} << Stamp::kIncarnationShift | ++numbered_[to], epoch, committed, base_,
             time};
  kept_[to].push_back(
      {e.stamp, e.graph, e.vertex, e.call, e.seq, e.frames, std::make_shared<const Payload>(e.payload.clone())});
}

void Outbox::covered(std::uint64_t to, std::uint32_t incarnation, std::uint64_t number) {
  auto it = kept_.find(to);
  if (it == kept_.end()) return;
  const std::uint64_t upto = std::uint64_t{incarnation} << Stamp::kIncarnationShift | number;
  std::erase_if(it->second, [&](const KeptObject& k) { return k.stamp.incarnation() == incarnation && k.stamp.link <= upto; });
  if (it->second.empty()) kept_.erase(it);
}

std::vector<std::pair<std::uint64_t, Envelope*>> Outbox::copies(std::uint64_t to) const {
  std::vector<std::pair<std::uint64_t, Envelope*>> out;
  for (const auto& [receiver, objects] : kept_)
    if (to == 0 || receiver == to)
      for (const KeptObject& k : objects) out.emplace_back(receiver, k.envelope());
  return out;
}

void Outbox::restart(std::uint32_t incarnation, std::uint32_t base) {
  incarnation_ = incarnation;
  base_ = base;
  numbered_.clear();
}

std::size_t Outbox::kept() const noexcept {
  std::size_t n = 0;
  for (const auto& [to, objects] : kept_) n += objects.size();
  return n;
}

std::size_t Outbox::bytes() const noexcept {
  std::size_t n = 0;
  for (const auto& [to, objects] : kept_)
    for (const KeptObject& k : objects) n += k.payload->wire_size() + sizeof k;
  return n;
}

// --- Inbox ---

Inbox::Verdict Inbox::admit(Envelope* e, bool out_of_turn) {
  const Stamp& s = e->stamp;
  if (s.link == 0) return Verdict::Handle;
  // A rebuilt sender numbers afresh: what waited for objects of its earlier lives it sends again.
  std::uint32_t& latest = latest_[s.from];
  if (s.incarnation() > latest) {
    latest = s.incarnation();
    for (auto it = early_.lower_bound({s.from, 0}); it != early_.end() && it->first.first == s.from;) {
      if (it->second->stamp.incarnation() < latest) {
        delete it->second;
        it = early_.erase(it);
      } else {
        ++it;
      }
    }
  }
  const std::pair<std::uint64_t, std::uint32_t> link{s.from, s.incarnation()};
  std::uint64_t& handled = record_.handled[link];
  // Handled before: sent twice by one life of its sender, or again by a rebuilt one.
  const Verdict handled_before = s.earlier_life ? Verdict::Again : Verdict::Duplicate;
  if (s.number() <= handled) return handled_before;
  if (s.number() > handled + 1) {
    if (out_of_turn) {  // its replay's script says so; a rebuilt sender's links follow another order
      if (!record_.ahead[link].insert(s.number()).second) return handled_before;
    } else {
      if (const auto ahead = record_.ahead.find(link);
          ahead != record_.ahead.end() && ahead->second.contains(s.number()))
        return handled_before;
      auto [it, fresh] = early_.try_emplace({s.from, s.link}, e);
      return fresh ? Verdict::Early : Verdict::Duplicate;
    }
  } else {
    handled = s.number();
    if (const auto ahead = record_.ahead.find(link); ahead != record_.ahead.end()) {
      while (ahead->second.erase(handled + 1)) ++handled;
      if (ahead->second.empty()) record_.ahead.erase(ahead);
    }
  }
  // Objects its sender may send again once rebuilt (under a new incarnation) are remembered until its
  // checkpoints make them final.
  const auto it = record_.seen.find(s.from);
  if (s.epoch == Stamp::kFinal && it == record_.seen.end()) return Verdict::Handle;
  Record::Seen& seen = it != record_.seen.end() ? it->second : record_.seen[s.from];
  // Final: sent by this incarnation before a checkpoint it holds, or by an earlier one before the
  // checkpoint the next one was rebuilt from (what it sent after, the next one sends again, and
  // that sending refreshes the identity; a later rebuild may come before it does).
  if (s.incarnation() > 0) seen.bases[s.incarnation()] = s.base;
  const auto final = [&](Record::Sent sent) {
    if (sent.incarnation == s.incarnation()) return sent.epoch < s.committed;
    const auto next = seen.bases.find(sent.incarnation + 1);
    return sent.incarnation < s.incarnation() && next != seen.bases.end() && sent.epoch < next->second;
  };
  while (!seen.order.empty()) {
    const auto [sent, id] = seen.order.front();
    const auto at = seen.ids.find(id);
    const bool stale = at == seen.ids.end() || !(at->second == sent);
    if (!stale && !final(sent)) break;
    if (!stale) seen.ids.erase(at);
    seen.order.pop_front();
  }
  const std::uint64_t id = identity(*e);
  const Record::Sent now{s.incarnation(), s.epoch};
  const auto [at, fresh] = seen.ids.try_emplace(id, now);
  if (s.epoch == Stamp::kFinal) {  // it never comes again
    seen.ids.erase(at);
  } else if (!fresh) {
    at->second = now;
    seen.order.emplace_back(now, id);
  } else {
    seen.order.emplace_back(now, id);
  }
  return fresh ? Verdict::Handle : Verdict::Again;
}

Envelope* Inbox::next(const Stamp& handled) {
  const auto done = record_.handled.find({handled.from, handled.incarnation()});
  if (done == record_.handled.end()) return nullptr;
  auto it = early_.find(
      {handled.from, std::uint64_t{handled.incarnation()} << Stamp::kIncarnationShift | (done->second + 1)});
  if (it == early_.end()) return nullptr;
  Envelope* e = it->second;
  early_.erase(it);
  return e;
}

void Inbox::restore(const Record& record) {
  clear_early();
  record_ = record;
  latest_.clear();
  for (const auto& [key, number] : record_.handled)
    latest_[key.first] = std::max(latest_[key.first], key.second);
}

std::vector<Envelope*> Inbox::take_early() {
  std::vector<Envelope*> out;
  for (auto& [key, e] : early_) out.push_back(e);
  early_.clear();
  return out;
}

void Inbox::clear_early() {
  for (auto& [key, e] : early_) delete e;
  early_.clear();
}

std::size_t Checkpoint::bytes() const noexcept {
  std::size_t n = state.size() + outbox.bytes() + inbox.handled.size() * 20;
  for (const auto& [from, seen] : inbox.seen) n += seen.order.size() * 12;
  for (const KeptFrame& f : frames) n += 40 + f.forwarders.size() * 8;
  return n + dones.size() * 24 + log.entries() * 16;
}

}  // namespace dps::detail
