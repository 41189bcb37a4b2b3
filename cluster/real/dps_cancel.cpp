// dps-cancel: cancels a job of the scheduler daemon, queued (it leaves the queue) or running (its
// processes are killed, its hosts freed).
//
//   dps-cancel 12
#include "client.hpp"

#include <dps/cli.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  return dps::run_main("dps-cancel", [&] {
    std::vector<std::string> args(argv + 1, argv + argc), ids;
    std::string state;
    dps::Cli cli("dps-cancel", "Cancels jobs of the scheduler daemon: dps-cancel [--state DIR] ID...");
    cli.option("--state", state,
               "DIR  the daemon's state folder (default $DPS_SCHEDULER_STATE, else ~/.dps/scheduler)");
    for (auto it = args.begin(); it != args.end();)  // the ids are the words that are not options
      if (!it->starts_with("--") && (it == args.begin() || *(it - 1) != "--state"))
        ids.push_back(*it), it = args.erase(it);
      else
        ++it;
    if (!cli.parse(args)) return 0;
    if (ids.empty()) throw std::invalid_argument("which job? dps-cancel ID...");
    dps::cluster::Client daemon{dps::cluster::StateFolder(state)};
    std::string list;
    for (const std::string& id : ids) {
      daemon.ask("cancel " + id);
      list += (list.empty() ? "" : ", ") + id;
    }
    std::printf("{\"cancelled\": [%s]}\n", list.c_str());
    return 0;
  });
}
