// Connection: the socket's life (opened, started, closed once); reading is in connection_reader.cpp,
// writing in connection_writer.cpp.
#include "dps/net/connection.hpp"

#include <deque>
#include <string>
#include <vector>

namespace dps::net {

Connection::Connection(asio::ip::tcp::socket socket, Handler& handler, std::size_t max_body)
    : socket_(std::move(socket)), handler_(handler), max_body_(max_body) {
  asio::error_code ec;
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  auto ep = socket_.remote_endpoint(ec);
  remote_ = ec ? "?" : ep.address().to_string() + ":" + std::to_string(ep.port());
}

Connection::~Connection() = default;

std::string Connection::remote() const { return remote_; }

void Connection::start() { reader_.start(); }

bool Connection::send(Outgoing&& frame) { return writer_.send(std::move(frame), false); }

void Connection::seal(Outgoing&& last) { (void)writer_.send(std::move(last), true); }

void Connection::pump() { writer_.pump(); }

void Connection::finish(std::string reason) { writer_.finish(std::move(reason)); }

void Connection::close(std::string reason) {
  asio::post(socket_.get_executor(), [self = shared_from_this(), reason = std::move(reason)] { self->fail(reason); });
}

void Connection::fail(const std::string& reason) {
  if (reported_.exchange(true)) return;
  std::deque<Outgoing> dropped, unwritten;
  writer_.close(dropped, unwritten);
  asio::error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  reader_.release();
  handler_.on_closed(*this, reason);
}

}  // namespace dps::net
