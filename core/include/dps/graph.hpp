// Flow graphs: operations chained with >>, built at run time, called many times and concurrently.
//
//   auto g = app.graph(dps::op<Cut>(master) >> dps::op<Add>(workers) >> dps::op<Gather>(master));
//   dps::Future<Partial> f = g.call(Range{0, 1'000'000});         // any number of calls at once
//
//   // Composition: a graph stands where an operation stands.
//   auto outer = app.graph(dps::op<Blocks>(master) >> g >> dps::op<Sum>(master));
//
//   // Flow control: at most 64 objects of one split in flight before its merge consumed them.
//   dps::op<Cut>(master).window(64)
//
//   // Priority: the panel factorization of LU runs before the updates queued on its node.
//   dps::op<Factor>(columns, dps::to(level)).urgent()
//
// Edge types are checked at compile time (the output type of each side must be the input type of the
// next). Pairing is checked when the graph is built: every merge closes the frame of a split (or
// stream) before it, every split is closed by a merge after it; otherwise dps::GraphError.
#pragma once

#include "dps/errors.hpp"
#include "dps/future.hpp"
#include "dps/operation.hpp"
#include "dps/route.hpp"
#include "dps/threads.hpp"
#include "dps/vertex.hpp"

#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace dps {

class Runtime;    // the kernel of one application
struct GraphCore;  // a graph as the kernel runs it

template <class In, class Out>
class Chain {
 public:
  using input_type = In;
  using output_type = Out;

  explicit Chain(VertexList vertices) : vertices_(std::move(vertices)) {}
  const Chain& chain() const noexcept { return *this; }
  const VertexList& vertices() const noexcept { return vertices_; }

 private:
  VertexList vertices_;
};

// The default route: round_robin for splits and leaves, by_frame for merges and streams.
struct DefaultRoute {};

namespace detail {

// A call in progress: receives the graph's single output, or its failure.
class CallBase {
 public:
  explicit CallBase(std::shared_ptr<const GraphCore> graph) : graph(std::move(graph)) {}
  virtual ~CallBase() = default;
  virtual void complete(Payload&& result) = 0;
  virtual void fail(std::exception_ptr error) = 0;
  std::shared_ptr<const GraphCore> graph;
};

// What a graph asks the kernel (graph.cpp).
std::shared_ptr<const GraphCore> make_graph(Runtime& runtime, std::string name,
                                            const VertexList& vertices);  // throws GraphError
const VertexList& vertices_of(const GraphCore& graph) noexcept;
const std::string& name_of(const GraphCore& graph) noexcept;
Backend* driver_of(const Runtime& runtime) noexcept;  // what waits on the call's future
void start_call(Runtime& runtime, std::shared_ptr<const GraphCore> graph, Payload input,
                std::unique_ptr<CallBase> call);
// An operation type's name in traces and errors: its class name without namespaces.
std::string operation_name(const std::type_info& type);

template <class Op>
void run_leaf(Thread& t, Payload& p) {
  using In = typename Op::input_type;
  Op op;
  OpAccess::bind(op, t, nullptr);
  p = Payload::of(op.execute(p.take<In>()));
}

template <class Op>
Body* make_body(void* at) {
  return new (at) BodyOf<Op>();
}

template <class Op>
const OpType& op_type() {
  using In = typename Op::input_type;
  using Out = typename Op::output_type;
  static const OpType& type = Registry<OpType>::add([] {
    OpType t{typeid(Op).name(), &typeid(Op), Op::kind, nullptr, nullptr, 0, 1, &Payload::load<In>, &Payload::load<Out>};
    if constexpr (Op::kind == OpKind::Leaf) {
      t.run_leaf = &run_leaf<Op>;
    } else {
      t.make_body = &make_body<Op>;
      t.body_size = sizeof(BodyOf<Op>);
      t.body_align = alignof(BodyOf<Op>);
    }
    return t;
  }());
  return type;
}
template <class Op>
inline const OpType& op_type_at_startup = op_type<Op>();  // registers in every process before main

template <class Out>
class CallOf final : public CallBase {
 public:
  CallOf(std::shared_ptr<const GraphCore> graph, Promise<Out> promise)
      : CallBase(std::move(graph)), promise_(std::move(promise)) {}
  void complete(Payload&& result) override { promise_.set(result.take<Out>()); }
  void fail(std::exception_ptr error) override { promise_.fail(std::move(error)); }

 private:
  Promise<Out> promise_;
};

}  // namespace detail

