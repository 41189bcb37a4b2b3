// The flow graph of a redistribution (dps/redistribution.hpp). The desk, one thread on node 0, holds
// the plan while the call runs; every part allocates its new storage, then the steps run one after
// the other, then every part takes its new storage:
//
//   Prepare (split, desk) >> Allocate (leaf, part) >>
//     [ Dispatch (stream, desk: step s) >> Pack (split, source) >> Unpack (leaf, destination)
//       >> Delivered (merge, destination) ] × steps >>
//   Finish (stream, desk) >> Install (leaf, part) >> Total (merge, desk)
//
// Pack cuts a message into pieces of about kPiece bytes, so that packing, the transfer and unpacking
// overlap instead of following each other.
#pragma once

#include "dps/graph.hpp"
#include "dps/large_array.hpp"
#include "dps/operation.hpp"
#include "dps/redistribution_plan.hpp"
#include "dps/threads.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dps::detail::redistribution {

template <auto member>
struct PartOf;
template <class S, class T, Part<T> S::*member>
struct PartOf<member> {
  using State = S;
  using Element = T;
  static Part<T>& of(S& state) { return state.*member; }
};

// The desk's state: the plan of the call under way (never migrated: the desk stays on node 0).
struct Desk {
  std::shared_ptr<const RedistributionPlan> plan;
  template <class A>
  void serialize(A&) {}
};

struct Start {
  RedistributionPlan plan;
  template <class A>
  void serialize(A& a) {
    a(plan);
  }
};
struct Done {
  std::uint32_t next = 0;  // the step that may start
  std::uint32_t part = 0;  // where it was done
  template <class A>
  void serialize(A& a) {
    a(next, part);
  }
};

inline constexpr std::size_t kPiece = std::size_t{1} << 20;  // bytes

// How a part stores its elements (Layout::offset, without the layout).
struct Storage {
  std::size_t stride = 0, margin = 0;
  std::size_t at(std::size_t row, std::size_t col) const noexcept { return (row + margin) * stride + col + margin; }
  template <class A>
  void serialize(A& a) {
    a(stride, margin);
  }
};
inline Storage storage_of(const Layout& layout, std::size_t part) { return {layout.stride(part), layout.margin()}; }

struct Shape {  // part `part` of the new layout: `rows` rows, margin included (none: it leaves)
  std::uint32_t part = 0;
  std::size_t rows = 0;
  Storage storage;
  bool keeps = false;
  template <class A>
  void serialize(A& a) {
    a(part, rows, storage, keeps);
  }
};
struct Send {
  std::uint32_t from = 0, to = 0, step = 0;
  std::vector<Rect> rects;
  std::size_t elements = 0;
  Storage source, destination;
  template <class A>
  void serialize(A& a) {
    a(from, to, step, rects, elements, source, destination);
  }
};
template <class T>
struct Piece {
  std::uint32_t to = 0, step = 0;
  std::vector<Rect> rects;
  Storage destination;
  LargeArray<T> data;
  template <class A>
  void serialize(A& a) {
    a(to, step, rects, destination, data);
  }
};
struct Commit {
  std::uint32_t part = 0;
  bool keeps = false;
  template <class A>
  void serialize(A& a) {
    a(part, keeps);
  }
};

struct Prepare : Split<Start, Shape, Desk> {
  Step execute(Start start) {
    begin_phase("redistribution");
    thread().plan = std::make_shared<const RedistributionPlan>(std::move(start.plan));
    const RedistributionPlan& plan = *thread().plan;
    for (std::uint32_t p = 0; p < plan.parts(); ++p) {
      const bool keeps = p < plan.to.parts();
      co_await post(Shape{p, keeps ? plan.to.local_rows(p) + 2 * plan.to.margin() : 0,
                          keeps ? storage_of(plan.to, p) : Storage{}, keeps});
    }
  }
};

// The new part, its margin zeroed: the rest is written by the steps.
template <class Access>
struct Allocate : Leaf<Shape, Done, typename Access::State> {
  Done execute(const Shape& s) {
    if (!s.keeps) return {0, s.part};
    using T = typename Access::Element;
    const std::size_t stride = s.storage.stride, m = s.storage.margin;
    auto& to = Access::of(this->thread()).incoming = LargeArray<T>::uninitialized(s.rows * stride);
    if (to.allocated() && m > 0) {
      std::fill_n(to.data(), m * stride, T{});
      std::fill_n(to.data() + (s.rows - m) * stride, m * stride, T{});
      for (std::size_t i = m; i + m < s.rows; ++i) {
        std::fill_n(to.data() + i * stride, m, T{});
        std::fill_n(to.data() + (i + 1) * stride - m, m, T{});
      }
    }
    return {0, s.part};
  }
};

struct Dispatch : Stream<Done, Send, Desk> {
  Step execute(Done first) {
    while (auto more = co_await next()) {
    }
    const RedistributionPlan& plan = *thread().plan;
    for (std::uint32_t index : plan.steps.at(first.next)) {
      const Transfer& t = plan.transfers[index];
      Send send{t.from, t.to, first.next, t.rects, t.elements, storage_of(plan.from, t.from), storage_of(plan.to, t.to)};
      co_await post(std::move(send));
    }
  }
};

