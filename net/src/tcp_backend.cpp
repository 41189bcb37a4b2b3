// TcpBackend: a front over the parts of a node process's backend. Its Impl composes them, routes
// what the transport receives to the part that owns it (each directive by its kind), and answers
// the Backend interface from them.
#include "dps/net/tcp_backend.hpp"

#include "dps/job_protocol.hpp"
#include "dps/net/scheduler_link.hpp"

#include "backups.hpp"
#include "membership.hpp"
#include "node_process.hpp"
#include "remote_trace.hpp"
#include "replication.hpp"
#include "transport.hpp"

#include "dps/kernel/strands.hpp"
#include "dps/kernel/thread.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <variant>

namespace dps::net {

struct TcpBackend::Impl final : Transport::Handler {
  explicit Impl(TcpOptions o)
      : options(with_workers(std::move(o))),
        identity(Identity::of_this_process(options)),
        process(identity.me),
        strands(options.workers),
        transport(process, identity.secret, options, *this),
        traces(process, transport),
        membership(process, identity, options, transport, traces),
        backups(process, transport, membership),
        replication(process, options, transport, membership, traces, backups) {
    transport.start();
    try {
      membership.form();
    } catch (...) {  // no runtime comes: the network thread must not wait for one
      process.detach();
      transport.abandon();
      throw;
    }
  }

  ~Impl() override {
    transport.stop_heart();
    membership.end();
    transport.shut_down([this] { return membership.ended_normally(); });
    membership.reap();
  }

  // The one part that handles directives of kind D.
  template <class D>
  auto& owner_of(const D&) {
    static_assert(Membership::Handles::holds<D> + Replication::Handles::holds<D> + Backups::Handles::holds<D> +
                          RemoteTraces::Handles::holds<D> ==
                      1,
                  "every kind of directive has one part that handles it");
    if constexpr (Membership::Handles::holds<D>)
      return membership;
    else if constexpr (Replication::Handles::holds<D>)
      return replication;
    else if constexpr (Backups::Handles::holds<D>)
      return backups;
    else
      return traces;
  }

  // Transport::Handler
  void on_envelope(const FrameHeader& header, double received, std::span<const std::byte> body,
                   WireBuffer* buffer) override {
    replication.on_envelope(header, received, body, buffer);
  }

  void on_directive(Connection& from, std::span<const std::byte> body) override {
    detail::EpochGuard guard;  // the threads directives look up stay while they are used
    WireReader in(body, from.frame_buffer());
    Directive directive;
    in(directive);
    Incoming incoming{from, from.peer, in};
    std::visit([&](auto& d) { owner_of(d).handle(d, incoming); }, directive);
  }

  void on_lost(NodeId node, const std::string& reason) override {
    const bool expected = membership.expects_close(node);
    membership.sealed_by(node);
    // What it was to answer will not come, even when it left on purpose.
    replication.fail_requests_to(node, reason);
    // What it held of other threads' checkpoints is gone, even when it left on purpose (a shrink):
    // node 0 must not rebuild a thread there, and its threads checkpoint again elsewhere.
    if (!expected || !membership.ending()) backups.lost(node);  // before node 0 plans a recovery
    if (expected) return;
    membership.lost(node, reason);
  }

  void on_heartbeat() override {
    if (process.me != 0) traces.flush();
  }

  TcpOptions options;
  Identity identity;
  NodeProcess process;
  detail::Strands strands;
  Transport transport;
  RemoteTraces traces;
  Membership membership;
  Backups backups;
  Replication replication;
};

TcpBackend::TcpBackend(TcpOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

TcpBackend::~TcpBackend() { stop(); }

void TcpBackend::attach(Runtime& runtime) {
  runtime.link(&impl_->replication);  // before the network thread sees the runtime: its directives use the link
  impl_->process.attach(runtime);
}

std::vector<NodeId> TcpBackend::nodes() const { return impl_->membership.nodes(); }

NodeId TcpBackend::local_node() const { return impl_->process.me; }

bool TcpBackend::hosts(NodeId node) const { return node == impl_->process.me; }

NodeId TcpBackend::add_node() { return add_nodes(1).front(); }

std::vector<NodeId> TcpBackend::add_nodes(std::size_t count) {
  return impl_->membership.add_nodes(count, [this](NodeId node) { impl_->replication.send_structure(node); });
}

bool TcpBackend::can_add_nodes() const { return impl_->membership.can_add_nodes(); }

std::size_t TcpBackend::workers() const noexcept { return impl_->strands.workers(); }

void TcpBackend::remove_node(NodeId node) { impl_->membership.remove_node(node); }

int TcpBackend::scheduler_socket() {
  const char* address = std::getenv(job_protocol::kAddress);
  if (!address || impl_->process.me != 0) return -1;
  const char* job = std::getenv(job_protocol::kJob);
  if (!job || !*job)
    throw std::runtime_error(std::string(job_protocol::kAddress) + " is set, " + job_protocol::kJob + " is not");
  return connect_to_scheduler(address, std::string("job ") + job, impl_->identity.secret);
}

void TcpBackend::grant_hosts(std::vector<std::string> hosts) { impl_->membership.grant(hosts); }

std::string TcpBackend::released_host(NodeId node) { return impl_->membership.released_host(node); }

std::vector<std::string> TcpBackend::held_hosts() const { return impl_->membership.held_hosts(); }

// A message the network thread delivers to a quick thread is handled right there.
void TcpBackend::schedule(Thread& thread, Priority priority) {
  if (!impl_->transport.on_network_thread()) return impl_->strands.schedule(thread, priority);
  if (impl_->strands.run_here(thread, priority)) impl_->transport.ran_a_thread();
}

void TcpBackend::send(NodeId /*from: this node*/, Thread& to, Envelope* e) { impl_->replication.send(to, e); }

bool TcpBackend::migrate(Thread& thread, NodeId to, std::string state,
                         std::function<void(std::exception_ptr)> arrived) {
  return impl_->replication.send_thread(thread, to, std::move(state), std::move(arrived));
}

void TcpBackend::quiesce() { impl_->strands.quiesce(); }

// Node 0 tells the others first. From then on the network thread delivers nothing: it learns so
// between two frames.
void TcpBackend::stop() {
  impl_->membership.stop();
  impl_->transport.on_network([this] { impl_->process.detach(); });
}

double TcpBackend::now() const { return impl_->process.now(); }

unsigned TcpBackend::cores(NodeId node) const { return impl_->membership.cores(node); }

int TcpBackend::serve() { return impl_->membership.serve(); }

void TcpBackend::keep_backup(Thread& thread, std::shared_ptr<const detail::Checkpoint> checkpoint) {
  impl_->backups.keep(thread, std::move(checkpoint));
}

Backend::Backup TcpBackend::backup(std::uint64_t uid, bool with_checkpoint) const {
  return impl_->backups.backup(uid, with_checkpoint);
}

std::string TcpBackend::address() const {
  const Endpoint& at = impl_->transport.endpoint();
  return at.host + ":" + std::to_string(at.port);
}

long TcpBackend::process_id(NodeId node) const { return impl_->membership.process_id(node); }

std::size_t TcpBackend::send_buffer(NodeId node) const {
  detail::EpochGuard guard;  // the connection stays while it is asked
  Connection* c = impl_->transport.peer(node);
  if (!c) return 0;
  asio::socket_base::send_buffer_size size;
  asio::error_code error;
  c->socket().get_option(size, error);  // a getsockopt: safe beside the network thread's use of the socket
  return error ? 0 : static_cast<std::size_t>(size.value());
}

}  // namespace dps::net
