// What the daemon's files share (daemon.cpp: the loop and the jobs' links; daemon_journal.cpp: the
// journal; daemon_clients.cpp: clients' requests): a job's entry, a connection, and the conversions
// between a job and its workload entry.
#pragma once

#include "daemon.hpp"

#include <dps/cluster/workload.hpp>

#include <sys/socket.h>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace dps::cluster {

inline constexpr const char* kStates[] = {"pending", "queued", "running",
                                          "done",    "failed", "cancelled"};  // Entry::State's

struct Daemon::Entry {
  Job job;
  enum class State { Pending, Queued, Running, Done, Failed, Cancelled } state = State::Pending;
  std::size_t arrival = 0;
  net::Secret secret = net::Secret::generate();  // the job's own: its node processes' DPS_SECRET
  std::unique_ptr<JobProcess> process;
  Connection* link = nullptr;
  bool said_end = false;
  std::string output, error, reason;  // its files; why it failed (or is being killed)
};

struct Daemon::Connection {
  int fd = -1;
  std::string in;
  net::Nonce nonce = net::fresh_nonce();
  bool greeted = false;
  bool client = false;
  Entry* job = nullptr;
  bool closed = false;
  void write(const std::string& line) const { ::send(fd, line.data(), line.size(), MSG_NOSIGNAL); }
};

double wall_clock();  // seconds since the epoch
// A job as a workload's JSON entry, and back (the daemon's classes, `nodes` in its pool): what the
// journal keeps and what a client submits. Nullopt: wider than the pool.
nlohmann::json workload_entry(const Job& job, const std::vector<JobClass>& classes);
std::optional<Job> job_of(const nlohmann::json& entry, const std::vector<JobClass>& classes, std::size_t nodes,
                          const std::string& where);
std::string joined(const std::vector<std::string>& words, char separator);

}  // namespace dps::cluster
