// Starting the node processes: from a hostfile through a remote shell, as the ranks of mpirun and
// srun, the ports they listen on, and the errors of each way.
#include "processes.hpp"
#include "support.hpp"

#include <dps/net/auth.hpp>
#include <dps/net/launcher.hpp>
#include <dps/net/tcp_backend.hpp>

#include <gtest/gtest.h>
#include <sched.h>
#include <asio.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace dps::test {
namespace {

namespace fs = std::filesystem;

// An environment variable set for a scope.
struct ScopedEnv {
  std::string name;
  ScopedEnv(std::string n, const std::string& value) : name(std::move(n)) { ::setenv(name.c_str(), value.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(name.c_str()); }
};

long sum_over(Application& app, long n) {
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Stateless>("workers", 2 * app.nodes());
  auto graph = app.graph(op<Pieces<>>(master) >> op<AddRange<>>(workers) >> op<SumPartials<>>(master));
  return graph.call(Range{0, n}).get().sum;
}

// A free port on loopback for node 0 to listen on (the kernel does not hand it out again at once).
std::string free_port() {
  asio::io_context io;
  asio::ip::tcp::acceptor a(io, {asio::ip::address_v4::loopback(), 0});
  return std::to_string(a.local_endpoint().port());
}

std::vector<std::string> hostfile_error(const std::string& text) {
  Scratch s;
  try {
    net::read_hostfile(s.write("hosts", text).string());
  } catch (const std::runtime_error& e) {
    return {e.what()};
  }
  return {};
}

TEST(Launch, HostfilesGiveOneEntryPerSlotAndNameTheirBadLines) {
  Scratch s;
  const auto slots = net::read_hostfile(s.write("hosts", "# the cluster\nalpha 2\n\nbeta   # one slot\ngamma slots=3\n").string());
  EXPECT_EQ(slots, (std::vector<std::string>{"alpha", "alpha", "beta", "gamma", "gamma", "gamma"}));
  auto error = [](const std::string& text) {
    const auto e = hostfile_error(text);
    return e.empty() ? std::string("no error") : e[0];
  };
  EXPECT_NE(error("alpha 0\n").find("line 1: a host has 1 to 4096 slots, not 0"), std::string::npos) << error("alpha 0\n");
  EXPECT_NE(error("alpha 4000000000\n").find("a host has 1 to 4096 slots"), std::string::npos);
  EXPECT_NE(error("a 1\nbeta two\n").find("line 2: the slot count must be"), std::string::npos);
  EXPECT_NE(error("alpha 1 extra\n").find("expected 'host [slots]'"), std::string::npos);
  EXPECT_NE(error("# nobody\n").find("names no host"), std::string::npos);
  EXPECT_THROW(net::read_hostfile((s.dir / "missing").string()), std::runtime_error);
}

// The remote shell stand-in records each host and command, then runs the command here: the whole
// remote path (quoting, working directory, the secret through standard input) but on loopback.
TEST(Launch, AHostfileStartsInstancesThroughTheRemoteShellOnePerSlot) {
  Scratch s;
  const fs::path rsh = s.write("fake-rsh",
                               "#!/bin/sh\nhost=$1; shift\necho \"$host $*\" >> " + net::shell_word((s.dir / "commands.log").string()) +
                                   "\nexec sh -c \"$*\"\n",
                               true);
  const fs::path hosts = s.write("hosts", "127.0.0.1 2\nlocalhost\n");
  const std::string secret = net::Secret::generate().hex();
  ScopedEnv shell_is(std::string("DPS_RSH"), rsh.string());
  std::optional<ScopedEnv> secret_is;
  if (!std::getenv("DPS_NODE")) secret_is.emplace("DPS_SECRET", secret);  // node 0's; the others read theirs
  {
    auto app = in_processes({"--hostfile", hosts.string()});
    ASSERT_EQ(app->nodes(), 3u);  // one per slot, node 0 in the first
    EXPECT_EQ(sum_over(*app, 5000), triangle(5000));
    EXPECT_EQ(app->add_node(), 3u);  // the slots are used round-robin
    EXPECT_EQ(app->nodes(), 4u);
  }
  // Which host each node was started on (the shells start at once: their lines come in any order).
  const std::string commands = s.read("commands.log");
  std::map<std::string, std::string> host_of;
  std::istringstream lines(commands);
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find("DPS_NODE='");
    if (at != std::string::npos) host_of[line.substr(at + 10, line.find('\'', at + 10) - at - 10)] = line.substr(0, line.find(' '));
  }
  EXPECT_EQ(host_of, (std::map<std::string, std::string>{{"1", "127.0.0.1"}, {"2", "localhost"}, {"3", "127.0.0.1"}}))
      << commands;
  EXPECT_EQ(commands.find(secret), std::string::npos) << "the secret was on a command line";
}

// A host without node 0's folder: the stand-in for its remote shell moves the folder away before it
// runs the command. The instance must not start elsewhere (it would read or write the wrong files).
TEST(Launch, AHostWithoutNodeZerosFolderFailsTheStartNamingHostAndFolder) {
  if (std::getenv("DPS_NODE")) return;  // an instance that started although it should not have: it ends at once
  Scratch s;
  const fs::path here = s.dir / "here";
  fs::create_directory(here);
  const std::string folder = fs::canonical(here).string();
  const fs::path rsh = s.write("rsh-to-a-host-without-it",
                               "#!/bin/sh\nshift\nmv " + net::shell_word(folder) + " " +
                                   net::shell_word((s.dir / "moved").string()) + "\nexec sh -c \"$*\"\n",
                               true);
  ScopedEnv shell_is("DPS_RSH", rsh.string());
  const fs::path before = fs::current_path();
  fs::current_path(here);
  std::string error = "an application formed without its nodes";
  try {
    net::TcpOptions o;
    o.hostfile = s.write("hosts", "127.0.0.1\nlocalhost\n").string();
    o.argv = this_test();
    net::TcpBackend backend(o);
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  fs::current_path(before);
  EXPECT_EQ(error, "the process of node 1 could not enter node 0's folder '" + folder +
                       "' on host 'localhost' before joining");
}

TEST(Launch, AHostfileWithAnUnreachableShellFailsWithItsReason) {
  Scratch s;
  const fs::path rsh = s.write("broken-rsh", "#!/bin/sh\necho 'no such host' >&2\nexit 255\n", true);
  ScopedEnv shell_is("DPS_RSH", rsh.string());
  try {
    net::TcpOptions o;
    o.hostfile = s.write("hosts", "127.0.0.1 2\n").string();
    o.argv = this_test();
    net::TcpBackend backend(o);
    ADD_FAILURE() << "an application formed without its nodes";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "the process of node 1 exited with status 255 before joining");
  }
}

// In the processes mpirun starts the test forms the application from their ranks; outside, it runs
// mpirun on itself. Open MPI only launches here: DPS does not call MPI.
TEST(Launch, TheRanksOfMpirunBecomeTheNodes) {
  if (std::getenv("OMPI_COMM_WORLD_RANK")) {
    auto app = in_processes({});
    ASSERT_EQ(app->nodes(), 3u);
    EXPECT_EQ(sum_over(*app, 4000), triangle(4000));
    return;
  }
  std::string out;
  if (shell("command -v mpirun", out) != 0) GTEST_SKIP() << "mpirun is not installed (Debian: openmpi-bin)";
  std::string command = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 DPS_COORDINATOR=127.0.0.1:" +
                        free_port() + " DPS_SECRET=" + net::Secret::generate().hex() +
                        " mpirun --oversubscribe -np 3 -x DPS_COORDINATOR -x DPS_SECRET";
  command += this_test_command();
  EXPECT_EQ(shell(command, out), 0) << out;
  EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
}

// What srun gives its tasks: SLURM_PROCID and SLURM_NTASKS.
TEST(Launch, TheTasksOfSrunBecomeTheNodes) {
  if (std::getenv("SLURM_PROCID")) {
    auto app = in_processes({});
    ASSERT_EQ(app->nodes(), 4u);
    EXPECT_EQ(sum_over(*app, 4000), triangle(4000));
    return;
  }
  const std::string env = "DPS_COORDINATOR=localhost:" + free_port() + " DPS_SECRET=" + net::Secret::generate().hex() +
                          " SLURM_NTASKS=4";
  const std::string test = this_test_command();
  std::string out;
  // Task 0 last: the others wait for it. The shell's status is task 0's; the others' are checked too.
  const std::string command = "for t in 1 2 3; do " + env + " SLURM_PROCID=$t" + test +
                              " || echo \"task $t failed\" & done; " + env + " SLURM_PROCID=0" + test + "; s=$?; wait; exit $s";
  EXPECT_EQ(shell(command, out), 0) << out;
  EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
  EXPECT_EQ(out.find("failed"), std::string::npos) << out;
}

// What a node process's host is shared with, as each node learns it.
struct HostShare : Leaf<Range, Partial, Stateless> {
  Partial execute(const Range&) {
    const char* told = std::getenv("DPS_HOST_PROCESSES");
    return {told ? std::atol(told) : -1, 1};
  }
};

// Node processes on one host share its cores: unless --workers says, each runs its share of workers
// (two busy workers per process on a host of two cores cost the stencil a tenth of its speed: TBB's
// idle workers spin beside the other process's).
TEST(Launch, NodeProcessesOnOneHostShareItsCores) {
  {
    auto app = in_processes({"--nodes", "2"}, std::nullopt);
    cpu_set_t usable;
    ASSERT_EQ(::sched_getaffinity(0, sizeof usable, &usable), 0);
    const auto cores = static_cast<std::size_t>(CPU_COUNT(&usable));
    EXPECT_EQ(app->workers(), std::max<std::size_t>(1, cores / 2));
    auto master = app->threads<Stateless>("master", 1);
    auto far = app->threads<Stateless>("far", 2);  // far[1] on node 1
    auto graph = app->graph(op<Pieces<>>(master) >> op<HostShare>(far, [](const Range&, std::size_t) { return 1; }) >>
                            op<SumPartials<>>(master));
    EXPECT_EQ(graph.call(Range{0, 1}).get().sum, 2);  // node 1 heard that two processes share its host
  }
  auto told = in_processes({"--nodes", "2", "--workers", "3"}, std::nullopt);
  EXPECT_EQ(told->workers(), 3u);
}

// A node process runs as many workers as the CPUs it may use: pinned to one (taskset, a cpuset),
// one; its other workers would only spin on that CPU.
TEST(Launch, ANodeProcessPinnedToOneCpuRunsOneWorker) {
  cpu_set_t all;
  ASSERT_EQ(::sched_getaffinity(0, sizeof all, &all), 0);
  if (CPU_COUNT(&all) < 2) GTEST_SKIP() << "this process may use one CPU only";
  int first = 0;
  while (!CPU_ISSET(first, &all)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0);
  std::size_t pinned = 0;
  {
    auto app = in_processes({"--nodes", "1"}, std::nullopt);
    pinned = app->workers();
  }
  ASSERT_EQ(::sched_setaffinity(0, sizeof all, &all), 0);
  EXPECT_EQ(pinned, 1u);
  auto app = in_processes({"--nodes", "1"}, std::nullopt);
  EXPECT_EQ(app->workers(), static_cast<std::size_t>(CPU_COUNT(&all)));
}

// srun and mpirun say how many of their processes share a host.
TEST(Launch, TheLaunchersSayHowManyProcessesShareAHost) {
  {
    ScopedEnv rank("SLURM_PROCID", "3"), size("SLURM_NTASKS", "5"), per_node("SLURM_STEP_TASKS_PER_NODE", "2(x2),1");
    for (auto [node, tasks] : std::map<std::string, unsigned>{{"0", 2}, {"1", 2}, {"2", 1}, {"3", 0}}) {
      ScopedEnv id("SLURM_NODEID", node);
      EXPECT_EQ(net::external_rank().value().on_host, tasks) << "node " << node;
    }
    EXPECT_EQ(net::external_rank().value().on_host, 2u);  // no SLURM_NODEID: the first node's
    ScopedEnv bad("SLURM_STEP_TASKS_PER_NODE", "2(x");
    EXPECT_THROW(net::external_rank(), std::runtime_error);
  }
  ScopedEnv rank("OMPI_COMM_WORLD_RANK", "1"), size("OMPI_COMM_WORLD_SIZE", "4");
  EXPECT_EQ(net::external_rank().value().on_host, 0u);  // not said
  ScopedEnv local("OMPI_COMM_WORLD_LOCAL_SIZE", "3");
  EXPECT_EQ(net::external_rank().value().on_host, 3u);
}

// Ports no other test of this machine is handed by the kernel for its outgoing connections: a block of
// `count` outside the ephemeral range, at random (tests run side by side).
net::PortRange unused_ports(unsigned count) {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  unsigned low = 32768, high = 60999;
  range >> low >> high;
  const unsigned first = low > 11024 ? 10000 : high + 1, span = (low > 11024 ? low : 65536) - first;
  std::mt19937 pick(static_cast<unsigned>(::getpid()));
  const unsigned at = first + static_cast<unsigned>(pick() % (span - count));
  return {static_cast<std::uint16_t>(at), static_cast<std::uint16_t>(at + count - 1)};
}

// The ports of the listening TCP sockets of process `pid`: its socket inodes, found in the kernel's
// tables of its network namespace (state 0A: listening).
std::set<unsigned> listening_ports(long pid) {
  const fs::path proc = "/proc/" + std::to_string(pid);
  std::set<std::string> sockets;
  for (const auto& fd : fs::directory_iterator(proc / "fd")) {
    std::error_code ec;
    const std::string target = fs::read_symlink(fd.path(), ec).string();
    if (!ec && target.starts_with("socket:[")) sockets.insert(target.substr(8, target.size() - 9));
  }
  std::set<unsigned> ports;
  for (const char* table : {"tcp", "tcp6"}) {
    std::ifstream in(proc / "net" / table);
    std::string line;
    std::getline(in, line);  // the column names
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      words >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
      if (state == "0A" && sockets.contains(inode))
        ports.insert(std::stoul(local.substr(local.find(':') + 1), nullptr, 16));
    }
  }
  return ports;
}

