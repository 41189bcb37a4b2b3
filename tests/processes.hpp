// Applications whose node processes run this same test binary: the others re-run the current test
// (--gtest_filter), and in them the Application constructor serves until node 0 ends, then exits.
//
//   auto app = in_processes({"--nodes", "3"});        // node 0: this process
//   auto app = in_processes({"--hostfile", path});   // the others over $DPS_RSH
#pragma once

#include <dps/dps.hpp>
#include <dps/net/launcher.hpp>
#include <gtest/gtest.h>

#include "scratch.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace dps::test {

// argv for this test binary, running only the current test, then `extra`.
inline std::vector<std::string> this_test(std::vector<std::string> extra = {}) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::vector<std::string> words = {"/proc/self/exe",
                                    std::string("--gtest_filter=") + info->test_suite_name() + "." + info->name()};
  words.insert(words.end(), extra.begin(), extra.end());
  return words;
}

// workers: each process's, unless `options` say (nullopt: the backend's default).
inline std::unique_ptr<Application> in_processes(std::vector<std::string> options,
                                                 std::optional<std::size_t> workers = 2) {
  static std::vector<std::string> words;
  static std::vector<char*> argv;
  if (workers && std::find(options.begin(), options.end(), "--workers") == options.end())
    options.insert(options.end(), {"--workers", std::to_string(*workers)});
  words = this_test(std::move(options));
  argv.clear();
  for (auto& w : words) argv.push_back(w.data());
  return std::make_unique<Application>(static_cast<int>(argv.size()), argv.data());
}

// The value of `f`, or an error naming `what` once it took `limit`: a hang in another process then
// says where it was instead of ending as a silent test timeout.
template <class T>
T within(Future<T> f, const std::string& what, std::chrono::seconds limit = std::chrono::seconds(30)) {
  if (!f.wait_for(limit)) {
    std::fprintf(stderr, "timed out waiting for %s\n", what.c_str());
    throw std::runtime_error("timed out waiting for " + what);
  }
  return f.get();
}

// Runs `command` through the shell; its exit status, its output (stdout and stderr) in `output`.
inline int shell(const std::string& command, std::string& output) {
  output.clear();
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) output.append(buf, n);
  const int status = ::pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The shell words that run the current test again (plain output), then `extra`.
inline std::string this_test_command(const std::vector<std::string>& extra = {}) {
  std::vector<std::string> words = this_test({"--gtest_color=no"});
  words.insert(words.end(), extra.begin(), extra.end());
  std::string command;
  for (const std::string& w : words) {
    command += ' ';  // not " " + word: GCC 12 warns of a restrict overlap there that cannot happen
    command += net::shell_word(w == "/proc/self/exe" ? net::self_executable() : w);
  }
  return command;
}

// Stops a node process (SIGSTOP) and returns once every one of its threads has stopped, false after
// 10 s. kill() returns at once, but a process's threads stop only as each is next scheduled: under
// load one of them can go on working for a while (a node "stopped" this way once still sent its data).
inline bool stop_process(long pid) {
  if (::kill(static_cast<pid_t>(pid), SIGSTOP) != 0) return false;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  while (std::chrono::steady_clock::now() < give_up) {
    bool all = true;
    std::error_code error;
    for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
      std::ifstream stat(task.path() / "stat");
      std::string line;
      std::getline(stat, line);
      const auto name_end = line.rfind(')');  // the state follows the command name, which may hold spaces
      if (name_end == std::string::npos || name_end + 2 >= line.size()) continue;  // the thread just ended
      const char state = line[name_end + 2];
      all = all && (state == 'T' || state == 't');
    }
    if (error) return false;
    if (all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

}  // namespace dps::test
