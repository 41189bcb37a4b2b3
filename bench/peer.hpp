// Running another program from a benchmark (a peer, or one of ours in its own processes) and reading
// a figure off its last line: "name=1.5" (the peers' style) or "\"name\": 1.5" (JSON). A command that
// fails or prints nothing is an error naming it and showing the end of its stderr, and a figure a
// benchmark did not measure (a peer not built, or left out) is null in its JSON: it never reports a
// figure it did not get.
//
//   const std::string line = run_peer("OPENBLAS_NUM_THREADS=2 ./lapack_lu 4096");
//   double gflops = field(line, "gflops");
//   run_peer(mpi_command(mpiexec, 2, "./mpi_jacobi 4096 200"));
#pragma once

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace peer_detail {

// The lines of `text` as a terminal leaves them: a progress line's last state (after its last '\r').
inline std::vector<std::string> lines_of(std::istream& text) {
  std::vector<std::string> lines;
  for (std::string line; std::getline(text, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (const auto cr = line.rfind('\r'); cr != std::string::npos) line.erase(0, cr + 1);
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

// The last lines a failed command wrote, indented under the error: its stderr's, or its stdout's when
// the command sent its stderr there (2>&1).
inline std::string tail(const std::vector<std::string>& err, const std::vector<std::string>& out) {
  constexpr std::size_t kLines = 5;
  const std::vector<std::string>& from = err.empty() ? out : err;
  if (from.empty()) return "";
  std::string text = err.empty() ? "; its output ends:" : "; its stderr ends:";
  for (std::size_t i = from.size() > kLines ? from.size() - kLines : 0; i < from.size(); ++i) text += "\n  " + from[i];
  return text;
}

inline std::string shell_quoted(const std::string& word) {
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// A file for a command's stderr, removed when it goes.
struct StderrFile {
  std::string path;
  StderrFile() {
    std::string pattern = (std::filesystem::temp_directory_path() / "dps-peer-XXXXXX").string();
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0) throw std::runtime_error("cannot create a file in " + std::filesystem::temp_directory_path().string());
    ::close(fd);
    path = pattern;
  }
  StderrFile(const StderrFile&) = delete;
  StderrFile& operator=(const StderrFile&) = delete;
  ~StderrFile() { std::remove(path.c_str()); }
};

}  // namespace peer_detail

// The non-empty lines the command printed on stdout (its stderr is kept aside); throws when it exits
// non-zero, with the command and the end of its stderr in the message.
inline std::vector<std::string> run_lines(const std::string& command) {
  const peer_detail::StderrFile err;
  FILE* p = popen(("{ " + command + "\n} 2>" + peer_detail::shell_quoted(err.path)).c_str(), "r");
  if (!p) throw std::runtime_error("cannot run '" + command + "'");
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = pclose(p);
  std::istringstream out_text(out);
  std::vector<std::string> lines = peer_detail::lines_of(out_text);
  if (status != 0) {
    std::ifstream err_text(err.path);
    const std::string how = status < 0            ? "could not be waited for"
                            : WIFEXITED(status)   ? "exited with status " + std::to_string(WEXITSTATUS(status))
                            : WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                                  : "failed";
    throw std::runtime_error("'" + command + "' " + how + peer_detail::tail(peer_detail::lines_of(err_text), lines));
  }
  return lines;
}

// The last non-empty line the command printed; throws when it fails or prints nothing.
inline std::string run_peer(const std::string& command) {
  const std::vector<std::string> lines = run_lines(command);
  if (lines.empty()) throw std::runtime_error("'" + command + "' printed nothing");
  return lines.back();
}

inline double field(const std::string& text, const std::string& name) {
  const auto at = text.find(name);
  if (at == std::string::npos) throw std::runtime_error("no " + name + " in '" + text + "'");
  return std::stod(text.substr(text.find_first_of("=:", at) + 1));
}

// A figure for the last line's JSON: null when it was not measured (a peer that is not built, or not
// asked for), never a number standing in for it.
inline std::string number_or_null(std::optional<double> x, const char* format = "%.3f") {
  if (!x) return "null";
  char text[64];
  std::snprintf(text, sizeof text, format, *x);
  return text;
}

// Open MPI's launcher running `ranks` processes of `program` (with its arguments) over TCP, loopback
// included. Open MPI refuses to run as root unless told twice: the variables are set for every launch.
inline std::string mpi_command(const std::string& mpiexec, int ranks, const std::string& program) {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  return mpiexec + " -np " + std::to_string(ranks) + " --mca btl tcp,self " + program;
}
