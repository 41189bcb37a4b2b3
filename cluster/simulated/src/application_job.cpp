#include "application_job.hpp"

#include "program_path.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string_view>
#include <vector>

extern char** environ;

namespace dps::cluster {

namespace {

constexpr int kChildFd = 3;  // where the job finds its socket

std::string exit_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by signal ") + strsignal(WTERMSIG(status));
  return "stopped";
}

}  // namespace

ApplicationProcess::ApplicationProcess(const Job& job, std::size_t nodes, const std::string& model_path, std::string log)
    : job_(job), log_(std::move(log)) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    throw std::runtime_error("job " + std::to_string(job.id) + ": no socket: " + std::strerror(errno));
  socket_ = std::make_unique<job_protocol::LineSocket>(pair[0]);
  if (pair[1] == kChildFd) {  // dup2 onto itself would keep close-on-exec
    const int moved = ::fcntl(pair[1], F_DUPFD_CLOEXEC, kChildFd + 1);
    ::close(pair[1]);
    pair[1] = moved;
  }
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) {
    const std::string_view v = *e;
    if (!v.starts_with("DPS_CLUSTER_")) env_text.emplace_back(v);
  }
  env_text.push_back(std::string(job_protocol::kFd) + "=" + std::to_string(kChildFd));
  env_text.push_back(std::string(job_protocol::kModel) + "=" + model_path);
  env_text.push_back(std::string(job_protocol::kNodes) + "=" + std::to_string(nodes));
  std::vector<char*> env, argv;
  for (auto& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);
  std::vector<std::string> words = job.command;
  words.front() = program_path(words.front());
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pair[1], kChildFd);  // dup2 clears close-on-exec
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  const int error = ::posix_spawnp(&pid_, argv[0], &actions, nullptr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(pair[1]);
  if (error != 0) {
    pid_ = -1;
    throw std::runtime_error("job " + std::to_string(job.id) + ": cannot start '" + job.command.front() + "': " + std::strerror(error));
  }
}

ApplicationProcess::~ApplicationProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

std::string ApplicationProcess::last_log_line() const {
  std::ifstream in(log_);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

void ApplicationProcess::failed(const std::string& why) {
  const std::string last = last_log_line();
  throw std::runtime_error("job " + std::to_string(job_.id) + " (" + job_.command.front() + ") " + why +
                           (last.empty() ? "" : ": " + last));
}

job_protocol::Message ApplicationProcess::next() {
  const auto line = socket_->read_line();
  if (!line) {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    failed(exit_status(status) + " before its end");
  }
  const auto m = job_protocol::decode(*line);
  if (!m || m->kind == job_protocol::Message::Kind::Size) failed("sent '" + *line + "', not a line of the protocol");
  return *m;
}

void ApplicationProcess::answer(std::size_t nodes) {
  socket_->write_line(job_protocol::encode({.kind = job_protocol::Message::Kind::Size, .nodes = nodes}));
}

void ApplicationProcess::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

void ApplicationProcess::finish() {
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed(exit_status(status));
}

}  // namespace dps::cluster
