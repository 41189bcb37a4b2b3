// How the parts of a TcpBackend receive directives (protocol.hpp). Each part lists the kinds it
// handles (its `Handles`) and has a handle(kind&, Incoming&) for each; the backend hands every
// directive to the one part whose list holds its kind, which the compiler checks.
//
//   using Handles = DirectiveKinds<Join, Members>;
//   void handle(Join& d, Incoming& in) { in.nothing_follows();  ... in.sender ... }
#pragma once

#include "dps/backend.hpp"
#include "dps/net/connection.hpp"
#include "dps/wire_archive.hpp"

#include <string>
#include <type_traits>

namespace dps::net {

template <class... Kinds>
struct DirectiveKinds {
  template <class D>
  static constexpr bool holds = (std::is_same_v<D, Kinds> || ...);
};

// A directive being handled: who sent it, on which connection, and what follows it in its frame
// (a payload, a thread's image).
struct Incoming {
  Connection& connection;
  NodeId sender;
  WireReader& rest;

  // For directives that nothing follows: throws WireError when something does.
  void nothing_follows() const {
    if (!rest.done()) throw WireError(std::to_string(rest.remaining()) + " bytes after the directive");
  }
};

}  // namespace dps::net
