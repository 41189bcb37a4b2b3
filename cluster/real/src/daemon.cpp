#include "daemon.hpp"
#include "daemon_parts.hpp"

#include "program_path.hpp"

#include <dps/job_protocol.hpp>
#include <dps/net/scheduler_link.hpp>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

namespace dps::cluster {

namespace {

// A listening socket at HOST:PORT; the address it took, with the port chosen when 0 was asked.
int listen_at(const std::string& address, std::string& taken) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw std::invalid_argument("--listen expects HOST:PORT (the address jobs reach the daemon at), got '" + address +
                                "'");
  const std::string host = address.substr(0, colon), port = address.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int e = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); e != 0)
    throw std::invalid_argument("--listen " + address + ": " + ::gai_strerror(e));
  const int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd < 0 || ::bind(fd, found->ai_addr, found->ai_addrlen) != 0 || ::listen(fd, 64) != 0) {
    const std::string why = errno == EADDRINUSE ? "the address is in use (another daemon?)" : std::strerror(errno);
    ::freeaddrinfo(found);
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot listen at " + address + ": " + why);
  }
  ::freeaddrinfo(found);
  sockaddr_storage bound{};
  socklen_t size = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &size);
  const auto port_of = [&]() -> unsigned {
    if (bound.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
    return ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  };
  taken = host + ":" + std::to_string(port_of());
  return fd;
}

}  // namespace

Daemon::Daemon(DaemonOptions options, Scheduler& scheduler, std::vector<JobClass> classes)
    : options_(std::move(options)),
      forecasts_(options_.what_if.empty() ? nullptr : std::make_unique<Forecasts>(options_.what_if)),
      guided_(forecasts_
                  ? std::make_unique<WhatIf>(
                        scheduler, [this](const Job& job, std::size_t nodes) { return forecasts_->at(job, nodes); })
                  : nullptr),
      dispatcher_(options_.slots.size(), guided_ ? static_cast<Scheduler&>(*guided_) : scheduler,
                  {.gantt = options_.gantt}),
      classes_(std::move(classes)) {
  if (options_.slots.empty()) throw std::invalid_argument("the pool has no host");
  if (classes_.empty()) classes_.push_back({"normal", 0});
  if (options_.listen.starts_with("0.0.0.0:") || options_.listen.starts_with("[::]:"))
    throw std::invalid_argument("--listen needs the address jobs reach the daemon at, not a wildcard: " +
                                options_.listen);
  std::filesystem::create_directories(options_.logs);
  epoch_ = wall_clock();
  std::vector<Journal::Row> rows;
  if (!options_.journal.empty()) {
    journal_ = std::make_unique<Journal>(options_.journal);
    if (const auto resizes = journal_->value("resizes")) resizes_before_ = std::stoul(*resizes);
    if (const auto epoch = journal_->value("epoch"))
      epoch_ = std::stod(*epoch);
    else
      journal_->set("epoch", std::to_string(epoch_));
    rows = journal_->rows();
    // Where it listened, when it has jobs to take back: they reconnect there.
    if (const auto address = journal_->value("address"); address && !rows.empty() && options_.listen.ends_with(":0"))
      options_.listen = *address;
  }
  listener_ = listen_at(options_.listen, address_);
  if (journal_) journal_->set("address", address_);
  for (const Journal::Row& row : rows) resume(row);
}

Daemon::~Daemon() {
  for (auto& c : connections_) ::close(c->fd);
  if (listener_ >= 0) ::close(listener_);
}

double Daemon::now() const { return wall_clock() - epoch_; }

