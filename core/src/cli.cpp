// Command-line parsing shared by the executables.
#include "dps/cli.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace dps {

namespace {
template <class T>
T number(const std::string& name, const std::string& text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !(value > 0))
    throw std::invalid_argument(name + " expects a positive number, got '" + text + "'");
  return value;
}
}  // namespace

std::size_t positive_count(const std::string& option, const std::string& text) {
  std::size_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value == 0)
    throw std::invalid_argument(option + " expects a positive integer, got '" + text + "'");
  return value;
}

double positive_number(const std::string& option, const std::string& text) {
  const double value = number<double>(option, text);
  if (!std::isfinite(value)) throw std::invalid_argument(option + " expects a positive number, got '" + text + "'");
  return value;
}

long whole_number(const std::string& option, const std::string& text) {
  long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    throw std::invalid_argument(option + " expects whole numbers, got '" + text + "'");
  return value;
}

std::map<long, long> resize_points(const std::string& option, const std::string& text, const std::string& form) {
  std::string step = form.substr(0, form.find(':'));
  for (char& c : step) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::map<long, long> points;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    const auto colon = item.find(':');
    if (colon == std::string::npos) throw std::invalid_argument(option + " expects " + form + "[,...], got '" + item + "'");
    const long after = whole_number(option, item.substr(0, colon));
    if (!points.emplace(after, whole_number(option, item.substr(colon + 1))).second)
      throw std::invalid_argument(option + " names " + step + " " + std::to_string(after) + " twice");
  }
  return points;
}

std::string Cli::usage(const std::string& more) const {
  std::string text = "usage: " + program_ + " [options]\n" + summary_ + "\n";
  for (const Option& o : options_) {
    const bool is_flag = std::holds_alternative<bool*>(o.target);
    std::string head = "  " + o.name + (is_flag ? "" : " V");
    head.resize(std::max<std::size_t>(head.size() + 2, 22), ' ');
    text += head + o.help + "\n";
  }
  return text + more + "  --help              this text\n";
}

bool Cli::parse(const std::vector<std::string>& args, const std::string& more) const {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(usage(more).c_str(), stdout);
      return false;
    }
    const Option* found = nullptr;
    for (const Option& o : options_)
      if (o.name == arg) found = &o;
    if (!found) throw std::invalid_argument("unknown option '" + arg + "' (see --help)");
    if (auto* flag = std::get_if<bool*>(&found->target)) {
      **flag = true;
      continue;
    }
    if (i + 1 >= args.size()) throw std::invalid_argument(arg + " expects a value");
    const std::string& text = args[++i];
    std::visit(
        [&](auto* target) {
          using T = std::remove_pointer_t<decltype(target)>;
          if constexpr (std::is_same_v<T, std::string>)
            *target = text;
          else if constexpr (!std::is_same_v<T, bool>)
            *target = number<T>(arg, text);
        },
        found->target);
  }
  return true;
}

std::vector<std::string> words_after_dashes(std::vector<std::string>& args) {
  const auto dashes = std::find(args.begin(), args.end(), "--");
  if (dashes == args.end()) return {};
  std::vector<std::string> words(dashes + 1, args.end());
  args.erase(dashes, args.end());
  return words;
}

}  // namespace dps
