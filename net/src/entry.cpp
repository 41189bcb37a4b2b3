// The backend of dps::Application(argc, argv) in programs linked with dps::dps: node processes
// over TCP, or all nodes in this process with --local.
#include "dps/application.hpp"
#include "dps/local_backend.hpp"
#include "dps/net/tcp_backend.hpp"

namespace dps::detail {

const char* command_line_backend_help() {
  return "  --nodes V           node processes of the application (default 1, or the hostfile's slots)\n"
         "  --hostfile FILE     start them on these hosts over ssh ($DPS_RSH): lines 'host [slots]'\n"
         "  --local             run every node inside this process instead (threads, no TCP)\n"
         "  --workers V         OS threads running DPS threads in each process (default: the CPUs its affinity allows,\n"
         "                      over the node processes sharing its host)\n";
}

std::unique_ptr<Backend> command_line_backend(CommandLine& c) {
  net::TcpOptions options;
  options.nodes = c.options.nodes;
  options.workers = c.options.workers;
  options.hostfile = c.hostfile;
  options.argv.assign(c.argv, c.argv + c.argc);
  return std::make_unique<net::TcpBackend>(std::move(options));
}

}  // namespace dps::detail
