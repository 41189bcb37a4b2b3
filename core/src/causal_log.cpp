// What a thread knows of the orders in which threads handled their objects (causal_log.hpp).
#include "dps/kernel/causal_log.hpp"

#include <algorithm>

namespace dps::detail {

namespace {

void trim(CausalLog::Known& k) {
  while (k.first < k.stable && !k.entries.empty()) {
    k.entries.pop_front();
    ++k.first;
  }
  if (k.entries.empty()) k.first = std::max(k.first, k.stable);
}

}  // namespace

void CausalLog::record(std::uint64_t owner, std::uint64_t index, const Determinant& d) {
  Known& k = known_[owner];
  if (index == k.first + k.entries.size()) k.entries.push_back(d);  // a prefix from its held checkpoint on
}

void CausalLog::learn(const Determinants& news, std::uint64_t but) {
  for (const auto& [owner, count] : news.stable) stable(owner, count);
  for (const Determinants::Run& run : news.runs)
    if (run.owner != but)
      for (std::size_t i = 0; i < run.entries.size(); ++i) record(run.owner, run.first + i, run.entries[i]);
}

void CausalLog::stable(std::uint64_t owner, std::uint64_t count) {
  Known& k = known_[owner];
  if (count <= k.stable) return;
  k.stable = count;
  trim(k);
}

std::unique_ptr<Determinants> CausalLog::news_for(std::uint64_t to, bool its_own) {
  std::unique_ptr<Determinants> news;
  auto& told = told_[to];
  for (const auto& [owner, k] : known_) {
    if (owner == to && !its_own) continue;
    Told& t = told[owner];
    const std::uint64_t end = k.first + k.entries.size();
    const std::uint64_t from = std::max(t.upto, k.first);
    const bool entries = end > from, stable = k.stable > t.stable;
    if (!entries && !stable) continue;
    if (!news) news = std::make_unique<Determinants>();
    if (entries) {
      news->runs.push_back(
          {owner, from, {k.entries.begin() + static_cast<std::ptrdiff_t>(from - k.first), k.entries.end()}});
      t.upto = end;
    }
    if (stable) {
      news->stable.emplace_back(owner, k.stable);
      t.stable = k.stable;
    }
  }
  return news;
}

std::size_t CausalLog::entries() const noexcept {
  std::size_t n = 0;
  for (const auto& [owner, k] : known_) n += k.entries.size();
  return n;
}

void ReplayScript::learn(const Determinants& news, std::uint64_t owner) {
  for (const Determinants::Run& run : news.runs) {
    if (run.owner != owner) continue;
    for (std::size_t i = 0; i < run.entries.size(); ++i)
      if (run.first + i >= next_) known_.try_emplace(run.first + i, run.entries[i]);
  }
}

bool ReplayScript::names(const Determinant& d) const {
  return std::ranges::any_of(known_, [&](const auto& entry) { return entry.first > next_ && entry.second == d; });
}

const Determinant* ReplayScript::front() const {
  const auto it = known_.find(next_);
  return it == known_.end() ? nullptr : &it->second;
}

}  // namespace dps::detail
