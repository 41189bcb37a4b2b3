// The simulator's engine against exact analytic cases: transfer times, bandwidth sharing (equal and
// max-min), cores shared by steps, node speed, and the CPU that transfers take from steps; and the
// star's sharing against recomputing every rate at every event.
#include "sim_reference.hpp"

#include <gtest/gtest.h>

namespace dps::sim {
namespace {

using namespace checks;

TEST(SimEngine, OneTransferTakesLatencyPlusSizeOverBandwidth) {
  Engine engine(star(2));
  Clock clock(engine);
  const double s = 1e6;
  engine.transfer(0, 1, s, {&clock, 1});
  while (engine.step()) {}
  expect_near_relative(clock.ended.at(1), kLatency + s / kBandwidth);
}

TEST(SimEngine, TwoTransfersIntoOneNodeShareItsBandwidthEqually) {
  Engine engine(star(3));
  Clock clock(engine);
  const double s = 1e6;
  engine.transfer(0, 2, s, {&clock, 1});
  engine.transfer(1, 2, s, {&clock, 2});
  while (engine.step()) {}
  expect_near_relative(clock.ended.at(1), kLatency + s / (kBandwidth / 2));
  expect_near_relative(clock.ended.at(2), kLatency + s / (kBandwidth / 2));
}

// Three messages on one node pair, and one on another pair into the same node. With flows each is
// a flow of its own and they share; with fifo connections the pair's messages go one after another
// (the later ones' latency overlapped their wait), while the other pair still shares the link.
TEST(SimEngine, FifoConnectionsSendAPairsMessagesOneAfterAnother) {
  const double s = 1e6, t = s / kBandwidth;
  for (const bool fifo : {false, true}) {
    ClusterModel m = star(3);
    m.network.fifo = fifo;
    Engine engine(m);
    Clock clock(engine);
    for (std::uint64_t k = 1; k <= 3; ++k) engine.transfer(0, 1, s, {&clock, k});
    while (engine.step()) {}
    if (!fifo) {
      for (std::uint64_t k = 1; k <= 3; ++k) expect_near_relative(clock.ended.at(k), kLatency + 3 * t);
    } else {
      for (std::uint64_t k = 1; k <= 3; ++k) expect_near_relative(clock.ended.at(k), kLatency + static_cast<double>(k) * t);
    }
  }
  ClusterModel m = star(3);
  m.network.fifo = true;
  Engine engine(m);
  Clock clock(engine);
  engine.transfer(0, 2, s, {&clock, 1});
  engine.transfer(0, 2, s, {&clock, 2});
  engine.transfer(1, 2, s, {&clock, 3});  // another pair: shares node 2's incoming link
  while (engine.step()) {}
  expect_near_relative(clock.ended.at(1), kLatency + 2 * t);  // half the link while 3 flows
  expect_near_relative(clock.ended.at(3), kLatency + 2 * t);
  expect_near_relative(clock.ended.at(2), kLatency + 3 * t);  // then the whole link
}

// On a fifo pair, an urgent message passes the bulk ones waiting, but not the one in progress, nor an
// ordered one, nor an earlier urgent one: bulk 1 is on its way; bulk 2, ordered 3, bulk 4 and 5 wait;
// urgent 6 and 7 go after 3, before 4.
TEST(SimEngine, AnUrgentMessagePassesTheBulkWaitingOnItsPairAndNothingElse) {
  const double s = 1e6, t = s / kBandwidth;
  ClusterModel m = star(2);
  m.network.fifo = true;
  Engine engine(m);
  Clock clock(engine);
  const Lane lanes[] = {Lane::bulk, Lane::bulk, Lane::ordered, Lane::bulk, Lane::bulk, Lane::urgent, Lane::urgent};
  for (std::uint64_t k = 1; k <= 7; ++k) engine.transfer(0, 1, s, {&clock, k}, lanes[k - 1]);
  while (engine.step()) {}
  const std::uint64_t order[] = {1, 2, 3, 6, 7, 4, 5};
  for (std::size_t place = 0; place < 7; ++place)
    expect_near_relative(clock.ended.at(order[place]), kLatency + static_cast<double>(place + 1) * t);
}

// Flow A: 0 -> 1; B: 0 -> 2; C: 3 -> 2; D: 4 -> 2. Node 2's incoming link is shared by three flows
// (b/3 each); node 0's outgoing link by two. Under `equal` A gets b/2 (its share of node 0's link)
// and node 0's link stays partly idle; under max-min B is held to b/3 by node 2, so A gets the rest
// of node 0's link, 2b/3. B, C and D take s / (b/3) under both.
double finish_of_a(Sharing sharing, double& finish_of_b) {
  Engine engine(star(5, sharing));
  Clock clock(engine);
  const double s = 1e6;
  engine.transfer(0, 1, s, {&clock, 'A'});
  engine.transfer(0, 2, s, {&clock, 'B'});
  engine.transfer(3, 2, s, {&clock, 'C'});
  engine.transfer(4, 2, s, {&clock, 'D'});
  while (engine.step()) {}
  finish_of_b = clock.ended.at('B');
  EXPECT_EQ(clock.ended.at('C'), clock.ended.at('B'));
  EXPECT_EQ(clock.ended.at('D'), clock.ended.at('B'));
  return clock.ended.at('A');
}

TEST(SimEngine, EqualAndMaxMinSharingDifferWhereEqualLeavesBandwidthIdle) {
  const double s = 1e6, b = kBandwidth;
  double b_equal = 0, b_maxmin = 0;
  const double a_equal = finish_of_a(Sharing::Equal, b_equal);
  const double a_maxmin = finish_of_a(Sharing::MaxMin, b_maxmin);
  expect_near_relative(a_equal, kLatency + s / (b / 2));
  expect_near_relative(a_maxmin, kLatency + s / (2 * b / 3));
  expect_near_relative(b_equal, kLatency + s / (b / 3));
  expect_near_relative(b_maxmin, kLatency + s / (b / 3));
}

TEST(SimEngine, ThreeStepsShareOneCore) {
  Engine engine(star(1));
  Clock clock(engine);
  engine.compute(0, 1.0, {&clock, 1});
  engine.compute(0, 2.0, {&clock, 2});
  engine.compute(0, 3.0, {&clock, 3});
  while (engine.step()) {}
  // A third of the core each until the first ends at 3; half each until the second ends at 3 + 2;
  // the last has 1 left alone.
  expect_near_relative(clock.ended.at(1), 3.0);
  expect_near_relative(clock.ended.at(2), 5.0);
  expect_near_relative(clock.ended.at(3), 6.0);
}

TEST(SimEngine, StepsOnTwoCoresRunSideBySideThenShare) {
  ClusterModel m = star(1);
  m.groups[0].cores = 2;
  Engine engine(m);
  Clock clock(engine);
  engine.compute(0, 1.0, {&clock, 1});
  engine.compute(0, 1.0, {&clock, 2});
  engine.compute(0, 1.0, {&clock, 3});
  while (engine.step()) {}
  // 2 cores for 3 steps: 2/3 of a core each; all end at 1.5.
  for (int tag : {1, 2, 3}) expect_near_relative(clock.ended.at(tag), 1.5);
}

// Time slicing: 3 steps on 2 cores take turns of 0.9 ms, each switch costing 0.1 ms, so the host
// does 0.9 of its cores' work: 0.6 of a core each, until the short one ends at 0.5 s; then 2 steps
// on 2 cores run side by side at full speed. Likewise when steps and transfers share cores per byte.
TEST(SimEngine, MoreStepsThanCoresTakeTurnsAndTheSwitchesCostTheHost) {
  for (const CommCpu per : {CommCpu::Link, CommCpu::Byte}) {
    ClusterModel m = star(1);
    m.groups[0].cores = 2;
    m.groups[0].time_slice = 0.9e-3;
    m.groups[0].context_switch = 0.1e-3;
    m.network.cpu_per = per;
    Engine engine(m);
    Clock clock(engine);
    engine.compute(0, 0.3, {&clock, 1});
    engine.compute(0, 1.0, {&clock, 2});
    engine.compute(0, 1.0, {&clock, 3});
    while (engine.step()) {}
    expect_near_relative(clock.ended.at(1), 0.5);
    expect_near_relative(clock.ended.at(2), 0.5 + (1.0 - 0.3));
    expect_near_relative(clock.ended.at(3), 0.5 + (1.0 - 0.3));
  }
}

TEST(SimEngine, AHeterogeneousNodeRunsAStepAtHalfSpeed) {
  ClusterModel m = star(1);
  m.groups = {NodeGroup{"fast", 1, 1, 1.0}, NodeGroup{"slow", 1, 1, 0.5}};
  Engine engine(m);
  Clock clock(engine);
  engine.compute(0, 1.0, {&clock, 0});
  engine.compute(1, 1.0, {&clock, 1});
  while (engine.step()) {}
  expect_near_relative(clock.ended.at(0), 1.0);
  expect_near_relative(clock.ended.at(1), 2.0);
}

// Four node processes on one 2-core host (nodes_per_host 4), as `--nodes 4` on a 2-core machine: a
// step alone has a core; three steps on three of them share the two cores (2/3 each); and a step on
// the next host (nodes_per_host 2 splits the group in two hosts) shares nothing with them.
TEST(SimEngine, NodesOnOneHostShareItsCores) {
  ClusterModel m = star(4);
  m.groups[0].cores = 2;
  m.groups[0].nodes_per_host = 4;
  {
    Engine engine(m);
    Clock clock(engine);
    engine.compute(3, 1.0, {&clock, 0});
    while (engine.step()) {}
    expect_near_relative(clock.ended.at(0), 1.0);
  }
  {
    Engine engine(m);
    Clock clock(engine);
    engine.compute(0, 1.0, {&clock, 0});
    engine.compute(1, 1.0, {&clock, 1});
    engine.compute(2, 2.0, {&clock, 2});
    while (engine.step()) {}
    // 2/3 of a core each until 1.5, then node 2's step alone on a core: its last 1 unit by 2.5.
    expect_near_relative(clock.ended.at(0), 1.5);
    expect_near_relative(clock.ended.at(1), 1.5);
    expect_near_relative(clock.ended.at(2), 2.5);
  }
  m.groups[0].nodes_per_host = 2;
  Engine engine(m);
  Clock clock(engine);
  for (VNode v : {0u, 1u, 2u}) engine.compute(v, 1.0, {&clock, v});
  engine.compute(0, 1.0, {&clock, 3});  // host 0: 3 steps on 2 cores; host 1: one step
  while (engine.step()) {}
  for (int tag : {0, 1, 3}) expect_near_relative(clock.ended.at(tag), 1.5);
  expect_near_relative(clock.ended.at(2), 1.0);
}

// A host's transfers take their CPU from every node's steps there: a transfer out of node 0 at 0.5 of
// a core leaves node 1's two steps 1.5 cores of the host's 2.
TEST(SimEngine, TransfersTakeTheirCpuFromTheirHost) {
  ClusterModel m = star(3);
  m.groups = {NodeGroup{"host", 2, 2, 1.0}, NodeGroup{"other", 1, 2, 1.0}};
  m.groups[0].nodes_per_host = 2;
  m.network.cpu_per_send = 0.5;
  Engine engine(m);
  Clock clock(engine);
  const double s = 1e9;  // a long transfer: the steps end while it runs
  engine.compute(1, 1.0, {&clock, 1});
  engine.compute(1, 1.0, {&clock, 2});
  engine.transfer(0, 2, s, {&clock, 3});
  while (engine.step()) {}
  // The transfer holds its CPU from its start (latency included): 0.75 of a core each.
  expect_near_relative(clock.ended.at(1), 1.0 / 0.75);
  expect_near_relative(clock.ended.at(2), 1.0 / 0.75);
}

// A host held to a quarter of a core per 4 ms period (a cgroup's cpu.max "1000 4000"): a step runs at
// full speed for 1 ms, waits 3 ms, and so on; two steps share the same budget. The second host's
// period begins at its own phase (0.618 of a period), with its whole budget.
TEST(SimEngine, AHostUnderACpuQuotaRunsItsBudgetThenWaitsForTheNextPeriod) {
  constexpr double kQuotaSlack = 1e-8;  // the engine overdraws a budget by 10^-9 of a period
  ClusterModel m = star(2);
  m.groups[0].quota = 0.25;
  m.groups[0].quota_period = 0.004;
  {
    Engine engine(m);
    Clock clock(engine);
    engine.compute(0, 0.0025, {&clock, 0});
    engine.compute(1, 0.002, {&clock, 1});
    while (engine.step()) {}
    EXPECT_NEAR(clock.ended.at(0), 0.0085, kQuotaSlack);  // 0-1, 4-5, 8-8.5 ms
    EXPECT_NEAR(clock.ended.at(1), 0.004 * 0.6180339887498949 + 0.001, kQuotaSlack);
  }
  {
    Engine engine(m);
    Clock clock(engine);
    engine.compute(0, 0.001, {&clock, 0});
    engine.compute(0, 0.001, {&clock, 1});
    while (engine.step()) {}
    // Half a core each: the budget is spent at 1 ms, half their work done; the rest in the next period.
    EXPECT_NEAR(clock.ended.at(0), 0.005, kQuotaSlack);
    EXPECT_NEAR(clock.ended.at(1), 0.005, kQuotaSlack);
  }
  Engine engine(m);
  Clock clock(engine);
  engine.compute(0, 1.0, {&clock, 0});
  while (engine.step()) {}
  EXPECT_NEAR(clock.ended.at(0), 3.997, kQuotaSlack);  // a quarter of the speed over 1000 periods
  engine.timer(10.0, {&clock, 1});  // idle over many periods: the next step has a whole budget at once
  while (engine.step()) {}
  engine.compute(0, 0.001, {&clock, 2});
  while (engine.step()) {}
  EXPECT_NEAR(clock.ended.at(2), 10.001, kQuotaSlack);
}

// A message costs each end CPU of its own (system calls, wakeups, the runtime's handling), beside
// the steps there: its sender's when it is sent, its receiver's when it arrives.
TEST(SimEngine, AMessageCostsItsSenderAndItsReceiverCpu) {
  ClusterModel m = star(2);  // a core each
  m.network.latency = 1e-4;
  m.network.cpu_per_message = 2e-4;
  Engine engine(m);
  Clock clock(engine);
  engine.compute(0, 1e-3, {&clock, 0});
  engine.compute(1, 1e-3, {&clock, 1});
  engine.transfer(0, 1, 0.0, {&clock, 2});
  while (engine.step()) {
  }
  expect_near_relative(clock.ended.at(2), 1e-4);
  // Each step shares its core with the message's 0.2 ms (from 0 on node 0, from 0.1 ms on node 1).
  expect_near_relative(clock.ended.at(0), 1.2e-3);
  expect_near_relative(clock.ended.at(1), 1.2e-3);

  // A sender that charged it already (a step that writes what it sends): only the receiver pays here.
  Engine charged(m);
  Clock after(charged);
  charged.compute(0, 1e-3, {&after, 0});
  charged.compute(1, 1e-3, {&after, 1});
  charged.transfer(0, 1, 0.0, {&after, 2}, Lane::ordered, SenderPaid{.message = true});
  while (charged.step()) {
  }
  expect_near_relative(after.ended.at(0), 1e-3);
  expect_near_relative(after.ended.at(1), 1.2e-3);
}

// A received message is unpacked before it is delivered: s · c of its receiver's CPU (the copy into
// fresh memory and its first-touch faults), on the node's network thread, sharing the core with a
// step there; and a message arriving meanwhile waits its turn, as the one thread reads them in order.
TEST(SimEngine, AReceivedMessageIsUnpackedOnItsReceiversCpuBeforeItIsDelivered) {
  ClusterModel m = star(3);  // a core each
  m.network.cpu_per_received_byte = 2e-9;
  const double s = 1e6, arrived = kLatency + s / kBandwidth, unpack = s * 2e-9;  // 2 ms
  {
    Engine engine(m);
    Clock clock(engine);
    engine.transfer(0, 1, s, {&clock, 1});
    while (engine.step()) {}
    expect_near_relative(clock.ended.at(1), arrived + unpack);
    const double end = engine.now();
    expect_near_relative(engine.usage().at(1, Usage::CommCores).total(end), unpack);
    EXPECT_EQ(engine.usage().at(1, Usage::StepCores).total(end), 0.0);
  }
  Engine engine(m);
  Clock clock(engine);
  engine.compute(1, 0.1, {&clock, 0});  // a step of 0.1 s on the receiver
  engine.transfer(0, 1, s, {&clock, 1});
  engine.advance_to(arrived + unpack / 2);  // the first is being unpacked, at half a core
  engine.transfer(2, 1, 0.0, {&clock, 2});  // arrives at + 0.1 ms, waits for the first
  while (engine.step()) {}
  expect_near_relative(clock.ended.at(1), arrived + 2 * unpack);  // half the core while the step runs
  expect_near_relative(clock.ended.at(2), arrived + 2 * unpack);
  expect_near_relative(clock.ended.at(0), 0.1 + unpack);
}

// Two transfers out of node 0 at once, beside a step there: per transfer they take 2 × 0.25 of its
// core; per link, 0.25 (the link carries the same bytes per second however many share it).
TEST(SimEngine, CommunicationCpuPerTransferOrPerLink) {
  for (const bool per_link : {false, true}) {
    ClusterModel m = star(3);
    m.network.cpu_per_send = 0.25;
    m.network.cpu_per = per_link ? CommCpu::Link : CommCpu::Transfer;
    Engine engine(m);
    Clock clock(engine);
    const double s = 1.25e7;  // alone 0.1 s; two share node 0's link: both end at l + 0.2 s
    engine.compute(0, 1.0, {&clock, 1});
    engine.transfer(0, 1, s, {&clock, 2});
    engine.transfer(0, 2, s, {&clock, 3});
    while (engine.step()) {}
    const double t = kLatency + 2 * s / kBandwidth, used = per_link ? 0.25 : 0.5;
    expect_near_relative(clock.ended.at(3), t);
    expect_near_relative(clock.ended.at(1), t + (1.0 - (1 - used) * t));
  }
}

TEST(SimEngine, CommunicationCpuLengthensAConcurrentStep) {
  ClusterModel m = star(2);
  m.network.cpu_per_send = 0.5;
  Engine engine(m);
  Clock clock(engine);
  const double s = 2.5e7;  // T = l + s/b = 0.2001 s, while the step runs at half speed
  engine.compute(0, 1.0, {&clock, 1});
  engine.transfer(0, 1, s, {&clock, 2});
  while (engine.step()) {}
  const double t = kLatency + s / kBandwidth;
  expect_near_relative(clock.ended.at(2), t);
  expect_near_relative(clock.ended.at(1), t + (1.0 - 0.5 * t));  // 0.5 t of work done during the transfer
}

// A caller that copied half a message into the socket (the runtime's step, SenderPaid) leaves its
// transfer half the sending CPU: 0.25 of node 0's core instead of 0.5, from its start per transfer and
// per link, over its bytes' flow per byte. The step beside it runs at 0.75 instead of 0.5; with the
// whole message paid, at full speed.
TEST(SimEngine, ATransferChargesItsSourceTheSendingCpuOfTheBytesItsCallerDidNotCopy) {
  const double s = 0.2 * kBandwidth;
  for (const CommCpu per : {CommCpu::Transfer, CommCpu::Link, CommCpu::Byte})
    for (const double paid : {0.0, 0.5, 1.0}) {
      SCOPED_TRACE("cpu_per " + std::to_string(static_cast<int>(per)) + ", paid " + std::to_string(paid));
      ClusterModel m = star(2);
      m.network.cpu_per_send = 0.5;
      m.network.cpu_per = per;
      Engine engine(m);
      Clock clock(engine);
      engine.compute(0, 1.0, {&clock, 1});
      engine.transfer(0, 1, s, {&clock, 2}, Lane::ordered, SenderPaid{.bytes = paid * s});
      while (engine.step()) {}
      const double used = 0.5 * (1 - paid), busy = per == CommCpu::Byte ? 0.2 : kLatency + 0.2;
      expect_near_relative(clock.ended.at(2), kLatency + 0.2);
      expect_near_relative(clock.ended.at(1), 1.0 + used * busy);
    }
}

// Per link, the sending CPU is the link's less what the steps copied of the transfers on it (their
// mean share): four transfers out of node 0, each three quarters copied, take 0.125 of its core.
// Per byte, the links stay shared max-min whatever each flow's step copied: a flow all but copied
// and one not copied at all each get half of node 0's link.
TEST(SimEngine, WhatTheStepsCopiedLightensTheLinksCpuAndNotTheirShareOfIt) {
  ClusterModel m = star(5);
  m.network.cpu_per_send = 0.5;
  m.network.cpu_per = CommCpu::Link;
  Engine engine(m);
  Clock clock(engine);
  const double s = 0.05 * kBandwidth;  // 0.2 s at a quarter of the link
  engine.compute(0, 1.0, {&clock, 1});
  for (VNode to = 1; to <= 4; ++to)
    engine.transfer(0, to, s, {&clock, to + 1}, Lane::ordered, SenderPaid{.bytes = 0.75 * s});
  while (engine.step()) {}
  for (std::uint64_t tag = 2; tag <= 5; ++tag) expect_near_relative(clock.ended.at(tag), kLatency + 0.2);
  expect_near_relative(clock.ended.at(1), 1.0 + 0.125 * (kLatency + 0.2));

  ClusterModel b = star(3);
  b.network.cpu_per_send = 0.5;
  b.network.cpu_per = CommCpu::Byte;
  Engine bytes(b);
  Clock at(bytes);
  const double t = 0.1 * kBandwidth;  // 0.2 s at half the link
  bytes.transfer(0, 1, t, {&at, 1}, Lane::ordered, SenderPaid{.bytes = 0.99 * t});
  bytes.transfer(0, 2, t, {&at, 2});
  while (bytes.step()) {}
  expect_near_relative(at.ended.at(1), kLatency + 0.2);
  expect_near_relative(at.ended.at(2), kLatency + 0.2);
}

// Fifo connections: what a pair's messages still hold of its socket's buffer, until each arrives.
TEST(SimEngine, AFifoConnectionHoldsItsMessagesBytesUntilTheyArrive) {
  const double s = 1e6, t = s / kBandwidth;
  for (const bool fifo : {false, true}) {
    ClusterModel m = star(2);
    m.network.fifo = fifo;
    Engine engine(m);
    Clock clock(engine);
    for (std::uint64_t k = 1; k <= 3; ++k) engine.transfer(0, 1, s, {&clock, k});
    EXPECT_EQ(engine.unsent(0, 1), fifo ? 3 * s : 0.0);
    EXPECT_EQ(engine.unsent(1, 0), 0.0);
    engine.advance_to(kLatency + 1.5 * t);  // fifo: the first one arrived, the second on its way
    EXPECT_EQ(engine.unsent(0, 1), fifo ? 2 * s : 0.0);
    while (engine.step()) {}
    EXPECT_EQ(engine.unsent(0, 1), 0.0);
  }
}

// cpu_per byte: a step and a transfer between two nodes of one single-core host share its core. The
// transfer needs half a core at each end at full bandwidth, so at level t the step uses t and the
// transfer 2t of the core: t = 1/3, and the transfer goes at 2/3 of the link (0.3 s instead of 0.2).
// Per link, the transfer took the whole core from its start, at full bandwidth, and the step waited.
TEST(SimEngine, WithCpuPerByteStepsAndTransfersShareAHostsCoresAndTheTransfersSlowDown) {
  const double s = 0.2 * kBandwidth;
  for (const CommCpu per : {CommCpu::Byte, CommCpu::Link}) {
    ClusterModel m = star(2);
    m.groups[0].nodes_per_host = 2;
    m.network.cpu_per_send = m.network.cpu_per_receive = 0.5;
    m.network.cpu_per = per;
    Engine engine(m);
    Clock clock(engine);
    engine.compute(0, 1.0, {&clock, 1});
    engine.transfer(0, 1, s, {&clock, 2});
    while (engine.step()) {}
    if (per == CommCpu::Byte) {
      expect_near_relative(clock.ended.at(2), kLatency + 0.3);
      // A whole core over the latency, a third over the transfer, then a whole core again.
      expect_near_relative(clock.ended.at(1), 1.2);
      const double end = engine.now();
      expect_near_relative(engine.usage().at(0, Usage::CommCores).total(end), 0.5 * 0.2);  // half a core per link-second
      expect_near_relative(engine.usage().at(0, Usage::StepCores).total(end), 1.0);  // the step's work, at speed 1
      expect_near_relative(engine.usage().at(1, Usage::LinkIn).total(end), 0.2);
    } else {
      expect_near_relative(clock.ended.at(2), kLatency + 0.2);
      expect_near_relative(clock.ended.at(1), 1.2 + kLatency);
    }
  }
}

// cpu_per byte: a transfer held to half its link by its destination's (two senders into node 2) uses
// half the CPU at its source, where a step runs: 0.25 of node 0's core, the step 0.75. Per link it
// took 0.5 from its start, latency included.
TEST(SimEngine, WithCpuPerByteATransferSlowedElsewhereTakesLessCpuFromTheStepsAtItsSource) {
  const double s = 0.1 * kBandwidth;  // 0.2 s at half the link
  for (const CommCpu per : {CommCpu::Byte, CommCpu::Link}) {
    ClusterModel m = star(3);
    m.network.cpu_per_send = 0.5;
    m.network.cpu_per = per;
    Engine engine(m);
    Clock clock(engine);
    engine.compute(0, 1.0, {&clock, 1});
    engine.transfer(0, 2, s, {&clock, 2});
    engine.transfer(1, 2, s, {&clock, 3});
    while (engine.step()) {}
    expect_near_relative(clock.ended.at(2), kLatency + 0.2);
    expect_near_relative(clock.ended.at(3), kLatency + 0.2);
    expect_near_relative(clock.ended.at(1), per == CommCpu::Byte ? 1.05 : 1.1 + 0.5 * kLatency);
  }
}

// cpu_per byte: a receiver that needs two cores to take the link's full bandwidth takes half of it on
// its one core; with a step there too, they share the core at level 1/2: the step half a core, the
// transfer a quarter of the link (0.4 s for what takes 0.1 s alone).
TEST(SimEngine, WithCpuPerByteAReceiversCpuHoldsItsTransfersBack) {
  const double s = 0.1 * kBandwidth;
  ClusterModel m = star(2);
  m.network.cpu_per_receive = 2.0;
  m.network.cpu_per = CommCpu::Byte;
  {
    Engine engine(m);
    Clock clock(engine);
    engine.transfer(0, 1, s, {&clock, 1});
    while (engine.step()) {}
    expect_near_relative(clock.ended.at(1), kLatency + 0.2);
  }
  Engine engine(m);
  Clock clock(engine);
  engine.compute(1, 1.0, {&clock, 1});
  engine.transfer(0, 1, s, {&clock, 2});
  while (engine.step()) {}
  expect_near_relative(clock.ended.at(2), kLatency + 0.4);
  expect_near_relative(clock.ended.at(1), 1.2);
}

// Without communication CPU, cpu_per byte is the star's max-min sharing, and steps share cores as
// they always do.
TEST(SimEngine, WithCpuPerByteAndNoCommunicationCpuTransfersShareTheStarMaxMin) {
  ClusterModel m = star(12, Sharing::MaxMin);
  m.network.cpu_per = CommCpu::Byte;
  expect_matches_reference(Sharing::MaxMin, busy_traffic, 12, &m);
}

// cpu_per byte: a host out of quota stops its steps and the transfers to and from it. A quarter of
// a core per 4 ms: the step alone runs 1 ms per period; the transfer into the host, at a core's
// bandwidth there, moves only while the host has budget, sharing it with the step.
TEST(SimEngine, WithCpuPerByteAHostOutOfQuotaStopsItsTransfersToo) {
  ClusterModel m = star(2);
  m.groups[0].quota = 0.25;
  m.groups[0].quota_period = 0.004;
  m.network.cpu_per = CommCpu::Byte;
  m.network.cpu_per_receive = 1.0;
  Engine engine(m);
  Clock clock(engine);
  engine.compute(0, 0.0025, {&clock, 0});
  while (engine.step()) {}
  EXPECT_NEAR(clock.ended.at(0), 0.0085, 1e-8);  // as under the default rule: 0-1, 4-5, 8-8.5 ms
  // Node 1's host, idle so far, has its periods end at 0.618 of one, then every 4 ms: 2.47, 6.47,
  // 10.47 ms. The bytes flow from 8.6 ms at the link's bandwidth, a core's worth there, for the 1 ms
  // the budget lasts; then wait for the period that ends at 10.47 ms to begin the second millisecond.
  const double phase = 0.004 * 0.6180339887498949;
  engine.transfer(0, 1, 0.002 * kBandwidth, {&clock, 1});
  while (engine.step()) {}
  EXPECT_NEAR(clock.ended.at(1), phase + 2 * 0.004 + 0.001, 1e-8);
}

TEST(SimEngine, SameInputsSameEventsAtTheSameTimes) {
  auto run = [] {
    Engine engine(star(4, Sharing::MaxMin));
    Clock clock(engine);
    for (std::uint64_t i = 0; i < 40; ++i) {
      const auto from = static_cast<VNode>(i % 4), to = static_cast<VNode>((i + 1 + i % 3) % 4);
      engine.transfer(from, to, 1e5 * static_cast<double>(1 + i % 7), {&clock, i});
      engine.compute(static_cast<VNode>(i % 4), 1e-3 * static_cast<double>(1 + i % 5), {&clock, 100 + i});
    }
    std::vector<std::pair<double, std::uint64_t>> order;
    while (engine.step()) {}
    for (auto [tag, t] : clock.ended) order.emplace_back(t, tag);
    return order;
  };
  EXPECT_EQ(run(), run());
}

TEST(SimEngine, UsageIntegratesBusyCoresAndLinks) {
  Engine engine(star(2));
  Clock clock(engine);
  engine.compute(0, 1.0, {&clock, 1});
  engine.transfer(0, 1, 1.25e8, {&clock, 2});  // 1 s of bandwidth after the latency
  while (engine.step()) {}
  const double end = engine.now();
  expect_near_relative(engine.usage().at(0, Usage::StepCores).total(end), 1.0);
  expect_near_relative(engine.usage().at(0, Usage::LinkOut).total(end), 1.0);
  expect_near_relative(engine.usage().at(1, Usage::LinkIn).total(end), 1.0);
  EXPECT_EQ(engine.usage().at(1, Usage::StepCores).total(end), 0.0);
}

TEST(SimEngine, EqualSharingMatchesRecomputingEveryRateAtEveryEvent) { expect_matches_reference(Sharing::Equal); }
TEST(SimEngine, MaxMinSharingMatchesRecomputingEveryRateAtEveryEvent) { expect_matches_reference(Sharing::MaxMin); }
TEST(SimEngine, MaxMinSharingOfAMasterAndManyWorkersMatchesRecomputingEveryRate) {
  expect_matches_reference(Sharing::MaxMin, master_worker_traffic, 40);
}

}  // namespace
}  // namespace dps::sim
