// Starting node processes: fork and exec (directly, or a remote shell), the child dying with its
// parent; hostfiles; the ranks srun and mpirun give.
#include "dps/net/launcher.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace dps::net {

namespace {

std::runtime_error cannot_start(unsigned node, const std::string& why) {
  return std::runtime_error("cannot start node " + std::to_string(node) + ": " + why);
}

// argv[0] as execve wants it: a path, found in PATH when it is a bare name.
std::string program_path(unsigned node, const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  throw cannot_start(node, "'" + name + "' is not in PATH");
}

constexpr unsigned kMaxSlots = 4096;  // as many as an application has nodes

unsigned parse_count(const std::string& text, const std::string& what) {
  unsigned v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    throw std::runtime_error(what + " must be a non-negative integer, got '" + text + "'");
  return v;
}

}  // namespace

void feed(int fd, const std::string& input) {
  // A few dozen bytes: the pipe takes them at once. A reader that died meanwhile makes the write fail
  // with EPIPE, its SIGPIPE kept from this process.
  sigset_t pipe_signal, old;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_signal, &old);
  if (::write(fd, input.data(), input.size()) < 0 && errno == EPIPE) {
    const timespec now{};
    ::sigtimedwait(&pipe_signal, nullptr, &now);
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

std::string shell_word(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string self_executable() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) throw std::runtime_error(std::string("cannot find the running executable: ") + std::strerror(errno));
  return std::string(path, static_cast<std::size_t>(n));
}

// The thread that forks the children, as long-lived as the launcher: a child's PR_SET_PDEATHSIG
// fires when the thread that forked it ends, not its process, and add_node may run on any thread.
class Launcher::Forker {
 public:
  Forker() : thread_([this] { serve(); }) {}
  ~Forker() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  // Runs `f` on the forker's thread and returns once it ran.
  void run(const std::function<void()>& f) {
    std::packaged_task<void()> task(f);
    auto ran = task.get_future();
    {
      std::lock_guard lock(mu_);
      tasks_.push_back(std::move(task));
    }
    wake_.notify_all();
    ran.get();
  }