void Daemon::check(const Job& job, std::size_t pool) {
  const std::string what = "job " + std::to_string(job.id);
  if (job.kind != JobKind::Application)
    throw std::invalid_argument(what + " is " + describe(job.kind) +
                                ": dps-scheduler runs programs (application jobs)");
  if (job.size > pool)
    throw std::invalid_argument(what + " asks " + std::to_string(job.size) + " nodes, the pool has " +
                                std::to_string(pool));
  const std::string program = program_path(job.command.front());
  if (program.find('/') == std::string::npos || ::access(program.c_str(), X_OK) != 0)
    throw std::invalid_argument(what + ": no program '" + job.command.front() + "' here or in the project's build");
}

void Daemon::submit(Job job) {
  if (job.id == 0 || entry_of(job.id)) job.id = next_id_;
  next_id_ = std::max(next_id_, job.id + 1);
  check(job, options_.slots.size());
  Entry& e = entries_.emplace_back();
  e.job = std::move(job);
  const std::string stem = (std::filesystem::path(options_.logs) / ("job-" + std::to_string(e.job.id))).string();
  e.output = stem + ".out";
  e.error = stem + ".err";
  save(e);
}

void Daemon::arrivals() {
  for (Entry& e : entries_)
    if (e.state == Entry::State::Pending && e.job.submit <= now()) {
      e.state = Entry::State::Queued;
      e.arrival = by_arrival_.size();
      by_arrival_.push_back(&e);
      dispatcher_.arrive(e.job);
      save(e);
    }
}

void Daemon::launch(Entry& e, Running& r) {
  e.state = Entry::State::Running;
  std::vector<std::string> hosts;
  for (const Node node : r.nodes) hosts.push_back(options_.slots[node]);
  std::error_code ignored;
  JobLaunch launch{.rsh = options_.rsh,
                   .host = hosts.front(),
                   .folder = std::filesystem::current_path(ignored).string(),
                   .argv = e.job.command,
                   .env = {{job_protocol::kAddress, address_},
                           {job_protocol::kJob, std::to_string(e.job.id)},
                           {job_protocol::kHosts, joined(hosts, ',')},
                           {"DPS_SECRET", e.secret.hex()}},
                   .output = e.output,
                   .error = e.error};
  if (forecasts_ && e.job.resizable)  // its predictions, ready by the time it asks to grow
    forecasts_->prepare(e.job, e.job.size, e.job.max_size ? e.job.max_size : options_.slots.size());
  try {
    e.process = std::make_unique<JobProcess>(launch);
    save(e);
  } catch (const std::exception& error) {
    fail(e, error.what());
  }
}

Daemon::Entry* Daemon::entry_of(std::uint64_t id) {
  for (Entry& e : entries_)
    if (e.job.id == id) return &e;
  return nullptr;
}

void Daemon::accept() {
  for (;;) {
    const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->write(net::challenge_line(c->nonce));
    connections_.push_back(std::move(c));
  }
}

