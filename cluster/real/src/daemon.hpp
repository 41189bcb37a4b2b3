// Daemon: dps-scheduler's heart. It owns a pool of hosts (a slot per node of its cluster), runs one of
// the cluster library's schedulers through the Dispatcher the simulated cluster uses (the same code
// path), starts the jobs it grants hosts to, answers their resize points over TCP (the job protocol),
// and frees a job's hosts when it ends, fails or is killed. Clients holding the cluster's secret submit,
// list and cancel jobs over the same socket (client_protocol.hpp). One thread, one poll loop.
#pragma once

#include "job_process.hpp"

#include <dps/cluster/dispatcher.hpp>
#include <dps/cluster/scheduler.hpp>
#include <dps/cluster/workload.hpp>
#include <dps/net/auth.hpp>

#include <chrono>
#include <csignal>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace dps::cluster {

struct DaemonOptions {
  std::vector<std::string> slots;      // the pool: the host of each node
  std::vector<std::string> rsh;        // the remote shell that reaches them
  std::string listen = "127.0.0.1:0";  // HOST:PORT (0: any port); jobs reach the daemon there
  std::string logs = ".";              // jobs' output when they name none: job-ID.out, job-ID.err
  bool gantt = false;                  // keep the Gantt chart, for write_trace
  net::Secret secret = net::Secret::generate();  // the cluster's: what its clients prove they hold
};

class Daemon {
 public:
  Daemon(DaemonOptions options, Scheduler& scheduler, std::vector<JobClass> classes);
  ~Daemon();

  // HOST:PORT it listens at (the port chosen when 0 was asked).
  const std::string& address() const noexcept { return address_; }
  // A job that arrives `job.submit` seconds after the daemon started. Throws std::invalid_argument
  // with one line when it cannot ever run (more nodes than the pool, not a program).
  void submit(Job job);
  // Serves until every job submitted is done (ended, failed, cancelled or killed at its walltime).
  void run_until_done();
  // Serves until `stop` turns true (a signal); the jobs running then go on without it.
  void serve_until(const volatile std::sig_atomic_t& stop);

  struct Outcome {
    Results results;
    std::size_t failed = 0, cancelled = 0;
    std::vector<std::string> reasons;  // "job 3: exited with status 2: stencil: --n expects ..."
  };
  Outcome outcome() const;
  const Gantt& gantt() const noexcept { return dispatcher_.gantt(); }

 private:
  struct Entry;
  struct Connection;
  double now() const;
  void arrivals();
  void launch(Entry& e, Running& r);
  void serve(double timeout_s);
  void accept();
  void read(Connection& c);
  void line(Connection& c, const std::string& text);
  void job_message(Connection& c, Entry& e, const std::string& text);
  void client_request(Connection& c, const std::string& text);
  std::uint64_t submit_line(const std::string& json);
  void cancel(Entry& e);
  void step();  // the scheduler acts on what happened, then the loop waits for more
  void ended(Entry& e, const std::string& how);
  void fail(Entry& e, const std::string& why);
  void close(Connection& c);
  Entry* entry_of(std::uint64_t id);
  std::string last_line(const std::string& path) const;

  DaemonOptions options_;
  Dispatcher dispatcher_;
  std::vector<JobClass> classes_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  int listener_ = -1;
  std::string address_;
  std::deque<Entry> entries_;       // in submit order
  std::vector<Entry*> by_arrival_;  // the dispatcher's arrival index
  std::vector<std::unique_ptr<Connection>> connections_;
  std::size_t done_ = 0;
  std::uint64_t next_id_ = 1;
};

}  // namespace dps::cluster
