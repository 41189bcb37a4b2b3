// The backend of dps::Application(argc, argv) in programs linked with dps::dps: node processes
// over TCP, or all nodes in this process with --local.
#include "dps/application.hpp"
#include "dps/local_backend.hpp"
#include "dps/net/tcp_backend.hpp"

namespace dps::detail {

std::unique_ptr<Backend> command_line_backend(const CommandLine& c) {
  net::TcpOptions options;
  options.nodes = c.options.nodes;
  options.workers = c.options.workers;
  options.hostfile = c.hostfile;
  options.argv.assign(c.argv, c.argv + c.argc);
  return std::make_unique<net::TcpBackend>(std::move(options));
}

}  // namespace dps::detail
