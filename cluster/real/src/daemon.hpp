// Daemon: dps-scheduler's heart. It owns a pool of hosts (a slot per node of its cluster), runs one of
// the cluster library's schedulers through the Dispatcher the simulated cluster uses (the same code
// path), starts the jobs it grants hosts to, answers their resize points over TCP (the job protocol),
// and frees a job's hosts when it ends, fails or is killed. Clients holding the cluster's secret submit,
// list and cancel jobs over the same socket (client_protocol.hpp). One thread, one poll loop.
#pragma once

#include "forecasts.hpp"
#include "job_process.hpp"
#include "journal.hpp"

#include <dps/cluster/dispatcher.hpp>
#include <dps/cluster/scheduler.hpp>
#include <dps/cluster/what_if.hpp>
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
  std::string journal;  // its SQLite journal (empty: none): a daemon started on one goes on from it
  std::string what_if;  // a cluster model: a growth only where the job's -sim program on it says it pays
};

class Daemon {
 public:
  Daemon(DaemonOptions options, Scheduler& scheduler, std::vector<JobClass> classes);
  ~Daemon();

  // HOST:PORT it listens at (the port chosen when 0 was asked).
  const std::string& address() const noexcept { return address_; }
  // The jobs it took back from its journal (done, running or waiting): 0 for a fresh start.
  std::size_t resumed() const noexcept { return resumed_; }
  // Throws std::invalid_argument with one line when `job` can never run on a pool of `pool` nodes (wider,
  // not a program, its program not found).
  static void check(const Job& job, std::size_t pool);
  // A job that arrives `job.submit` seconds after the daemon (first) started. Throws std::invalid_argument
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
  std::size_t refused_growths() const noexcept { return guided_ ? guided_->refused() : 0; }
  void forget();  // empties its journal: the workload it held is over
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
  bool reconcile(Entry& e, Running& r, const std::vector<std::string>& hosts);
  std::uint64_t submit_line(const std::string& json);
  void cancel(Entry& e);
  // The scheduler acts on what happened, then the loop waits for more. In a batch, jobs left waiting
  // on an idle cluster are the scheduler's error.
  void step(bool batch);
  void resume(const Journal::Row& row);
  void save(const Entry& e);  // in the journal
  void ended(Entry& e, const std::string& how);
  void fail(Entry& e, const std::string& why);
  void close(Connection& c);
  Entry* entry_of(std::uint64_t id);
  std::string last_line(const std::string& path) const;

  DaemonOptions options_;
  std::unique_ptr<Forecasts> forecasts_;  // with --what-if
  std::unique_ptr<WhatIf> guided_;        // ... the scheduler, asking them before a growth
  Dispatcher dispatcher_;
  std::vector<JobClass> classes_;
  std::unique_ptr<Journal> journal_;
  double epoch_ = 0;  // the wall-clock second of the daemon's time 0 (its first start's)
  std::size_t resumed_ = 0;
  std::size_t resizes_before_ = 0;  // by the daemon before it restarted
  int listener_ = -1;
  std::string address_;
  std::deque<Entry> entries_;       // in submit order
  std::vector<Entry*> by_arrival_;  // the dispatcher's arrival index
  std::vector<std::unique_ptr<Connection>> connections_;
  std::size_t done_ = 0;
  std::uint64_t next_id_ = 1;
};

}  // namespace dps::cluster
