// The errors a DPS program can see. Every failure of a call reaches its future as one of these, with a
// message naming the operation and the thread, so a one-line report is enough to find the culprit.
//
//   try { graph.call(x).get(); }
//   catch (const dps::OperationError& e) { std::cerr << e.what() << '\n'; }   // operation 'Add' on ...
#pragma once

#include <exception>
#include <stdexcept>
#include <string>

namespace dps {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Something went wrong while an operation ran: it threw, its route chose a thread that does not
// exist, or it broke the rules of its type (a merge posting twice, a split posting nothing).
struct OperationError : Error {
  OperationError(std::string operation, std::string thread, unsigned node, const std::string& reason)
      : Error("operation '" + operation + "' on thread " + thread + " (node " + std::to_string(node) +
              ") failed: " + reason),
        operation(std::move(operation)),
        thread(std::move(thread)),
        node(node),
        reason(reason) {}
  std::string operation;
  std::string thread;
  unsigned node;
  std::string reason;
};

// A route returned an index outside its collection (thrown where the route is evaluated).
struct RouteError : Error {
  using Error::Error;
};

// A graph that cannot run: a merge without a matching split, a split without its merge, no vertices.
struct GraphError : Error {
  using Error::Error;
};

// A node of the application failed (its process died or stopped answering): the calls running
// when it happened fail with this error, naming the node.
struct NodeFailure : Error {
  NodeFailure(unsigned node, const std::string& reason)
      : Error("node " + std::to_string(node) + " failed: " + reason), node(node), reason(reason) {}
  unsigned node;
  std::string reason;
};

// The application was destroyed before the call completed.
struct ShutdownError : Error {
  using Error::Error;
};

// The message of an exception, for the error that reports it ("unknown exception" if it is no std::exception).
std::string describe(std::exception_ptr error);

}  // namespace dps
