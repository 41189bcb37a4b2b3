// Starting node processes: fork and exec, the child dying with its parent.
#include "dps/net/launcher.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace dps::net {

std::string self_executable() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) throw std::runtime_error(std::string("cannot find the running executable: ") + std::strerror(errno));
  return std::string(path, static_cast<std::size_t>(n));
}

void LocalLauncher::start(unsigned node, const std::vector<std::string>& argv, const Environment& env) {
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
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("cannot start node ") + std::to_string(node) + ": " + std::strerror(errno));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  children_.emplace_back(node, pid);
}

void LocalLauncher::reap(double timeout) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
  while (!children_.empty()) {
    std::erase_if(children_, [](const auto& c) {
      int status = 0;
      const pid_t r = ::waitpid(c.second, &status, WNOHANG);
      return r == c.second || (r < 0 && errno == ECHILD);
    });
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

void LocalLauncher::kill(unsigned node) {
  for (const auto& c : children_)
    if (c.first == node) ::kill(c.second, SIGKILL);
}

}  // namespace dps::net
