// Journal: the daemon's state in SQLite (journal.sqlite in its state folder), written as it changes, so
// that a daemon killed and restarted keeps its queue, finds which of its jobs still run, and goes on.
// A row per job, and a few values (the wall-clock second of the daemon's time 0, its address).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

struct sqlite3;

namespace dps::cluster {

class Journal {
 public:
  struct Row {
    std::uint64_t id = 0;
    std::string job;            // the job as a workload's JSON entry
    std::string output, error;  // its files
    std::string state;          // pending, queued, running, done, failed, cancelled
    std::string secret;         // its own (hex)
    std::string reason;         // why it failed
    long pid = 0;               // node 0's, while it runs
    bool said_end = false;      // it told its end: its exit is its last word
    double start = -1, end = -1;
    std::vector<std::uint32_t> nodes;                   // held, while it runs
    std::vector<std::pair<double, std::size_t>> sizes;  // its sizes over time
  };

  // Opens or makes it; throws std::runtime_error naming the file when SQLite cannot.
  explicit Journal(const std::string& path);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  std::optional<std::string> value(const std::string& key) const;
  void set(const std::string& key, const std::string& value);
  void save(const Row& row);      // by its id, replacing
  std::vector<Row> rows() const;  // by id
  void clear();                   // every job and value

 private:
  void run(const std::string& sql);
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace dps::cluster
