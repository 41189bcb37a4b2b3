// A real DPS program as a job of a real cluster's scheduler: the job protocol's host lists, the
// handshake that opens the link (each side proves the secret), and the stencil driven over it by a
// scheduler this test plays: grown onto a granted host, shrunk, each host named when it is handed back.
#include <dps/job_protocol.hpp>
#include <dps/net/auth.hpp>
#include <dps/net/launcher.hpp>
#include <dps/net/scheduler_link.hpp>

#include "scratch.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace dps {
namespace {

using job_protocol::Message;

TEST(JobProtocol, HostsTravelWithSizesAndReleases) {
  const Message grow{.kind = Message::Kind::Size, .nodes = 4, .hosts = {"h1", "10.77.0.3"}};
  EXPECT_EQ(job_protocol::encode(grow), "size 4 h1 10.77.0.3\n");
  const auto back = job_protocol::decode("size 4 h1 10.77.0.3");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->hosts, grow.hosts);
  const auto release = job_protocol::decode("release 1 2.5 h1");
  ASSERT_TRUE(release);
  EXPECT_EQ(release->hosts, std::vector<std::string>{"h1"});
  EXPECT_FALSE(job_protocol::decode("release 2 2.5 h1")) << "two nodes given back on one host named";
  EXPECT_TRUE(job_protocol::decode("size 2")) << "a simulated cluster names no host";
  EXPECT_THROW(job_protocol::encode({.kind = Message::Kind::Size, .nodes = 2, .hosts = {"a b"}}),
               std::invalid_argument);
}

// A listening socket on loopback, any port.
struct Listener {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  std::uint16_t port = 0;
  Listener() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t n = sizeof a;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 4) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n) != 0)
      throw std::runtime_error("cannot listen on loopback");
    port = ntohs(a.sin_port);
  }
  ~Listener() { ::close(fd); }
  std::string address() const { return "127.0.0.1:" + std::to_string(port); }
};

// The daemon's side of the handshake; the job's id, or nullopt when refused.
std::optional<std::uint64_t> greet(job_protocol::LineSocket& link, const net::Secret& secret) {
  const net::Nonce mine = net::fresh_nonce();
  link.write_line(net::challenge_line(mine));
  const auto line = link.read_line();
  const auto hello = line ? net::parse_hello(*line) : std::nullopt;
  if (!hello || !net::proven(*hello, secret, mine)) {
    link.write_line("refused wrong secret\n");
    return std::nullopt;
  }
  link.write_line(net::welcome_line(*hello, secret, mine));
  return hello->job;
}

TEST(SchedulerLink, EachSideProvesTheSecretAndAStrangerIsRefused) {
  Listener listener;
  const net::Secret secret = net::Secret::generate(), stranger = net::Secret::generate();
  std::optional<std::uint64_t> seen[2];
  std::thread daemon([&] {
    for (auto& s : seen) {
      job_protocol::LineSocket link(::accept4(listener.fd, nullptr, nullptr, SOCK_CLOEXEC));
      s = greet(link, secret);
    }
  });
  const int fd = net::connect_to_scheduler(listener.address(), "job 42", secret, 5);
  ::close(fd);
  try {
    net::connect_to_scheduler(listener.address(), "job 43", stranger, 5);
    ADD_FAILURE() << "a stranger's secret passed";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("refused job 43: wrong secret"), std::string::npos) << e.what();
  }
  daemon.join();
  EXPECT_EQ(seen[0], std::optional<std::uint64_t>(42));
  EXPECT_FALSE(seen[1]);
}

// The stencil, started as job 7 on one host, asks at each resize point; this scheduler grows it onto
// a second host, then shrinks it, then keeps it: the hosts it names are those granted, its grid a
// serial Jacobi's.
TEST(SchedulerLink, TheStencilGrowsOntoAGrantedHostAndNamesItWhenItShrinks) {
  test::Scratch s;
  const auto rsh = s.write("fake-rsh",
                           "#!/bin/sh\nhost=$1; shift\necho \"$host\" >> " +
                               net::shell_word((s.dir / "hosts.log").string()) + "\nexec sh -c \"$*\"\n",
                           true);
  Listener listener;
  const net::Secret secret = net::Secret::generate();
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) env_text.emplace_back(*e);
  env_text.push_back("DPS_RSH=" + rsh.string());
  env_text.push_back(std::string(job_protocol::kAddress) + "=" + listener.address());
  env_text.push_back(std::string(job_protocol::kJob) + "=7");
  env_text.push_back(std::string(job_protocol::kHosts) + "=localhost");
  env_text.push_back("DPS_SECRET=" + secret.hex());
  std::vector<char*> env, argv;
  for (auto& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);
  std::vector<std::string> words{DPS_STENCIL, "--n", "128", "--iterations", "40", "--resize-every", "10", "--verify"};
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const std::string out = (s.dir / "out").string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  ASSERT_EQ(::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), env.data()), 0);
  posix_spawn_file_actions_destroy(&actions);

  job_protocol::LineSocket link(::accept4(listener.fd, nullptr, nullptr, SOCK_CLOEXEC));
  ASSERT_EQ(greet(link, secret), std::optional<std::uint64_t>(7));
  std::vector<std::string> heard;
  int points = 0;
  for (auto line = link.read_line(); line; line = link.read_line()) {
    const auto m = job_protocol::decode(*line);
    ASSERT_TRUE(m) << *line;
    if (m->kind == Message::Kind::Point) {
      heard.push_back("point " + std::to_string(m->nodes));
      ++points;
      const Message answer = points == 1   ? Message{.kind = Message::Kind::Size, .nodes = 2, .hosts = {"127.0.0.1"}}
                             : points == 2 ? Message{.kind = Message::Kind::Size, .nodes = 1}
                                           : Message{.kind = Message::Kind::Size, .nodes = m->nodes};
      link.write_line(job_protocol::encode(answer));
    } else if (m->kind == Message::Kind::Release) {
      heard.push_back("release " + (m->hosts.empty() ? std::string("?") : m->hosts.front()));
    } else {
      heard.push_back("end");
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(heard, (std::vector<std::string>{"point 1", "point 2", "release 127.0.0.1", "point 1", "end"}));
  std::ifstream started(s.dir / "hosts.log");
  std::stringstream hosts;
  hosts << started.rdbuf();
  EXPECT_EQ(hosts.str(), "127.0.0.1\n") << "node 1 on the granted host, through the remote shell";
  std::ifstream result(out);
  std::string last, line;
  while (std::getline(result, line)) last = line;
  EXPECT_NE(last.find("\"verified\": true"), std::string::npos) << last;
}

}  // namespace
}  // namespace dps
