// The job protocol: the lines a cluster's scheduler and an application job it runs exchange over a
// socket, the same for the simulated cluster (dps-cluster) and a real one (dps-scheduler). In a
// simulated cluster the job finds the socket on the descriptor DPS_CLUSTER_FD, the model in
// DPS_CLUSTER_MODEL and the nodes it starts on in DPS_CLUSTER_NODES. On a real one it connects to
// DPS_CLUSTER_ADDRESS as job DPS_CLUSTER_JOB (proving it holds the job's DPS_SECRET) and starts on the
// hosts of DPS_CLUSTER_HOSTS, node 0 on the first. Times are the job's seconds since it started
// (simulated seconds in a simulation). Hosts are named on a real cluster only.
//   job -> cluster:  "point ITERATION NODES ITERATION_S REDISTRIBUTION_S TIME [HOST...]"   a resize point (the hosts it
//                                                                                holds, node 0's first): the answer
//                                                                                follows
//                    "release NODES TIME [HOST...]"                               it gave back nodes (their processes
//                    ended) "end TIME"                                                   it is done
//   cluster -> job:  "size NODES [HOST...]"                                       go on with this many (a growth: on
//   these hosts)
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dps::job_protocol {

inline constexpr const char* kFd = "DPS_CLUSTER_FD";
inline constexpr const char* kModel = "DPS_CLUSTER_MODEL";
inline constexpr const char* kNodes = "DPS_CLUSTER_NODES";
inline constexpr const char* kAddress = "DPS_CLUSTER_ADDRESS";
inline constexpr const char* kJob = "DPS_CLUSTER_JOB";
inline constexpr const char* kHosts = "DPS_CLUSTER_HOSTS";  // comma-separated

struct Message {
  enum class Kind { Point, Release, End, Size } kind = Kind::End;
  long iteration = 0;
  std::size_t nodes = 0;
  double iteration_s = 0, redistribution_s = 0, time = 0;
  std::vector<std::string> hosts{};  // size and release, on a real cluster
};

// One line, with its newline. Throws std::invalid_argument on a host name that is empty or holds
// a space or a control character (it would not read back).
std::string encode(const Message& m);
std::optional<Message> decode(std::string_view line);        // nullopt: not a line of the protocol
std::vector<std::string_view> words_of(std::string_view line);  // split at spaces (and the handshake's lines)

// A socket read and written a line at a time, blocking.
class LineSocket {
 public:
  explicit LineSocket(int fd) : fd_(fd) {}
  ~LineSocket();
  LineSocket(const LineSocket&) = delete;
  LineSocket& operator=(const LineSocket&) = delete;

  std::optional<std::string> read_line();  // nullopt at the end of the stream
  bool write_line(const std::string& line);  // false when the other side is gone
  int fd() const noexcept { return fd_; }

 private:
  int fd_;
  std::string buffer_;
};

}  // namespace dps::job_protocol
