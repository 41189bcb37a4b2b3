// Traffic jobs (Mache, "Parallel I/O- and Communication-Sensitive Scheduling on High-Performance Parallel Computers"):
// jobs whose time is their messages' over the mesh, which all running jobs share; a job ends when its last message
// arrives.
#include <dps/cluster/allocation.hpp>
#include <dps/cluster/backfilling.hpp>
#include <dps/cluster/simulation.hpp>
#include <dps/cluster/workload.hpp>

#include <gtest/gtest.h>

namespace dps::cluster {
namespace {

constexpr double kLink = 380e6, kHop = 100e-9, kBytes = 1e6;

Job traffic(std::uint64_t id, std::size_t size, long messages, double io_share = 0) {
  return Job{.id = id, .kind = JobKind::Traffic, .submit = 0, .size = size, .walltime = 100,
             .messages = messages, .message_bytes = kBytes, .io_share = io_share};
}

// Gives each job the nodes the test planned.
class Planned final : public Allocator {
 public:
  explicit Planned(std::vector<std::vector<Node>> plan) : plan_(std::move(plan)) {}
  std::string name() const override { return "planned"; }
  std::vector<Node> place(const std::vector<bool>&, std::size_t, const std::vector<Node>&) override { return plan_.at(next_++); }

 private:
  std::vector<std::vector<Node>> plan_;
  std::size_t next_ = 0;
};

// Two neighbours send each other 3 messages, one after another: each crosses one hop at the link's speed.
TEST(Traffic, AJobEndsWhenItsLastMessageArrives) {
  const Mesh mesh(4, 1);
  const Workload w{.jobs = {traffic(1, 2, 3)}, .nodes = 4, .classes = {{"normal", 0}}};
  Fcfs fcfs;
  const Results r = Simulation(w, fcfs, {.mesh = &mesh}).run();
  EXPECT_NEAR(r.jobs[0].execution(), 3 * (kBytes / kLink + kHop), 1e-12);
}

// On a row of 4, jobs {0, 2} and {1, 3} cross each other: their east-bound messages share the link
// 1→2, their west-bound ones 2→1, so each goes at half speed; {0, 1} and {2, 3} cross nothing.
TEST(Traffic, JobsWhoseMessagesCrossOneLinkShareIt) {
  const Mesh mesh(4, 1);
  const Workload w{.jobs = {traffic(1, 2, 1), traffic(2, 2, 1)}, .nodes = 4, .classes = {{"normal", 0}}};
  Fcfs fcfs;
  Planned crossed({{0, 2}, {1, 3}}), apart({{0, 1}, {2, 3}});
  const Results x = Simulation(w, fcfs, {.allocator = &crossed, .mesh = &mesh}).run();
  const Results a = Simulation(w, fcfs, {.allocator = &apart, .mesh = &mesh}).run();
  for (const JobRecord& j : x.jobs) EXPECT_NEAR(j.execution(), 2 * kBytes / kLink + 2 * kHop, 1e-12) << "job " << j.job->id;
  for (const JobRecord& j : a.jobs) EXPECT_NEAR(j.execution(), kBytes / kLink + kHop, 1e-12) << "job " << j.job->id;
}

// A node at (0, 0) writes 2 messages to the I/O nodes west of a 2×2 mesh: 1 or 2 hops each, at the
// I/O node's own bandwidth when it is lower (Mache's 64 MB/s).
TEST(Traffic, WritesGoToTheIoColumnAtTheIoNodesBandwidth) {
  const Mesh mesh(2, 2);
  const Workload w{.jobs = {traffic(1, 1, 2, 1.0)}, .nodes = 4, .classes = {{"normal", 0}}};
  Fcfs fcfs;
  const Results fast = Simulation(w, fcfs, {.mesh = &mesh, .io_column = true}).run();
  const Results slow = Simulation(w, fcfs, {.mesh = &mesh, .io_column = true, .io_bandwidth = 64e6}).run();
  EXPECT_GE(fast.jobs[0].execution(), 2 * (kBytes / kLink + kHop) - 1e-12);
  EXPECT_LE(fast.jobs[0].execution(), 2 * (kBytes / kLink + 2 * kHop) + 1e-12);
  EXPECT_GE(slow.jobs[0].execution(), 2 * (kBytes / 64e6 + kHop) - 1e-12);
  EXPECT_LE(slow.jobs[0].execution(), 2 * (kBytes / 64e6 + 2 * kHop) + 1e-12);
  const Workload lone{.jobs = {traffic(1, 1, 2, 0.0)}, .nodes = 4, .classes = {{"normal", 0}}};
  EXPECT_EQ(Simulation(lone, fcfs, {.mesh = &mesh}).run().jobs[0].execution(), 0) << "a lone node's own messages go nowhere";
}

// Mache's stream on his 22×16 mesh with 16 I/O nodes west, all writes: hundreds of messages at
// once, most of them through the I/O column (debug builds check every flow's share at every event).
// Every job ends, no sooner than its nodes' writes can, and PLAS keeps the balance that Paging does not.
TEST(Traffic, AStreamOfWritersOnMachesMesh) {
  const Mesh mesh(22, 16);
  Workload w{.jobs = traffic_stream({.jobs = 100, .mean_arrival_s = 0.02, .messages = 8, .message_bytes = 262144, .io_share = 1}, 352),
             .nodes = 352,
             .classes = {{"normal", 0}}};
  Fcfs fcfs;
  Paging paging;
  Plas plas(mesh);
  const Results paged = Simulation(w, fcfs, {.allocator = &paging, .mesh = &mesh, .io_column = true}).run();
  const Results balanced = Simulation(w, fcfs, {.allocator = &plas, .mesh = &mesh, .io_column = true}).run();
  for (const Results* r : {&paged, &balanced})
    for (const JobRecord& j : r->jobs) {
      EXPECT_FALSE(j.killed);
      EXPECT_GE(j.execution(), 8 * 262144 / kLink) << "job " << j.job->id;
    }
  EXPECT_LT(balanced.balance_factor, 1);
  EXPECT_GT(paged.balance_factor, 5);
}

TEST(Traffic, NeedsAMeshAndIoNodesForItsWrites) {
  const Mesh mesh(2, 2);
  Fcfs fcfs;
  const Workload writes{.jobs = {traffic(1, 2, 2, 0.5)}, .nodes = 4, .classes = {{"normal", 0}}};
  EXPECT_THROW(Simulation(writes, fcfs, {}).run(), std::runtime_error);
  EXPECT_THROW(Simulation(writes, fcfs, {.mesh = &mesh}).run(), std::runtime_error);
  const Mesh torus(3, 3, true);
  EXPECT_THROW(Simulation(writes, fcfs, {.mesh = &torus, .io_column = true}), std::invalid_argument);
}

// Mache's synthetic stream: exponential sizes of mean 16 (rounded up, at most the cluster), Poisson
// arrivals, and every job the stream's messages.
TEST(Traffic, TheStreamDrawsMachesWorkload) {
  const Workload w = from_json(R"({"nodes": 352, "jobs": [{"kind": "traffic-stream", "jobs": 4000, "mean_arrival_s": 2,
                                   "messages": 8, "message_bytes": 4096, "io_share": 0.25, "seed": 3}]})",
                               "stream.json");
  ASSERT_EQ(w.jobs.size(), 4000u);
  double size = 0, last = 0;
  for (const Job& j : w.jobs) {
    EXPECT_EQ(j.kind, JobKind::Traffic);
    EXPECT_GE(j.size, 1u);
    EXPECT_LE(j.size, 352u);
    EXPECT_EQ(j.messages, 8);
    EXPECT_EQ(j.io_share, 0.25);
    size += static_cast<double>(j.size) / 4000;
    last = j.submit;
  }
  EXPECT_NEAR(size, 16.5, 1.0);
  EXPECT_NEAR(last / 3999, 2, 0.15);
  EXPECT_THROW(from_json(R"({"nodes": 8, "jobs": [{"kind": "traffic", "size": 2, "walltime": 9, "message_bytes": 1}]})", "x.json"),
               std::runtime_error) << "no messages";
}

}  // namespace
}  // namespace dps::cluster
