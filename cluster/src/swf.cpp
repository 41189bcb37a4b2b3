// SWF reader: header comments, then 18 numeric fields a line, read through zlib (which reads plain
// files as they are).
#include "dps/cluster/swf.hpp"

#include <zlib.h>

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string_view>

namespace dps::cluster {

namespace {

constexpr int kFields = 18;
constexpr const char* kFieldNames[kFields] = {
    "job number",         "submit time", "wait time",       "run time",         "allocated processors",
    "average CPU time",   "used memory", "requested processors", "requested time", "requested memory",
    "status",             "user",        "group",           "executable",       "queue",
    "partition",          "preceding job", "think time"};

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

// "; Key: value" -> (Key, value); a comment without a key gives ("", text).
std::pair<std::string, std::string> header_line(std::string_view line) {
  line = trim(line.substr(1));
  const auto colon = line.find(':');
  if (colon == std::string_view::npos || line.substr(0, colon).find(' ') != std::string_view::npos)
    return {"", std::string(line)};
  return {std::string(trim(line.substr(0, colon))), std::string(trim(line.substr(colon + 1)))};
}

class Parser {
 public:
  explicit Parser(std::string name) : name_(std::move(name)) {}

  void line(std::string_view text) {
    ++number_;
    const std::string_view body = trim(text);
    if (body.empty()) return;
    if (body.front() == ';') return header(body);
    double f[kFields];
    int n = 0;
    for (std::string_view rest = body; !rest.empty(); rest = trim(rest)) {
      const auto end = std::min(rest.find_first_of(" \t"), rest.size());
      const std::string_view token = rest.substr(0, end);
      if (n == kFields) fail(std::to_string(n + 1) + "+ fields; an SWF line has " + std::to_string(kFields));
      f[n] = number(token, n);
      ++n;
      rest.remove_prefix(end);
    }
    if (n != kFields) fail(std::to_string(n) + " fields; an SWF line has " + std::to_string(kFields));
    SwfJob j;
    j.number = whole(f[0], 0), j.submit = f[1], j.wait = f[2], j.runtime = f[3], j.allocated = whole(f[4], 4);
    j.cpu_used = f[5], j.memory_used = f[6], j.requested = whole(f[7], 7), j.requested_time = f[8];
    j.requested_memory = f[9], j.status = static_cast<int>(whole(f[10], 10)), j.user = whole(f[11], 11);
    j.group = whole(f[12], 12), j.executable = whole(f[13], 13), j.queue = whole(f[14], 14);
    j.partition = whole(f[15], 15), j.preceding = whole(f[16], 16), j.think_time = f[17];
    if (j.submit < 0) fail("field 2 (submit time) is unknown; a job needs one");
    trace_.jobs.push_back(j);
  }

  SwfTrace done() { return std::move(trace_); }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error(name_ + ":" + std::to_string(number_) + ": " + why);
  }

  double number(std::string_view token, int field) const {
    double value = 0;
    const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (error != std::errc{} || end != token.data() + token.size() || !std::isfinite(value))
      fail("field " + std::to_string(field + 1) + " (" + kFieldNames[field] + "): '" + std::string(token) +
           "' is not a number");
    return value;
  }

  long whole(double value, int field) const {
    if (value != std::floor(value) || std::fabs(value) > 9e15)
      fail("field " + std::to_string(field + 1) + " (" + kFieldNames[field] + "): " + std::to_string(value) +
           " is not a whole number");
    return static_cast<long>(value);
  }

  void header(std::string_view body) {
    auto [key, value] = header_line(body);
    if (key.empty()) return;
    if (key == "MaxProcs" || key == "MaxNodes") {
      long v = 0;
      const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (error != std::errc{} || end != value.data() + value.size() || v <= 0)
        fail(key + ": '" + value + "' is not a positive number");
      (key == "MaxProcs" ? trace_.max_procs : trace_.max_nodes) = v;
    } else if (key == "Queue") {  // "Queue: 0 interactive"
      const std::string_view v = trim(value);
      const auto space = std::min(v.find_first_of(" \t"), v.size());
      std::size_t q = 0;
      const auto [end, error] = std::from_chars(v.data(), v.data() + space, q);
      if (error == std::errc{} && end == v.data() + space && q < 1024) {
        if (trace_.queues.size() <= q) trace_.queues.resize(q + 1);
        trace_.queues[q] = std::string(trim(v.substr(space)));
      }
    }
    trace_.header.emplace_back(std::move(key), std::move(value));
  }

  std::string name_;
  long number_ = 0;
  SwfTrace trace_;
};

}  // namespace

std::string SwfTrace::header_value(const std::string& key) const {
  for (const auto& [k, v] : header)
    if (k == key) return v;
  return "";
}

SwfTrace parse_swf(const std::string& text, const std::string& name) {
  Parser parser(name);
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto end = std::min(rest.find('\n'), rest.size());
    parser.line(rest.substr(0, end));
    rest.remove_prefix(std::min(end + 1, rest.size()));
  }
  return parser.done();
}

SwfTrace read_swf(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) throw std::runtime_error("cannot read " + path);
  std::string text;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(n));
  int code = 0;
  const char* why = gzerror(file, &code);
  const std::string reason = code == Z_OK || code == Z_STREAM_END ? "" : why;
  gzclose(file);
  if (n < 0 || !reason.empty()) throw std::runtime_error("cannot read " + path + ": " + (reason.empty() ? "read error" : reason));
  return parse_swf(text, path);
}

}  // namespace dps::cluster
