// Launcher: starts the instances of the other nodes of an application: the same executable with
// the same arguments, told by its environment which node it is and where node 0 listens.
//
//   LocalLauncher local;                                       // processes on this machine
//   local.start(2, {"/path/to/app", "--n", "64"}, {{"DPS_NODE", "2"}, ...});
//   RemoteLauncher remote(read_hostfile("hosts"), rsh_command());   // over ssh ($DPS_RSH)
//   remote.start(2, ...);                                      // on the host of slot 2
//   local.reap(5.0);                                           // at the end: wait, then kill stragglers
//
// Applications started by another launcher (srun, mpirun) find their rank in its environment:
// external_rank(). Those launchers only start the processes; DPS does the rest.
#pragma once

#include <sys/types.h>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dps::net {

using Environment = std::vector<std::pair<std::string, std::string>>;

class Launcher {
 public:
  Launcher();
  virtual ~Launcher();
  // Starts the instance of `node`; throws std::runtime_error when it cannot.
  virtual void start(unsigned node, const std::vector<std::string>& argv, const Environment& env) = 0;
  // Waits up to `timeout` seconds for the instances to exit, then kills what is left.
  void reap(double timeout);
  void kill(unsigned node);
  // How the process of `node` ended ("exited with status 255"), or empty while it runs.
  std::string ended(unsigned node);

 protected:
  // In words, how a process that ended with `status` (as waitpid gives it) ended.
  virtual std::string how_ended(unsigned node, int status) const;

  // Runs `argv` (argv[0] a path, or a name found in PATH) with `env` added to this process's
  // environment and `input` as its standard input (inherited when empty). The child dies with
  // this process (PR_SET_PDEATHSIG), so none is orphaned, whichever thread called.
  void spawn(unsigned node, const std::vector<std::string>& argv, const Environment& env, const std::string& input);

 private:
  class Forker;
  void reap_exited();
  std::vector<std::pair<unsigned, pid_t>> children_;
  std::unique_ptr<Forker> forker_;
};

// Child processes on this machine.
class LocalLauncher final : public Launcher {
 public:
  void start(unsigned node, const std::vector<std::string>& argv, const Environment& env) override;
};

// Instances on the hosts of a hostfile, through a remote shell: node n runs on slots[n % size], in
// the folder this process runs in (a host without it fails the instance: ended() names both).
// The secret (DPS_SECRET) goes through the shell's standard input, never on a command line.
class RemoteLauncher final : public Launcher {
 public:
  RemoteLauncher(std::vector<std::string> slots, std::vector<std::string> rsh);
  void start(unsigned node, const std::vector<std::string>& argv, const Environment& env) override;
  const std::string& host(unsigned node) const;
  void place(unsigned node, std::string host);  // on this host instead of its slot's

 private:
  std::string how_ended(unsigned node, int status) const override;

  std::vector<std::string> slots_, rsh_;
  std::map<unsigned, std::string> placed_;
  std::string folder_;  // where the instances run: this process's working directory
};

// What runs `argv` with `env` on `host` through the remote shell `rsh`, in `folder` (empty: where the
// shell starts; a host without it makes the command exit with kNoFolder): its words, and what to write
// on its standard input, DPS_SECRET's value when `env` holds it (never on a command line).
struct RemoteCommand {
  std::vector<std::string> words;
  std::string input;
};
inline constexpr int kNoFolder = 66;  // ssh's own failures are 255
RemoteCommand remote_command(const std::vector<std::string>& rsh, const std::string& host, const std::string& folder,
                             const std::vector<std::string>& argv, const Environment& env);

// The hosts of a hostfile, one entry per slot: lines `host [slots]`, `#` comments. Throws
// std::runtime_error naming the file and line on anything else.
std::vector<std::string> read_hostfile(const std::string& path);

// The remote shell: the words of $DPS_RSH, or ssh without prompts.
std::vector<std::string> rsh_command();

// This process's rank and the number of processes when srun or mpirun started it.
struct ExternalRank {
  unsigned rank = 0, size = 0;
  unsigned on_host = 0;  // of them on this process's host; 0: the launcher does not say
  std::string launcher;  // "mpirun", "srun" or "a PMI launcher"
};
std::optional<ExternalRank> external_rank();  // throws std::runtime_error on malformed values

// Writes a child's few bytes of standard input (the secret) to the pipe `fd`; a child that died meanwhile
// costs this process no SIGPIPE.
void feed(int fd, const std::string& input);

// `word` quoted so that a POSIX shell reads it back as itself.
std::string shell_word(const std::string& word);

// The path of the running executable (what the other instances run).
std::string self_executable();

}  // namespace dps::net