// Behind a firewall that lets in a range of ports: every listening socket of every node process is
// bound in it, node 0's and those the instances open when they join.
TEST(Launch, EveryNodeProcessListensWithinItsPorts) {
  // The instances run this test again: they take node 0's range from the environment they inherit.
  const char* told = std::getenv("DPS_TEST_PORTS");
  const net::PortRange ports = told ? net::PortRange::parse(told) : unused_ports(16);
  std::optional<ScopedEnv> tell;
  if (!told) tell.emplace("DPS_TEST_PORTS", ports.text());
  auto app = in_processes({"--nodes", "3", "--ports", ports.text()});
  ASSERT_EQ(app->nodes(), 3u);
  EXPECT_EQ(sum_over(*app, 3000), triangle(3000));
  auto& tcp = dynamic_cast<net::TcpBackend&>(app->runtime().backend());
  for (NodeId node = 0; node < 3; ++node) {
    const std::set<unsigned> listening = listening_ports(tcp.process_id(node));
    EXPECT_FALSE(listening.empty()) << "node " << node;
    for (unsigned port : listening)
      EXPECT_TRUE(port >= ports.first && port <= ports.last)
          << "node " << node << " listens on " << port << ", outside " << ports.text();
  }
}

// A range whose ports are all taken, and a coordinator srun's processes are told about outside it.
TEST(Launch, PortsThatCannotServeSayWhy) {
  asio::io_context io;
  asio::ip::tcp::acceptor taken(io, {asio::ip::address_v4::loopback(), 0});
  const auto port = taken.local_endpoint().port();
  const std::string only = std::to_string(port) + "-" + std::to_string(port);
  auto error = [](const net::TcpOptions& o) {
    try {
      net::TcpBackend backend(o);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("formed");
  };
  net::TcpOptions o;
  o.nodes = 1;
  o.ports = net::PortRange::parse(only);
  EXPECT_EQ(error(o), "no free port in --ports " + only + " on 127.0.0.1: all 1 are in use");

  ScopedEnv rank("SLURM_PROCID", "0"), size("SLURM_NTASKS", "2"), secret("DPS_SECRET", net::Secret::generate().hex());
  ScopedEnv coordinator("DPS_COORDINATOR", "127.0.0.1:" + std::to_string(port));
  o.nodes = 0;
  // A range the coordinator's port (an ephemeral one, anywhere from 1024 up) is not in, whatever it is.
  const unsigned low = port > 2000 ? port - 1100u : port + 1000u;
  const std::string range = std::to_string(low) + "-" + std::to_string(low + 100);
  o.ports = net::PortRange::parse(range);
  EXPECT_EQ(error(o), "DPS_COORDINATOR's port " + std::to_string(port) + " is outside --ports " + range);
}

TEST(Launch, MalformedPortsGiveOneLineReasons) {
  const std::string expects = "--ports expects a range LOW-HIGH of ports from 1 to 65535 (e.g. 40000-40100), got ";
  for (const auto& [words, reason] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"p", "--ports", "40100-40000"}, expects + "'40100-40000'"},
           {{"p", "--ports", "40000"}, expects + "'40000'"},
           {{"p", "--ports", "0-10"}, expects + "'0-10'"},
           {{"p", "--ports", "1-70000"}, expects + "'1-70000'"},
           {{"p", "--ports", "40000-40100x"}, expects + "'40000-40100x'"},
           {{"p", "--ports", "-40100"}, expects + "'-40100'"},
           {{"p", "--ports"}, "--ports expects a range LOW-HIGH"}}) {
    try {
      std::vector<std::string> copy = words;
      std::vector<char*> argv;
      for (auto& w : copy) argv.push_back(w.data());
      Application app(static_cast<int>(argv.size()), argv.data());
      ADD_FAILURE() << "accepted " << (words.size() > 2 ? words[2] : "no range");
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), reason);
    }
  }
  EXPECT_EQ(net::PortRange::parse("1-65535").text(), "1-65535");
}

TEST(Launch, ExternalLaunchesExplainWhatTheyMiss) {
  if (std::getenv("SLURM_PROCID")) {
    try {
      in_processes({});
    } catch (const std::exception& e) {
      std::printf("error: %s\n", e.what());
    }
    return;
  }
  auto error = [](const std::string& env) {
    std::string out;
    shell(env + this_test_command(), out);
    return out;
  };
  EXPECT_NE(error("SLURM_PROCID=0 SLURM_NTASKS=2 DPS_COORDINATOR=127.0.0.1:1")
                .find("DPS_SECRET is not set: under srun every process needs the same secret"),
            std::string::npos);
  EXPECT_NE(error("SLURM_PROCID=1 SLURM_NTASKS=2 DPS_SECRET=" + net::Secret::generate().hex())
                .find("DPS_COORDINATOR is not set: under srun it names node 0's host and a free port"),
            std::string::npos);
  EXPECT_NE(error("SLURM_PROCID=2 SLURM_NTASKS=2").find("SLURM_PROCID=2 is not below SLURM_NTASKS=2"), std::string::npos);
}

}  // namespace
}  // namespace dps::test