void Daemon::read(Connection& c) {
  char chunk[4096];
  const ssize_t n = ::recv(c.fd, chunk, sizeof chunk, MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return close(c);
  if (n < 0) return;
  c.in.append(chunk, static_cast<std::size_t>(n));
  for (auto newline = c.in.find('\n'); newline != std::string::npos && !c.closed; newline = c.in.find('\n')) {
    const std::string text = c.in.substr(0, newline);
    c.in.erase(0, newline + 1);
    line(c, text);
  }
  if (c.in.size() > 65536) close(c);  // no line of ours is that long
}

void Daemon::line(Connection& c, const std::string& text) {
  if (c.greeted) return c.client ? client_request(c, text) : job_message(c, *c.job, text);
  const auto hello = net::parse_hello(text);
  if (hello && hello->client) {
    if (!net::proven(*hello, options_.secret, c.nonce)) {
      c.write("refused not the cluster's secret\n");
      return close(c);
    }
    c.write(net::welcome_line(*hello, options_.secret, c.nonce));
    c.greeted = c.client = true;
    return;
  }
  Entry* e = hello ? entry_of(hello->job) : nullptr;
  if (!e || e->state != Entry::State::Running || e->link || !net::proven(*hello, e->secret, c.nonce)) {
    c.write(std::string("refused ") + (!hello ? "not a hello" : "not a running job of this daemon, or not its secret") +
            "\n");
    return close(c);
  }
  c.write(net::welcome_line(*hello, e->secret, c.nonce));
  c.greeted = true;
  c.job = e;
  e->link = &c;
}

void Daemon::job_message(Connection& c, Entry& e, const std::string& text) {
  using Kind = job_protocol::Message::Kind;
  const auto m = job_protocol::decode(text);
  if (e.state != Entry::State::Running) return;
  Running& r = dispatcher_.running(e.arrival);
  if (!m || m->kind == Kind::Size) {
    e.reason = "sent '" + text + "', not a line of the protocol";
    e.process->kill();
    return close(c);
  }
  if (m->kind == Kind::End) {
    e.said_end = true;
    return save(e);
  }
  if (m->kind == Kind::Release) {
    if (m->nodes >= r.size()) {
      e.reason = "gave back " + std::to_string(m->nodes) + " of its " + std::to_string(r.size()) + " nodes";
      e.process->kill();
      return;
    }
    if (m->hosts.empty()) dispatcher_.shrink(r, m->nodes);
    for (const std::string& host : m->hosts) {  // its last node on that host
      const auto at = std::find_if(r.nodes.rbegin(), r.nodes.rend(), [&](Node n) { return options_.slots[n] == host; });
      if (at == r.nodes.rend() || *at == r.nodes.front()) {
        e.reason = "gave back host '" + host + "', which it does not hold (beside its node 0's)";
        e.process->kill();
        return;
      }
      dispatcher_.release(r, *at);
    }
    return save(e);
  }
  if (!m->hosts.empty() && !reconcile(e, r, m->hosts)) return;
  const std::size_t size = r.size();
  if (m->nodes != size) {
    e.reason = "reports " + std::to_string(m->nodes) + " nodes at its resize point; it holds " + std::to_string(size);
    e.process->kill();
    return;
  }
  r.iteration = m->iteration;
  r.iteration_s = m->iteration_s;
  r.last_point = now();
  const std::size_t target = e.job.resizable ? dispatcher_.resize(r, {.iteration = m->iteration,
                                                                      .size = size,
                                                                      .iteration_seconds = m->iteration_s,
                                                                      .redistribution_seconds = m->redistribution_s})
                                             : size;
  if (journal_ && target != size) journal_->set("resizes", std::to_string(resizes_before_ + dispatcher_.resizes()));
  job_protocol::Message answer{.kind = Kind::Size, .nodes = target};
  for (std::size_t k = size; k < target; ++k) answer.hosts.push_back(options_.slots[r.nodes[k]]);
  save(e);  // first: a daemon that dies now has granted only what a job may hold (reconciled at its next point)
  c.write(job_protocol::encode(answer));
}

// The hosts a job says it holds at a resize point against those the daemon granted it: a node it gave
// back in a message lost with a daemon that went away is taken back now. False (the job killed) when
// it holds one it was not granted.
bool Daemon::reconcile(Entry& e, Running& r, const std::vector<std::string>& hosts) {
  std::map<std::string, std::size_t> held;
  for (const std::string& host : hosts) ++held[host];
  std::vector<Node> gone;
  for (const Node node : r.nodes) {
    auto it = held.find(options_.slots[node]);
    if (it != held.end() && it->second > 0)
      --it->second;
    else
      gone.push_back(node);
  }
  for (const auto& [host, extra] : held)
    if (extra > 0) {
      e.reason = "holds host '" + host + "', which the daemon did not grant it";
      e.process->kill();
      return false;
    }
  if (!gone.empty() && gone.front() == r.nodes.front()) {
    e.reason = "its node 0 is not on the first host it was granted";
    e.process->kill();
    return false;
  }
  for (const Node node : gone) dispatcher_.release(r, node);
  return true;
}

void Daemon::close(Connection& c) {
  if (c.closed) return;
  c.closed = true;
  ::close(c.fd);
  if (c.job) c.job->link = nullptr;
}

std::string Daemon::last_line(const std::string& path) const {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

void Daemon::fail(Entry& e, const std::string& why) {
  e.reason = why;
  ended(e, why);
}

void Daemon::ended(Entry& e, const std::string& how) {
  const bool clean = how.empty() && e.said_end && e.reason.empty();
  e.state = clean ? Entry::State::Done : e.reason == "cancelled" ? Entry::State::Cancelled : Entry::State::Failed;
  if (e.state == Entry::State::Failed) {
    std::string why = !e.reason.empty() ? e.reason : !how.empty() ? how : "ended without saying so";
    if (const std::string last = last_line(e.error); !last.empty() && why.find(last) == std::string::npos)
      why += ": " + last;
    e.reason = why;
  }
  if (e.link) close(*e.link);
  dispatcher_.end(dispatcher_.running(e.arrival), !clean);
  save(e);
  ++done_;
}

void Daemon::serve(double timeout_s) {
  std::erase_if(connections_, [](const auto& c) { return c->closed; });
  std::vector<pollfd> fds{{listener_, POLLIN, 0}};
  for (const auto& c : connections_) fds.push_back({c->fd, POLLIN, 0});
  for (const Entry& e : entries_)
    if (e.state == Entry::State::Running && e.process && e.process->watch_fd() >= 0)
      fds.push_back({e.process->watch_fd(), POLLIN, 0});
  ::poll(fds.data(), fds.size(), static_cast<int>(std::ceil(std::max(0.0, timeout_s) * 1000)));
  if (fds[0].revents) accept();
  for (std::size_t k = 0; k + 1 < fds.size() && k < connections_.size(); ++k)
    if (fds[k + 1].revents) read(*connections_[k]);
  for (Entry& e : entries_) {
    if (e.state != Entry::State::Running || !e.process) continue;
    Running& r = dispatcher_.running(e.arrival);
    if (e.reason.empty() && now() - r.start > e.job.walltime) {
      e.reason = "killed at its walltime (" + std::to_string(static_cast<long>(e.job.walltime)) + " s)";
      e.process->kill();
    }
    if (const auto how = e.process->exited()) ended(e, *how);
  }
}

void Daemon::step(bool batch) {
  dispatcher_.advance(now());
  arrivals();
  for (Running* r : dispatcher_.schedule()) launch(*by_arrival_[r->arrival], *r);
  dispatcher_.sample();
  double next = 0.5;  // at least twice a second: walltimes
  bool pending = false;
  for (const Entry& e : entries_)
    if (e.state == Entry::State::Pending) next = std::min(next, e.job.submit - now()), pending = true;
  const Cluster& c = dispatcher_.cluster();
  if (batch && !pending && c.running().empty() && !c.queue().empty())
    throw std::runtime_error("scheduler " + dispatcher_.scheduler().name() + ": leaves " +
                             std::to_string(c.queue().size()) + " jobs waiting on an idle cluster");
  serve(next);
}

void Daemon::run_until_done() {
  while (done_ < entries_.size()) step(true);
  dispatcher_.advance(now());
  dispatcher_.sample();
}

void Daemon::serve_until(const volatile std::sig_atomic_t& stop) {
  while (!stop) step(false);
}

Daemon::Outcome Daemon::outcome() const {
  Outcome o{dispatcher_.results(classes_, 10), 0, 0, {}};
  o.results.resizes += resizes_before_;
  for (const Entry& e : entries_)
    if (e.state == Entry::State::Cancelled) {
      ++o.cancelled;
    } else if (e.state == Entry::State::Failed) {
      ++o.failed;
      o.reasons.push_back("job " + std::to_string(e.job.id) + ": " + e.reason);
    }
  return o;
}

}  // namespace dps::cluster
