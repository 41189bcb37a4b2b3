// The daemon's journal: each job written as it changes, and taken back by a daemon that restarts.
#include "daemon_parts.hpp"

#include <stdexcept>

namespace dps::cluster {

void Daemon::save(const Entry& e) {
  if (!journal_) return;
  Journal::Row row{.id = e.job.id,
                   .job = workload_entry(e.job, classes_).dump(),
                   .output = e.output,
                   .error = e.error,
                   .state = kStates[static_cast<int>(e.state)],
                   .secret = e.secret.hex(),
                   .reason = e.reason,
                   .pid = 0,
                   .said_end = e.said_end,
                   .start = -1,
                   .end = -1,
                   .nodes = {},
                   .sizes = {}};
  if (e.state != Entry::State::Pending && e.arrival != SIZE_MAX) {
    const Running& r = dispatcher_.running(e.arrival);
    const JobRecord& record = dispatcher_.record(r);
    row.start = record.start;
    row.end = record.end;
    row.sizes = record.sizes;
    if (e.state == Entry::State::Running) {
      row.nodes = r.nodes;
      row.pid = e.process ? e.process->pid() : 0;
    }
  }
  journal_->save(row);
}

// A job of the journal: done, it counts in the figures; waiting, it waits again; running, it is taken
// back if node 0 still runs (it reconnects at its next resize point), else it failed meanwhile.
void Daemon::resume(const Journal::Row& row) {
  auto parsed = job_of(nlohmann::json::parse(row.job), classes_, options_.slots.size(), options_.journal);
  if (!parsed)
    throw std::runtime_error(options_.journal + ": job " + std::to_string(row.id) + " is wider than the pool");
  Job job = std::move(*parsed);
  job.id = row.id;
  next_id_ = std::max(next_id_, job.id + 1);
  Entry& e = entries_.emplace_back();
  e.output = row.output;
  e.error = row.error;
  e.reason = row.reason;
  e.secret = net::Secret::from_hex(row.secret);
  e.said_end = row.said_end;
  ++resumed_;
  const auto recall = [&](Entry::State state, double end, bool killed) {
    e.state = state;
    e.arrival = by_arrival_.size();
    by_arrival_.push_back(&e);
    dispatcher_.recall(e.job, JobRecord{.start = row.start, .end = end, .killed = killed, .sizes = row.sizes});
    ++done_;
  };
  if (row.state == "running") {
    job.size = row.nodes.size();  // where it is now: its scheduler profiles it from there
    e.job = std::move(job);
    auto process = std::make_unique<JobProcess>(static_cast<pid_t>(row.pid));
    if (row.pid > 0 && !process->exited()) {
      e.state = Entry::State::Running;
      e.process = std::move(process);
      e.arrival = by_arrival_.size();
      by_arrival_.push_back(&e);
      dispatcher_.advance(now());
      Running& r = dispatcher_.resume(e.job, row.nodes, row.start);
      dispatcher_.record(r).sizes = row.sizes;
    } else if (row.said_end) {  // it ended as the daemon went
      recall(Entry::State::Done, now(), false);
    } else {
      e.reason = "its processes ended while the daemon was away";
      recall(Entry::State::Failed, now(), true);
    }
  } else if (row.state == "done" || row.state == "failed" || row.state == "cancelled") {
    e.job = std::move(job);
    recall(row.state == "done"     ? Entry::State::Done
           : row.state == "failed" ? Entry::State::Failed
                                   : Entry::State::Cancelled,
           row.end, row.state != "done");
  } else {
    e.job = std::move(job);  // pending or queued: it arrives again
  }
  save(e);
}

void Daemon::forget() {
  if (journal_) journal_->clear();
}

}  // namespace dps::cluster
