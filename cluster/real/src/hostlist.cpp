// Slurm's host lists and counts, read as Slurm's own src/common/hostlist.c reads them, stricter where
// it lets a typo through (an empty item, "1-" for "1", a stray ']').
#include "dps/cluster/hostlist.hpp"

#include <charconv>
#include <cstdint>
#include <stdexcept>
#include <utility>

namespace dps::cluster {

namespace {

constexpr std::uint64_t kMaxHosts = 65536;  // Slurm's MAX_SLURM_NODES, its bound on a range
constexpr std::uint64_t kMaxCount = 65535;  // Slurm keeps CPUs and tasks per node in 16 bits

enum class Digits { kNumber, kNotDigits, kTooLarge };

Digits parse_digits(std::string_view text, std::uint64_t& value) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) return Digits::kNotDigits;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc{} && end == text.data() + text.size() ? Digits::kNumber : Digits::kTooLarge;
}

struct Range {
  std::uint64_t lo = 0, hi = 0;
  std::size_t width = 0;  // the lower bound's digits: 01-10 gives 01 … 10
};

struct Bracket {
  std::string before;  // the text since the previous bracket
  std::vector<Range> ranges;
  std::uint64_t hosts = 0;
};

struct Item {
  std::vector<Bracket> brackets;
  std::string tail;  // the text after the last bracket, or the whole name
  std::uint64_t hosts = 1;
};

class HostlistParser {
 public:
  explicit HostlistParser(std::string_view expression) : expression_(expression) {}

  std::vector<std::string> expand() {
    if (expression_.empty()) fail("the expression is empty");
    if (const auto space = expression_.find_first_of(" \t\r\n"); space != std::string_view::npos)
      fail("whitespace at character " + std::to_string(space + 1) + "; items are separated by commas only");
    std::vector<Item> items;
    std::uint64_t hosts = 0;
    std::size_t start = 0, open = std::string_view::npos;
    for (std::size_t i = 0; i <= expression_.size(); ++i) {
      const char c = i < expression_.size() ? expression_[i] : ',';
      if (c == '[') {
        if (open != std::string_view::npos) fail("'[' at character " + std::to_string(i + 1) + " is nested in another");
        open = i;
      } else if (c == ']') {
        if (open == std::string_view::npos) fail("']' at character " + std::to_string(i + 1) + " closes no '['");
        open = std::string_view::npos;
      } else if (c == ',' && open == std::string_view::npos) {
        items.push_back(item(expression_.substr(start, i - start), items.size() + 1));
        hosts += items.back().hosts;
        if (hosts > kMaxHosts) too_many();
        start = i + 1;
      }
    }
    if (open != std::string_view::npos) fail("'[' at character " + std::to_string(open + 1) + " is never closed");
    std::vector<std::string> names;
    names.reserve(hosts);
    for (const Item& i : items) expand(i, names);
    return names;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw std::invalid_argument("hostlist '" + std::string(expression_) + "': " + why);
  }
  [[noreturn]] void too_many() const { fail("more than " + std::to_string(kMaxHosts) + " hosts (Slurm's limit)"); }

  // Brackets are balanced and flat here: expand() has checked.
  Item item(std::string_view text, std::size_t number) const {
    if (text.empty()) fail("item " + std::to_string(number) + " is empty");
    Item item;
    std::size_t at = 0;
    for (auto open = text.find('['); open != std::string_view::npos; open = text.find('[', at)) {
      const auto close = text.find(']', open);
      Bracket bracket{std::string(text.substr(at, open - at)), {}, 0};
      ranges(text.substr(open + 1, close - open - 1), bracket);
      item.hosts *= bracket.hosts;  // both at most kMaxHosts: no overflow
      if (item.hosts > kMaxHosts) too_many();
      item.brackets.push_back(std::move(bracket));
      at = close + 1;
    }
    item.tail = std::string(text.substr(at));
    return item;
  }

  void ranges(std::string_view list, Bracket& bracket) const {
    const std::string where = "'[" + std::string(list) + "]'";
    std::size_t start = 0;
    for (std::size_t i = 0; i <= list.size(); ++i) {
      if (i < list.size() && list[i] != ',') continue;
      const std::string_view text = list.substr(start, i - start);
      if (text.empty()) fail("an empty range in " + where);
      const Range r = range(text);
      if (r.hi - r.lo >= kMaxHosts) too_many();  // hi - lo + 1 could overflow
      bracket.hosts += r.hi - r.lo + 1;
      if (bracket.hosts > kMaxHosts) too_many();
      bracket.ranges.push_back(r);
      start = i + 1;
    }
  }

