// The backend of dps::Application(argc, argv) in programs linked with dps::dps: node processes
// over TCP, or all nodes in this process with --local.
#include "dps/application.hpp"
#include "dps/job_protocol.hpp"
#include "dps/local_backend.hpp"
#include "dps/net/tcp_backend.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dps::detail {

const char* command_line_backend_help() {
  return "  --nodes V           node processes of the application (default 1, or the hostfile's slots)\n"
         "  --hostfile FILE     start them on these hosts over ssh ($DPS_RSH): lines 'host [slots]'\n"
         "  --local             run every node inside this process instead (threads, no TCP)\n"
         "  --workers V         OS threads running DPS threads in each process (default: the CPUs its affinity allows,\n"
         "                      over the node processes sharing its host)\n"
         "  --ports LOW-HIGH    every node process listens on a port of this range, e.g. 40000-40100: open it in\n"
         "                      the hosts' firewalls (default: any port the system gives)\n";
}

std::unique_ptr<Backend> command_line_backend(CommandLine& c) {
  net::TcpOptions options;
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < c.rest.size(); ++i) {
    if (c.rest[i] != "--ports") {
      rest.push_back(c.rest[i]);
    } else if (i + 1 < c.rest.size()) {
      options.ports = net::PortRange::parse(c.rest[++i]);
    } else {
      throw std::invalid_argument("--ports expects a range LOW-HIGH");
    }
  }
  c.rest = std::move(rest);
  options.nodes = c.options.nodes;
  options.workers = c.options.workers;
  options.hostfile = c.hostfile;
  // A real cluster's job (dps-scheduler): its node processes go on the hosts it was granted.
  if (const char* hosts = std::getenv(job_protocol::kHosts); hosts && !std::getenv("DPS_NODE")) {
    if (!c.hostfile.empty() || c.options.nodes != 0)
      throw std::invalid_argument(
          "a job of dps-scheduler runs on the hosts the scheduler grants: no --nodes or --hostfile");
    for (std::string_view list = hosts; !list.empty();) {
      const std::size_t comma = std::min(list.find(','), list.size());
      if (comma == 0)
        throw std::invalid_argument(std::string(job_protocol::kHosts) + " holds an empty host name: '" + hosts + "'");
      options.hosts.emplace_back(list.substr(0, comma));
      list.remove_prefix(std::min(comma + 1, list.size()));
    }
  }
  options.argv.assign(c.argv, c.argv + c.argc);
  return std::make_unique<net::TcpBackend>(std::move(options));
}

}  // namespace dps::detail
