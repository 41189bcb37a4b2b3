#include "dps/cluster/plan.hpp"

#include "program_path.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

extern char** environ;

namespace dps::cluster {

namespace {

// Runs argv with its output (and errors) in `log`; its exit status, -1 when it could not start.
int run(const std::vector<std::string>& words, const std::string& log) {
  std::vector<char*> argv;
  std::vector<std::string> copy = words;
  for (auto& w : copy) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  const int error = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) return -1;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

Plan plan(const std::vector<std::string>& command, const PlanOptions& options) {
  if (command.empty()) throw std::invalid_argument("no program to plan");
  if (options.sizes.empty()) throw std::invalid_argument("no size to try");
  std::string pattern = (std::filesystem::temp_directory_path() / "dps-plan-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot make a folder for the plan's runs");
  const std::filesystem::path folder = pattern;
  struct Cleanup {
    std::filesystem::path folder;
    ~Cleanup() {
      std::error_code ignored;
      std::filesystem::remove_all(folder, ignored);
    }
  } cleanup{folder};
  Plan p;
  for (const std::size_t nodes : options.sizes) {
    const auto stats = folder / ("stats-" + std::to_string(nodes) + ".json"), log = folder / "log";
    std::vector<std::string> words = command;
    words.front() = program_path(words.front());
    for (const std::string& w : {std::string("--nodes"), std::to_string(nodes), std::string("--stats"), stats.string()})
      words.push_back(w);
    if (!options.model.empty()) words.insert(words.end(), {"--model", options.model});
    const int status = run(words, log.string());
    if (status != 0 || !std::filesystem::exists(stats)) {
      std::ifstream in(log);
      std::string text, last;
      while (std::getline(in, text))
        if (!text.empty()) last = text;
      std::string why = command.front() + " on " + std::to_string(nodes) + " nodes failed";
      if (!last.empty()) why += ": " + last;
      throw std::runtime_error(why);
    }
    std::ifstream in(stats);
    const nlohmann::json j = nlohmann::json::parse(in);
    p.sizes.push_back({nodes, j.at("predicted_s").get<double>(), j.value("efficiency", 0.0)});
  }
  // ReSHAPE's rule on the predictions: up a size while it cuts the time by more than the threshold.
  std::size_t k = 0;
  while (k + 1 < p.sizes.size() && p.sizes[k + 1].predicted_s < (1 - options.threshold) * p.sizes[k].predicted_s) ++k;
  p.recommended = p.sizes[k].nodes;
  return p;
}

}  // namespace dps::cluster
