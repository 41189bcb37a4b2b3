// Slurm's compressed host lists and per-host counts, as a job finds them in its environment
// (SLURM_JOB_NODELIST=node[01-03], SLURM_TASKS_PER_NODE=2(x3)): expanded to one name per host, and to
// the allocation's slots, one per task, that a launcher starts an instance on.
//
//   // In `salloc -N3 --ntasks-per-node=2`:
//   for (const std::string& host : dps::cluster::slurm_slots(std::getenv("SLURM_JOB_NODELIST"),
//                                                            std::getenv("SLURM_TASKS_PER_NODE")))
//     std::cout << host << '\n';  // node01 node01 node02 node02 node03 node03
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dps::cluster {

// "tux1,tux[3-5,07],login" -> tux1 tux3 tux4 tux5 tux07 login: items split at commas outside brackets,
// each a name with bracketed lists of ranges N or N-M, expanded in the order written (duplicates
// kept). A range's numbers are as wide as its lower bound (01-10: 01 … 10), as in Slurm. Several
// brackets (rack[1-2]-node[1-2]) give their product in Slurm's order: the last bracket varies
// fastest, then the first, the second…, the last but one slowest (x[1-2]y[1-2]z[1-2] starts x1y1z1
// x1y1z2 x2y1z1). Throws std::invalid_argument "hostlist 'EXPRESSION': what is wrong" on an empty
// expression or item, whitespace, unbalanced or nested brackets, an empty or malformed range, or
// more than 65536 hosts (Slurm's limit).
std::vector<std::string> expand_hostlist(std::string_view expression);

// "2(x3),1" -> 2 2 2 1: Slurm's per-host counts (SLURM_JOB_CPUS_PER_NODE, SLURM_TASKS_PER_NODE),
// comma-separated, COUNT(xREPEAT) for a count repeated. Counts are 1 to 65535 (Slurm keeps them in 16
// bits), repeats at least 1, at most 65536 entries in all. Throws std::invalid_argument
// "counts 'TEXT': what is wrong".
std::vector<unsigned> expand_counts(std::string_view text);

// The slots of a Slurm allocation: each host of `nodelist` as many times as its count in `counts`
// (one count for every host, or one a host), or once when `counts` is null. Throws
// std::invalid_argument when `nodelist` is null or empty (not inside an allocation), when either
// does not parse, or when the counts do not match the hosts.
std::vector<std::string> slurm_slots(const char* nodelist, const char* counts);

}  // namespace dps::cluster
