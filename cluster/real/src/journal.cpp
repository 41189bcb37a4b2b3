#include "journal.hpp"

#include <sqlite3.h>

#include <sstream>
#include <stdexcept>

namespace dps::cluster {

namespace {

// A prepared statement, finalized when it goes.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql, const std::string& path) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK) failed();
  }
  ~Statement() { sqlite3_finalize(s_); }
  Statement& text(int k, const std::string& v) {
    return check(sqlite3_bind_text(s_, k, v.c_str(), -1, SQLITE_TRANSIENT));
  }
  Statement& real(int k, double v) { return check(sqlite3_bind_double(s_, k, v)); }
  Statement& integer(int k, std::int64_t v) { return check(sqlite3_bind_int64(s_, k, v)); }
  bool step() {
    const int r = sqlite3_step(s_);
    if (r != SQLITE_ROW && r != SQLITE_DONE) failed();
    return r == SQLITE_ROW;
  }
  std::string text(int k) const {
    const auto* t = sqlite3_column_text(s_, k);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  double real(int k) const { return sqlite3_column_double(s_, k); }
  std::int64_t integer(int k) const { return sqlite3_column_int64(s_, k); }

 private:
  Statement& check(int r) {
    if (r != SQLITE_OK) failed();
    return *this;
  }
  [[noreturn]] void failed() const { throw std::runtime_error(path_ + ": " + sqlite3_errmsg(db_)); }
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
  const std::string& path_;
};

std::string nodes_text(const std::vector<std::uint32_t>& nodes) {
  std::string out;
  for (const auto n : nodes) {
    if (!out.empty()) out += ',';
    out += std::to_string(n);
  }
  return out;
}
std::vector<std::uint32_t> nodes_of(const std::string& text) {
  std::vector<std::uint32_t> nodes;
  std::istringstream in(text);
  for (std::string n; std::getline(in, n, ',');) nodes.push_back(static_cast<std::uint32_t>(std::stoul(n)));
  return nodes;
}
std::string sizes_text(const std::vector<std::pair<double, std::size_t>>& sizes) {
  std::ostringstream out;
  out.precision(17);
  for (const auto& [when, n] : sizes) out << when << ':' << n << ' ';
  return out.str();
}
std::vector<std::pair<double, std::size_t>> sizes_of(const std::string& text) {
  std::vector<std::pair<double, std::size_t>> sizes;
  std::istringstream in(text);
  for (std::string item; in >> item;) {
    const auto colon = item.find(':');
    sizes.emplace_back(std::stod(item.substr(0, colon)), std::stoul(item.substr(colon + 1)));
  }
  return sizes;
}

}  // namespace

Journal::Journal(const std::string& path) : path_(path) {
  if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw std::runtime_error("cannot open the journal " + path + ": " + why);
  }
  sqlite3_busy_timeout(db_, 2000);
  run("PRAGMA journal_mode=WAL");  // a write is durable once it returns, and cheap
  run("CREATE TABLE IF NOT EXISTS jobs (id INTEGER PRIMARY KEY, job TEXT, output TEXT, error TEXT, state TEXT, secret "
      "TEXT, "
      "reason TEXT, pid INTEGER, said_end INTEGER, start REAL, end REAL, nodes TEXT, sizes TEXT)");
  run("CREATE TABLE IF NOT EXISTS daemon (key TEXT PRIMARY KEY, value TEXT)");
}

Journal::~Journal() { sqlite3_close(db_); }

void Journal::run(const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string why = error ? error : "failed";
    sqlite3_free(error);
    throw std::runtime_error(path_ + ": " + why);
  }
}

std::optional<std::string> Journal::value(const std::string& key) const {
  Statement s(db_, "SELECT value FROM daemon WHERE key = ?", path_);
  s.text(1, key);
  if (!s.step()) return std::nullopt;
  return s.text(0);
}

void Journal::set(const std::string& key, const std::string& value) {
  Statement s(db_, "INSERT OR REPLACE INTO daemon (key, value) VALUES (?, ?)", path_);
  s.text(1, key).text(2, value).step();
}

void Journal::save(const Row& r) {
  Statement s(db_, "INSERT OR REPLACE INTO jobs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", path_);
  s.integer(1, static_cast<std::int64_t>(r.id)).text(2, r.job).text(3, r.output).text(4, r.error).text(5, r.state);
  s.text(6, r.secret).text(7, r.reason).integer(8, r.pid).integer(9, r.said_end).real(10, r.start).real(11, r.end);
  s.text(12, nodes_text(r.nodes)).text(13, sizes_text(r.sizes)).step();
}

std::vector<Journal::Row> Journal::rows() const {
  Statement s(db_, "SELECT * FROM jobs ORDER BY id", path_);
  std::vector<Row> rows;
  while (s.step())
    rows.push_back({.id = static_cast<std::uint64_t>(s.integer(0)),
                    .job = s.text(1),
                    .output = s.text(2),
                    .error = s.text(3),
                    .state = s.text(4),
                    .secret = s.text(5),
                    .reason = s.text(6),
                    .pid = static_cast<long>(s.integer(7)),
                    .said_end = s.integer(8) != 0,
                    .start = s.real(9),
                    .end = s.real(10),
                    .nodes = nodes_of(s.text(11)),
                    .sizes = sizes_of(s.text(12))});
  return rows;
}

void Journal::clear() { run("DELETE FROM jobs; DELETE FROM daemon"); }

}  // namespace dps::cluster
