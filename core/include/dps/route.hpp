// Routes: which thread of a collection runs an operation for a given object. A route sees the
// collection's current size, so threads added or removed at run time are used at once.
//
//   dps::op<Add>(workers, dps::round_robin)                      // i-th object of a split -> thread i % n
//   dps::op<Gather>(master, dps::to(0))                          // always thread 0
//   dps::op<Add>(workers, [](const Range& r, std::size_t n) { return r.first / 1000 % n; })
//
// Defaults: round_robin for splits and leaves; for merges and streams, one thread per split frame
// (all objects of a frame meet on one thread, different frames spread over the collection).
//
// A route runs in the process of the thread that posts the object, so on a cluster every process
// needs it: a user route is a lambda without captures, or a type with a cereal serialize() (its
// state travels with the graph). A capturing lambda works only while all nodes share one process.
#pragma once

#include "dps/type_registry.hpp"
#include "dps/ids.hpp"
#include "dps/payload.hpp"

#include <cereal/cereal.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

namespace dps {

// What a route may look at besides the object.
struct RouteInfo {
  std::size_t threads;  // current collection size (> 0)
  std::uint64_t seq;    // position of the object in its innermost frame
  FrameId frame;        // innermost frame (0 for a call's input)
};

struct RoundRobin {};
inline constexpr RoundRobin round_robin{};

struct ByFrame {};
inline constexpr ByFrame by_frame{};

struct ToThread {
  std::size_t index;
};
inline constexpr ToThread to(std::size_t index) { return {index}; }

namespace detail {

// A route stored in a vertex: the built-in ones are dispatched without an indirect call.
struct RouteFn {
  enum class Kind : std::uint8_t { RoundRobin, ByFrame, Fixed, Custom } kind = Kind::RoundRobin;
  std::size_t fixed = 0;
  std::function<std::size_t(const Payload&, const RouteInfo&)> custom;
  const RouteType* type = nullptr;  // custom: how another process rebuilds it (null: this process only)
  std::string image;                // custom: the route object, serialized (empty when stateless)

  std::size_t operator()(const Payload& p, const RouteInfo& info) const {
    switch (kind) {
      case Kind::RoundRobin: return static_cast<std::size_t>(info.seq % info.threads);
      case Kind::ByFrame: return static_cast<std::size_t>((info.frame ^ (info.frame >> 29)) % info.threads);
      case Kind::Fixed: return fixed;
      case Kind::Custom: return custom(p, info);
    }
    return 0;
  }
};

template <class In, class R>
std::function<std::size_t(const Payload&, const RouteInfo&)> wrap_route(R route) {
  if constexpr (std::invocable<R, const In&, const RouteInfo&>) {
    return [route](const Payload& p, const RouteInfo& i) { return route(p.get<In>(), i); };
  } else if constexpr (std::invocable<R, const In&, std::size_t>) {
    return [route](const Payload& p, const RouteInfo& i) { return route(p.get<In>(), i.threads); };
  } else {
    static_assert(std::invocable<R, const In&>,
                  "dps: a route is round_robin, by_frame, to(i), or callable as (const In&), "
                  "(const In&, std::size_t threads) or (const In&, const RouteInfo&)");
    return [route](const Payload& p, const RouteInfo&) { return route(p.get<In>()); };
  }
}

template <class R>
constexpr bool stateless_route = std::is_empty_v<R> && std::is_default_constructible_v<R>;
template <class R>
constexpr bool serializable_route = cereal::traits::is_output_serializable<R, WireWriter>::value &&
                                    cereal::traits::is_input_serializable<R, WireReader>::value &&
                                    std::is_default_constructible_v<R>;

template <class In, class R>
void load_route(RouteFn& fn, WireReader& image) {
  R route{};
  if constexpr (!stateless_route<R>) image(route);
  fn.kind = RouteFn::Kind::Custom;
  fn.custom = wrap_route<In>(std::move(route));
}

template <class In, class R>
const RouteType& route_type() {
  static const RouteType& type =
      Registry<RouteType>::add({std::string(typeid(R).name()) + "<-" + typeid(In).name(), &typeid(R), &load_route<In, R>});
  return type;
}
template <class In, class R>
inline const RouteType& route_type_at_startup = route_type<In, R>();  // registers in every process

template <class In, class R>
RouteFn make_route(R route) {
  RouteFn fn;
  if constexpr (std::same_as<R, RoundRobin>) {
    fn.kind = RouteFn::Kind::RoundRobin;
  } else if constexpr (std::same_as<R, ByFrame>) {
    fn.kind = RouteFn::Kind::ByFrame;
  } else if constexpr (std::same_as<R, ToThread>) {
    fn.kind = RouteFn::Kind::Fixed;
    fn.fixed = route.index;
  } else {
    if constexpr (stateless_route<R> || serializable_route<R>) {
      (void)&route_type_at_startup<In, R>;
      fn.type = &route_type<In, R>();
      if constexpr (!stateless_route<R>) {
        std::vector<std::byte> bytes;
        WireWriter out(bytes, SIZE_MAX);
        out(route);
        fn.image.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      }
    }
    fn.kind = RouteFn::Kind::Custom;
    fn.custom = wrap_route<In>(std::move(route));
  }
  return fn;
}

}  // namespace detail
}  // namespace dps
