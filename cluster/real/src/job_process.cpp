#include "job_process.hpp"

#include "program_path.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace dps::cluster {

JobProcess::JobProcess(const JobLaunch& launch) {
  std::vector<std::string> argv = launch.argv;
  argv.front() = program_path(argv.front());
  const net::RemoteCommand command = net::remote_command(launch.rsh, launch.host, launch.folder, argv, launch.env);
  std::vector<char*> args;
  std::vector<std::string> words = command.words;
  for (auto& w : words) args.push_back(w.data());
  args.push_back(nullptr);
  int input[2];
  if (::pipe2(input, O_CLOEXEC) != 0) throw std::runtime_error(std::string("no pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, input[0], STDIN_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, launch.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, launch.error.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);
  const int error = ::posix_spawnp(&pid_, args[0], &actions, &attributes, args.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(input[0]);
  if (error == 0 && !command.input.empty()) net::feed(input[1], command.input);  // a shell that died shows as its exit
  ::close(input[1]);
  if (error != 0) throw std::runtime_error("cannot start '" + words.front() + "': " + std::strerror(error));
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
}

JobProcess::JobProcess(pid_t pid) : pid_(pid), child_(false) {}

JobProcess::~JobProcess() {  // a daemon going away leaves its jobs running (a restarted one finds them)
  if (pidfd_ >= 0) ::close(pidfd_);
}

std::optional<std::string> JobProcess::exited() {
  if (ended_) return ended_;
  if (!child_) {
    if (::kill(pid_, 0) == 0 || errno != ESRCH) return std::nullopt;
    return ended_ = std::string();  // how, nobody can tell: its last word on the link says whether it ended well
  }
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
  if (WIFEXITED(status))
    ended_ = WEXITSTATUS(status) == 0 ? std::string() : "exited with status " + std::to_string(WEXITSTATUS(status));
  else
    ended_ = std::string("was killed by signal ") + ::strsignal(WTERMSIG(status));
  return ended_;
}

void JobProcess::kill() {
  if (!ended_) ::kill(-pid_, SIGKILL);  // its session's process group (it leads it)
}

}  // namespace dps::cluster