template <class Access>
struct Pack : Split<Send, Piece<typename Access::Element>, typename Access::State> {
  using T = typename Access::Element;
  Step execute(Send s) {
    const std::size_t limit = std::max<std::size_t>(1, kPiece / sizeof(T));
    std::vector<Rect> rects;  // of the piece under way: whole rows of the message's rectangles
    std::size_t elements = 0;
    for (const Rect& r : s.rects)
      for (std::size_t row = 0; row < r.rows;) {
        const std::size_t rows = std::min(r.rows - row, std::max<std::size_t>(1, (limit - elements) / r.cols));
        rects.push_back({r.from_row + row, r.from_col, r.to_row + row, r.to_col, rows, r.cols});
        elements += rows * r.cols;
        row += rows;
        if (elements >= limit) {
          Piece<T> piece = cut(s, std::move(rects), elements);
          co_await this->post(std::move(piece));
          rects.clear();
          elements = 0;
        }
      }
    if (!rects.empty() || s.elements == 0) {
      Piece<T> piece = cut(s, std::move(rects), elements);
      co_await this->post(std::move(piece));
    }
  }

 private:
  Piece<T> cut(const Send& s, std::vector<Rect> rects, std::size_t elements) {
    const LargeArray<T>& from = Access::of(this->thread()).data;
    Piece<T> piece{s.to, s.step, std::move(rects), s.destination, LargeArray<T>::uninitialized(elements)};
    if (from.allocated() && piece.data.allocated()) {
      T* out = piece.data.data();
      for (const Rect& r : piece.rects)
        for (std::size_t i = 0; i < r.rows; ++i, out += r.cols)
          std::copy_n(from.data() + s.source.at(r.from_row + i, r.from_col), r.cols, out);
    }
    return piece;
  }
};

template <class Access>
struct Unpack : Leaf<Piece<typename Access::Element>, Done, typename Access::State> {
  Done execute(const Piece<typename Access::Element>& p) {
    auto& to = Access::of(this->thread()).incoming;
    if (to.allocated() && p.data.allocated()) {
      const auto* in = p.data.data();
      for (const Rect& r : p.rects)
        for (std::size_t i = 0; i < r.rows; ++i, in += r.cols)
          std::copy_n(in, r.cols, to.data() + p.destination.at(r.to_row + i, r.to_col));
    }
    return {p.step + 1, p.to};
  }
};

// Every piece of a message is in place.
template <class Access>
struct Delivered : Merge<Done, Done, typename Access::State> {
  Step execute(Done d) {
    while (auto more = co_await this->next()) {
    }
    co_await this->post(d);
  }
};

struct Finish : Stream<Done, Commit, Desk> {
  Step execute(Done) {
    while (auto more = co_await next()) {
    }
    const RedistributionPlan& plan = *thread().plan;
    for (std::uint32_t p = 0; p < plan.parts(); ++p) co_await post(Commit{p, p < plan.to.parts()});
  }
};

template <class Access>
struct Install : Leaf<Commit, Done, typename Access::State> {
  Done execute(const Commit& c) {
    auto& part = Access::of(this->thread());
    part.data = c.keeps ? std::move(part.incoming) : LargeArray<typename Access::Element>();
    part.incoming = {};
    return {0, c.part};
  }
};

struct Total : Merge<Done, Redistributed, Desk> {
  Step execute(Done) {
    while (auto more = co_await next()) {
    }
    const RedistributionPlan& plan = *thread().plan;
    const Redistributed done{plan.steps.size(), plan.transfers.size(), plan.moved()};
    thread().plan.reset();
    end_phase("redistribution");
    co_await post(done);
  }
};

struct ByPart {
  std::size_t operator()(const Shape& s, std::size_t) const { return s.part; }
  std::size_t operator()(const Done& d, std::size_t) const { return d.part; }
  std::size_t operator()(const Commit& c, std::size_t) const { return c.part; }
};
struct BySource {
  std::size_t operator()(const Send& s, std::size_t) const { return s.from; }
};
struct ByDestination {
  template <class T>
  std::size_t operator()(const Piece<T>& p, std::size_t) const {
    return p.to;
  }
};

template <class Access>
Chain<Start, Redistributed> graph(const Threads<typename Access::State>& parts, const Threads<Desk>& desk,
                                  std::size_t steps) {
  auto chain = op<Prepare>(desk, to(0)) >> op<Allocate<Access>>(parts, ByPart{}).named("redistribute: allocate");
  Chain<Start, Done> through(chain.vertices());
  for (std::size_t s = 0; s < steps; ++s) {
    auto step = op<Dispatch>(desk, to(0)).named("redistribute: step " + std::to_string(s + 1)) >>
                op<Pack<Access>>(parts, BySource{}).named("redistribute: pack") >>
                op<Unpack<Access>>(parts, ByDestination{}).named("redistribute: unpack") >>
                op<Delivered<Access>>(parts, ByPart{}).named("redistribute: delivered");
    through = through >> step;
  }
  return through >> op<Finish>(desk, to(0)) >> op<Install<Access>>(parts, ByPart{}).named("redistribute: install") >>
         op<Total>(desk, to(0));
}

}  // namespace dps::detail::redistribution