 private:
  void serve() {
    for (;;) {
      std::packaged_task<void()> task;
      {
        std::unique_lock lock(mu_);
        wake_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::packaged_task<void()>> tasks_;
  bool stopping_ = false;
  std::thread thread_;  // last: it starts once the rest is there
};

Launcher::Launcher() : forker_(std::make_unique<Forker>()) {}

Launcher::~Launcher() { reap(0); }

void Launcher::spawn(unsigned node, const std::vector<std::string>& argv, const Environment& env,
                     const std::string& input) {
  // Everything the child needs is built before fork: between fork and exec it only makes system calls.
  std::vector<std::string> vars;
  for (char** e = environ; *e; ++e) {
    const std::string var = *e;
    bool replaced = false;
    for (const auto& [k, v] : env) replaced |= var.compare(0, k.size() + 1, k + "=") == 0;
    if (!replaced) vars.push_back(var);
  }
  for (const auto& [k, v] : env) vars.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::vector<std::string> words = argv;
  words.at(0) = program_path(node, words[0]);
  for (auto& a : words) args.push_back(a.data());
  args.push_back(nullptr);
  int pipe_ends[2] = {-1, -1};
  if (!input.empty() && ::pipe2(pipe_ends, O_CLOEXEC) != 0) throw cannot_start(node, std::strerror(errno));
  const pid_t parent = ::getpid();

  pid_t pid = -1;
  int error = 0;
  forker_->run([&] {
    pid = ::fork();
    error = errno;
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
      if (pipe_ends[0] >= 0 && ::dup2(pipe_ends[0], STDIN_FILENO) < 0) ::_exit(127);
      ::close_range(3, ~0U, 0);  // this process's sockets are not the child's
      ::execve(args[0], args.data(), envp.data());
      ::_exit(127);
    }
  });
  if (pid < 0) {
    if (pipe_ends[0] >= 0) ::close(pipe_ends[0]), ::close(pipe_ends[1]);
    throw cannot_start(node, std::strerror(error));
  }
  reap_exited();  // instances of removed nodes: no zombie stays for the application's life
  children_.emplace_back(node, pid);
  if (pipe_ends[0] >= 0) {
    ::close(pipe_ends[0]);
    feed(pipe_ends[1], input);  // a child that died meanwhile: its end is reported by ended()
    ::close(pipe_ends[1]);
  }
}

void Launcher::reap(double timeout) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
  while (!children_.empty()) {
    reap_exited();
    if (children_.empty()) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      for (const auto& c : children_) {
        ::kill(c.second, SIGKILL);
        ::waitpid(c.second, nullptr, 0);
      }
      children_.clear();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void Launcher::reap_exited() {
  std::erase_if(children_, [](const auto& c) {
    int status = 0;
    const pid_t r = ::waitpid(c.second, &status, WNOHANG);
    return r == c.second || (r < 0 && errno == ECHILD);
  });
}

void Launcher::kill(unsigned node) {
  for (const auto& c : children_)
    if (c.first == node) ::kill(c.second, SIGKILL);
}

std::string Launcher::ended(unsigned node) {
  for (auto it = children_.begin(); it != children_.end(); ++it) {
    if (it->first != node) continue;
    int status = 0;
    if (::waitpid(it->second, &status, WNOHANG) != it->second) return {};
    children_.erase(it);
    return how_ended(node, status);
  }
  return {};
}

std::string Launcher::how_ended(unsigned, int status) const {
  return WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                           : "was killed by signal " + std::to_string(WTERMSIG(status));
}

void LocalLauncher::start(unsigned node, const std::vector<std::string>& argv, const Environment& env) {
  spawn(node, argv, env, {});
}

RemoteLauncher::RemoteLauncher(std::vector<std::string> slots, std::vector<std::string> rsh)
    : slots_(std::move(slots)), rsh_(std::move(rsh)) {
  if (slots_.empty()) throw std::invalid_argument("a remote launcher needs at least one host");
  if (rsh_.empty()) throw std::invalid_argument("a remote launcher needs a remote shell");
}

// rsh HOST 'cd DIR || exit 66; IFS= read -r DPS_SECRET && export DPS_SECRET && exec env K=V... APP ARGS...'
// (ssh joins its words into one command for the remote shell, so every word is quoted).
RemoteCommand remote_command(const std::vector<std::string>& rsh, const std::string& host, const std::string& folder,
                             const std::vector<std::string>& argv, const Environment& env) {
  std::string command;
  if (!folder.empty())
    command = "cd " + shell_word(folder) + " 2>/dev/null || exit " + std::to_string(kNoFolder) + "; ";
  RemoteCommand r;
  std::string assignments;
  for (const auto& [k, v] : env) {
    if (k == "DPS_SECRET")
      r.input = v + "\n";
    else
      assignments += " " + k + "=" + shell_word(v);
  }
  if (!r.input.empty()) command += "IFS= read -r DPS_SECRET && export DPS_SECRET && ";
  if (!assignments.empty()) command += "export" + assignments + " && ";
  command += "exec";
  for (const std::string& word : argv) command.append(" ").append(shell_word(word));
  r.words = rsh;
  r.words.push_back(host);
  r.words.push_back(std::move(command));
  return r;
}

void RemoteLauncher::start(unsigned node, const std::vector<std::string>& argv, const Environment& env) {
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof cwd)) folder_ = cwd;
  const RemoteCommand command = remote_command(rsh_, host(node), folder_, argv, env);
  spawn(node, command.words, {}, command.input);
}

const std::string& RemoteLauncher::host(unsigned node) const {
  const auto placed = placed_.find(node);
  return placed != placed_.end() ? placed->second : slots_[node % slots_.size()];
}

void RemoteLauncher::place(unsigned node, std::string host) { placed_[node] = std::move(host); }

std::string RemoteLauncher::how_ended(unsigned node, int status) const {
  if (WIFEXITED(status) && WEXITSTATUS(status) == kNoFolder && !folder_.empty())
    return "could not enter node 0's folder '" + folder_ + "' on host '" + host(node) + "'";
  return Launcher::how_ended(node, status);
}

std::vector<std::string> read_hostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read hostfile '" + path + "': " + std::strerror(errno));
  std::vector<std::string> slots;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const std::string where = "hostfile '" + path + "' line " + std::to_string(number);
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream words(line);
    std::string host, count, extra;
    if (!(words >> host)) continue;
    unsigned n = 1;
    if (words >> count) {
      if (count.starts_with("slots=")) count.erase(0, 6);  // Open MPI's spelling
      n = parse_count(count, where + ": the slot count");
      if (n == 0 || n > kMaxSlots)
        throw std::runtime_error(where + ": a host has 1 to " + std::to_string(kMaxSlots) + " slots, not " + count);
    }
    if (words >> extra) throw std::runtime_error(where + ": expected 'host [slots]', got '" + line + "'");
    slots.insert(slots.end(), n, host);
  }
  if (slots.empty()) throw std::runtime_error("hostfile '" + path + "' names no host");
  return slots;
}