// One operation bound to a collection and a route: the smallest chain.
template <class Op>
class OpChain : public Chain<typename Op::input_type, typename Op::output_type> {
 public:
  using Base = Chain<typename Op::input_type, typename Op::output_type>;
  explicit OpChain(std::shared_ptr<VertexSpec> spec) : Base(VertexList{spec}), spec_(std::move(spec)) {}

  // Flow control on the frames this split or stream opens.
  OpChain window(std::uint32_t objects) const {
    static_assert(Op::kind == OpKind::Split || Op::kind == OpKind::Stream,
                  "dps: a flow-control window belongs to a split or a stream");
    return with([&](VertexSpec& s) { s.window = objects; });
  }
  // Its steps on the critical path: a thread its input wakes runs before the threads already waiting
  // on its node (not before the thread's own earlier messages, nor preempting a running step).
  OpChain urgent() const {
    return with([](VertexSpec& s) { s.priority = Priority::Urgent; });
  }
  // The name shown in traces and errors (default: the operation's class name, without namespaces).
  OpChain named(std::string name) const {
    return with([&](VertexSpec& s) { s.name = std::move(name); });
  }

 private:
  template <class F>
  OpChain with(F&& change) const {
    auto copy = std::make_shared<VertexSpec>(*spec_);
    change(*copy);
    return OpChain(std::move(copy));
  }
  std::shared_ptr<VertexSpec> spec_;
};

template <class Op, class State, class R = DefaultRoute>
OpChain<Op> op(const Threads<State>& threads, R route = R{}) {
  using In = typename Op::input_type;
  using Out = typename Op::output_type;
  static_assert(std::is_same_v<typename Op::state_type, State>,
                "dps: the operation's thread state type differs from the collection's");
  static_assert(std::is_default_constructible_v<Op>, "dps: operations are default constructible");
  auto spec = std::make_shared<VertexSpec>();
  (void)&detail::op_type_at_startup<Op>;
  spec->type = &detail::op_type<Op>();
  spec->name = detail::operation_name(typeid(Op));
  spec->threads = &threads.core();
  if constexpr (std::is_same_v<R, DefaultRoute>) {
    if constexpr (Op::kind == OpKind::Merge || Op::kind == OpKind::Stream)
      spec->route = detail::make_route<In>(by_frame);
    else
      spec->route = detail::make_route<In>(round_robin);
  } else {
    spec->route = detail::make_route<In>(std::move(route));
  }
  if constexpr (Op::kind == OpKind::Leaf)
    static_assert(std::is_same_v<decltype(std::declval<Op&>().execute(std::declval<In>())), Out>,
                  "dps: a leaf's execute(In) returns its output type");
  else
    static_assert(std::is_same_v<decltype(std::declval<Op&>().execute(std::declval<In>())), Step>,
                  "dps: a split, merge or stream's execute(In) is a coroutine returning dps::Step");
  return OpChain<Op>(std::move(spec));
}

template <class L, class R>
requires requires(const L& l, const R& r) {
  l.chain();
  r.chain();
}
auto operator>>(const L& left, const R& right) {
  using LC = std::decay_t<decltype(left.chain())>;
  using RC = std::decay_t<decltype(right.chain())>;
  static_assert(std::is_same_v<typename LC::output_type, typename RC::input_type>,
                "dps: edge type mismatch: the output type on the left of >> is not the input type on its right");
  VertexList vertices = left.chain().vertices();
  const RC tail = right.chain();  // a Graph hands out its chain by value
  vertices.insert(vertices.end(), tail.vertices().begin(), tail.vertices().end());
  return Chain<typename LC::input_type, typename RC::output_type>(std::move(vertices));
}

template <class In, class Out>
class Graph {
 public:
  using input_type = In;
  using output_type = Out;

  Graph(Runtime& runtime, const Chain<In, Out>& chain, std::string name = "graph")
      : runtime_(&runtime), core_(detail::make_graph(runtime, std::move(name), chain.vertices())) {}

  // Starts a call; the future holds the graph's output, or an OperationError naming what failed.
  Future<Out> call(In input) const {
    Promise<Out> promise(detail::driver_of(*runtime_));
    Future<Out> result = promise.future();
    detail::start_call(*runtime_, core_, Payload::of(std::move(input)),
                       std::make_unique<detail::CallOf<Out>>(core_, std::move(promise)));
    return result;
  }

  Chain<In, Out> chain() const { return Chain<In, Out>(detail::vertices_of(*core_)); }
  const std::string& name() const noexcept { return detail::name_of(*core_); }

 private:
  Runtime* runtime_;
  std::shared_ptr<const GraphCore> core_;
};

}  // namespace dps