  Range range(std::string_view text) const {
    const auto dash = text.find('-');
    const std::string_view lo = text.substr(0, dash);
    const std::string_view hi = dash == std::string_view::npos ? lo : text.substr(dash + 1);
    Range r{0, 0, lo.size()};
    for (const auto& [bound, value] : {std::pair{lo, &r.lo}, std::pair{hi, &r.hi}}) {
      const Digits d = parse_digits(bound, *value);
      if (d == Digits::kNotDigits) fail("range '" + std::string(text) + "' is not N or N-M in digits");
      if (d == Digits::kTooLarge) fail("range '" + std::string(text) + "' has a bound too large for 64 bits");
    }
    if (r.hi < r.lo) fail("range '" + std::string(text) + "' has its upper bound below its lower");
    return r;
  }

  // Slurm's nesting (hostlist.c, _push_range_list): the last bracket innermost, the others from the last
  // but one (outermost) back to the first.
  static void expand(const Item& item, std::vector<std::string>& names) {
    const std::size_t n = item.brackets.size();
    if (n == 0) return names.push_back(item.tail);
    std::vector<std::vector<std::string>> numbers(n);
    for (std::size_t b = 0; b < n; ++b)
      for (const Range& r : item.brackets[b].ranges)
        for (std::uint64_t v = r.lo;; ++v) {
          std::string digits = std::to_string(v);
          if (digits.size() < r.width) digits.insert(0, r.width - digits.size(), '0');
          numbers[b].push_back(std::move(digits));
          if (v == r.hi) break;  // not v <= r.hi: hi may be 2^64 - 1
        }
    std::vector<std::size_t> nesting;  // outermost first
    for (std::size_t b = n - 1; b-- > 0;) nesting.push_back(b);
    nesting.push_back(n - 1);
    std::vector<std::size_t> at(n, 0);
    for (;;) {
      std::string name;
      for (std::size_t b = 0; b < n; ++b) name += item.brackets[b].before + numbers[b][at[b]];
      names.push_back(name + item.tail);
      std::size_t level = n;
      for (; level > 0; --level) {
        const std::size_t b = nesting[level - 1];
        if (++at[b] < numbers[b].size()) break;
        at[b] = 0;
      }
      if (level == 0) return;
    }
  }

  std::string_view expression_;
};

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view expression) { return HostlistParser(expression).expand(); }

std::vector<unsigned> expand_counts(std::string_view text) {
  const auto fail = [text](const std::string& why) {
    throw std::invalid_argument("counts '" + std::string(text) + "': " + why);
  };
  if (text.empty()) fail("the text is empty");
  std::vector<unsigned> counts;
  std::size_t start = 0, number = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ',') continue;
    const std::string_view entry = text.substr(start, i - start);
    start = i + 1;
    ++number;
    if (entry.empty()) fail("entry " + std::to_string(number) + " is empty");
    const std::string quoted = std::string("'").append(entry).append("'");
    // COUNT or COUNT(xREPEAT)
    const auto paren = entry.find('(');
    std::uint64_t count = 0, repeat = 1;
    Digits count_digits = parse_digits(entry.substr(0, paren), count);
    Digits repeat_digits = Digits::kNumber;
    if (paren != std::string_view::npos) {
      if (entry.substr(paren, 2) != "(x" || entry.back() != ')')
        fail("entry " + quoted + " is not COUNT or COUNT(xREPEAT)");
      repeat_digits = parse_digits(entry.substr(paren + 2, entry.size() - paren - 3), repeat);
    }
    if (count_digits == Digits::kNotDigits || repeat_digits == Digits::kNotDigits)
      fail("entry " + quoted + " is not COUNT or COUNT(xREPEAT)");
    if (count_digits == Digits::kTooLarge || count > kMaxCount)
      fail("entry " + quoted + " has a count above " + std::to_string(kMaxCount));
    if (count == 0) fail("entry " + quoted + " has a count of 0");
    if (repeat == 0) fail("entry " + quoted + " has a repeat of 0");
    if (repeat_digits == Digits::kTooLarge || repeat > kMaxHosts - counts.size())
      fail("more than " + std::to_string(kMaxHosts) + " hosts (Slurm's limit)");
    counts.insert(counts.end(), repeat, static_cast<unsigned>(count));
  }
  return counts;
}

std::vector<std::string> slurm_slots(const char* nodelist, const char* counts) {
  if (!nodelist || !*nodelist)
    throw std::invalid_argument("SLURM_JOB_NODELIST is not set: not inside a Slurm allocation");
  std::vector<std::string> hosts = expand_hostlist(nodelist);
  if (!counts) return hosts;
  const std::vector<unsigned> per_host = expand_counts(counts);
  if (per_host.size() != 1 && per_host.size() != hosts.size())
    throw std::invalid_argument("the counts '" + std::string(counts) + "' are for " + std::to_string(per_host.size()) +
                                " hosts, the nodelist '" + nodelist + "' names " + std::to_string(hosts.size()));
  std::vector<std::string> slots;
  for (std::size_t h = 0; h < hosts.size(); ++h)
    slots.insert(slots.end(), per_host[per_host.size() == 1 ? 0 : h], hosts[h]);
  return slots;
}

}  // namespace dps::cluster
