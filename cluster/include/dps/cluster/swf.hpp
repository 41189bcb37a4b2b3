// The Standard Workload Format of the Parallel Workloads Archive (Feitelson et al.,
// https://www.cs.huji.ac.il/labs/parallel/workload/swf.html): header comments "; Key: value", then
// one job per line in 18 whitespace-separated fields, -1 where a value is unknown. Plain or gzipped.
//
//   dps::cluster::SwfTrace t = dps::cluster::read_swf("NASA-iPSC-1993-3.1-cln.swf.gz");
//   std::cout << t.jobs.size() << " jobs on " << t.max_procs << " processors\n";
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dps::cluster {

struct SwfJob {
  long number = -1;            // 1
  double submit = -1;          // 2  seconds from the trace's start
  double wait = -1;            // 3
  double runtime = -1;         // 4
  long allocated = -1;         // 5  processors
  double cpu_used = -1;        // 6  average CPU seconds per processor
  double memory_used = -1;     // 7  KB per processor
  long requested = -1;         // 8  processors
  double requested_time = -1;  // 9  seconds
  double requested_memory = -1;  // 10
  int status = -1;             // 11 1 completed, 0 failed, 5 cancelled
  long user = -1, group = -1, executable = -1, queue = -1, partition = -1;  // 12-16
  long preceding = -1;         // 17 job number
  double think_time = -1;      // 18
};

struct SwfTrace {
  std::vector<std::pair<std::string, std::string>> header;  // in file order
  long max_procs = -1, max_nodes = -1;                      // from the header, -1 when absent
  std::vector<std::string> queues;  // "Queue: N name" lines: queues[N] = name ("" when unnamed)
  std::vector<SwfJob> jobs;

  std::string header_value(const std::string& key) const;  // "" when absent
};

// Throws std::runtime_error "PATH:LINE: field N (name): 'text' is not a number" (and the like) on a
// malformed line, or naming the file when it cannot be read.
SwfTrace read_swf(const std::string& path);
SwfTrace parse_swf(const std::string& text, const std::string& name = "swf");

}  // namespace dps::cluster
