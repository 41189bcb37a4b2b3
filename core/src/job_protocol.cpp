#include "dps/job_protocol.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

namespace dps::job_protocol {

namespace {
bool host_word(std::string_view host) {
  return !host.empty() && std::none_of(host.begin(), host.end(), [](char c) { return c <= ' ' || c == 0x7f; });
}
}  // namespace

std::string encode(const Message& m) {
  char line[256];
  switch (m.kind) {
    case Message::Kind::Point:
      std::snprintf(line, sizeof line, "point %ld %zu %.17g %.17g %.17g", m.iteration, m.nodes, m.iteration_s,
                    m.redistribution_s, m.time);
      break;
    case Message::Kind::Release: std::snprintf(line, sizeof line, "release %zu %.17g", m.nodes, m.time); break;
    case Message::Kind::End: std::snprintf(line, sizeof line, "end %.17g", m.time); break;
    case Message::Kind::Size: std::snprintf(line, sizeof line, "size %zu", m.nodes); break;
  }
  std::string text = line;
  for (const std::string& host : m.hosts) {
    if (!host_word(host)) throw std::invalid_argument("the job protocol cannot carry the host name '" + host + "'");
    text.append(" ").append(host);
  }
  return text + "\n";
}

std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> words;
  while (!line.empty()) {
    const auto start = line.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    line.remove_prefix(start);
    const auto end = std::min(line.find(' '), line.size());
    words.push_back(line.substr(0, end));
    line.remove_prefix(end);
  }
  return words;
}

std::optional<Message> decode(std::string_view line) {
  const std::vector<std::string_view> words = words_of(line);
  if (words.empty()) return std::nullopt;
  auto number = [](std::string_view w, auto& out) {
    const auto [end, error] = std::from_chars(w.data(), w.data() + w.size(), out);
    return error == std::errc{} && end == w.data() + w.size();
  };
  Message m;
  const std::string_view kind = words[0];
  bool ok = false;
  if (kind == "point" && words.size() >= 6) {
    m.kind = Message::Kind::Point;
    ok = number(words[1], m.iteration) && number(words[2], m.nodes) && number(words[3], m.iteration_s) &&
         number(words[4], m.redistribution_s) && number(words[5], m.time);
    m.hosts.assign(words.begin() + 6, words.end());
    ok = ok && (m.hosts.empty() || m.hosts.size() == m.nodes);
  } else if (kind == "release" && words.size() >= 3) {
    m.kind = Message::Kind::Release;
    ok = number(words[1], m.nodes) && number(words[2], m.time);
    m.hosts.assign(words.begin() + 3, words.end());
    ok = ok && (m.hosts.empty() || m.hosts.size() == m.nodes);
  } else if (kind == "end" && words.size() == 2) {
    m.kind = Message::Kind::End;
    ok = number(words[1], m.time);
  } else if (kind == "size" && words.size() >= 2) {
    m.kind = Message::Kind::Size;
    ok = number(words[1], m.nodes);
    m.hosts.assign(words.begin() + 2, words.end());
  }
  if (!ok || !std::isfinite(m.time) || m.time < 0) return std::nullopt;
  return m;
}

LineSocket::~LineSocket() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<std::string> LineSocket::read_line() {
  for (;;) {
    const auto newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    char chunk[4096];
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

bool LineSocket::write_line(const std::string& line) {
  for (std::size_t done = 0; done < line.size();) {
    const ssize_t n = ::send(fd_, line.data() + done, line.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace dps::job_protocol
