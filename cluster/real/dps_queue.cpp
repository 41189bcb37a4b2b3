// dps-queue: the scheduler daemon's jobs, a line each (id, state, nodes, wait and run times, command),
// then the same as JSON.
//
//   dps-queue --state /shared/dps-state
#include "client.hpp"

#include <dps/cli.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <sstream>
#include <string>

int main(int argc, char** argv) {
  return dps::run_main("dps-queue", [&] {
    std::string state;
    dps::Cli cli("dps-queue", "Lists the scheduler daemon's jobs: state, nodes, wait and run times.");
    cli.option("--state", state,
               "DIR  the daemon's state folder (default $DPS_SCHEDULER_STATE, else ~/.dps/scheduler)");
    if (!cli.parse(argc, argv)) return 0;
    dps::cluster::Client daemon{dps::cluster::StateFolder(state)};
    nlohmann::json jobs = nlohmann::json::array();
    std::printf("%6s  %-9s %5s %9s %9s  %s\n", "id", "state", "nodes", "wait_s", "run_s", "command");
    for (const std::string& line : daemon.ask("queue")) {  // job ID STATE NODES WAIT RUN COMMAND...
      std::istringstream in(line);
      std::string word, job_state, command;
      unsigned long long id = 0;
      std::size_t nodes = 0;
      double wait = 0, run = 0;
      in >> word >> id >> job_state >> nodes >> wait >> run;
      std::getline(in >> std::ws, command);
      std::printf("%6llu  %-9s %5zu %9.1f %9.1f  %s\n", id, job_state.c_str(), nodes, wait, run, command.c_str());
      jobs.push_back(
          {{"id", id}, {"state", job_state}, {"nodes", nodes}, {"wait_s", wait}, {"run_s", run}, {"command", command}});
    }
    std::printf("%s\n", nlohmann::json{{"jobs", jobs}}.dump().c_str());
    return 0;
  });
}