std::vector<std::string> rsh_command() {
  const char* rsh = std::getenv("DPS_RSH");
  std::vector<std::string> words;
  std::istringstream in(rsh ? rsh : "");
  for (std::string w; in >> w;) words.push_back(w);
  if (words.empty()) words = {"ssh", "-x", "-o", "BatchMode=yes"};
  return words;
}

namespace {

// The tasks srun runs on node `node` of its step, from SLURM_STEP_TASKS_PER_NODE: "2(x3),1" is 2 on
// nodes 0 to 2, 1 on node 3. 0 when the list does not reach that node.
unsigned slurm_tasks_on(const std::string& list, unsigned node) {
  const std::string what = "SLURM_STEP_TASKS_PER_NODE=" + list;
  std::istringstream entries(list);
  for (std::string entry; std::getline(entries, entry, ',');) {
    const auto open = entry.find("(x");
    const unsigned tasks = parse_count(entry.substr(0, open), what);
    unsigned repeat = 1;
    if (open != std::string::npos) {
      if (!entry.ends_with(")")) throw std::runtime_error(what + " is not a list of 'tasks' or 'tasks(xnodes)'");
      repeat = parse_count(entry.substr(open + 2, entry.size() - open - 3), what);
    }
    if (node < repeat) return tasks;
    node -= repeat;
  }
  return 0;
}

}  // namespace

std::optional<ExternalRank> external_rank() {
  // The most specific launcher first: mpirun inside a Slurm allocation sets both.
  static const struct {
    const char *rank, *size, *on_host, *name;
  } known[] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "mpirun"},
               {"PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS", "a PMI launcher"},
               {"SLURM_PROCID", "SLURM_NTASKS", nullptr, "srun"}};
  for (const auto& k : known) {
    const char* rank = std::getenv(k.rank);
    const char* size = std::getenv(k.size);
    if (!rank || !size) continue;
    ExternalRank r{parse_count(rank, k.rank), parse_count(size, k.size), 0, k.name};
    if (r.size == 0 || r.rank >= r.size)
      throw std::runtime_error(std::string(k.rank) + "=" + rank + " is not below " + k.size + "=" + size);
    if (const char* on_host = k.on_host ? std::getenv(k.on_host) : nullptr) {
      r.on_host = parse_count(on_host, k.on_host);
    } else if (const char* list = k.on_host ? nullptr : std::getenv("SLURM_STEP_TASKS_PER_NODE")) {
      const char* node = std::getenv("SLURM_NODEID");
      r.on_host = slurm_tasks_on(list, node ? parse_count(node, "SLURM_NODEID") : 0);
    }
    return r;
  }
  return std::nullopt;
}

}  // namespace dps::net
