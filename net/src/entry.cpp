// The backend of dps::Application(argc, argv) in programs linked with dps::dps: node processes
// over TCP, or all nodes in this process with --local.
#include "dps/application.hpp"
#include "dps/local_backend.hpp"
#include "dps/net/tcp_backend.hpp"

#include <stdexcept>
#include <string>
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
  options.argv.assign(c.argv, c.argv + c.argc);
  return std::make_unique<net::TcpBackend>(std::move(options));
}

}  // namespace dps::detail
