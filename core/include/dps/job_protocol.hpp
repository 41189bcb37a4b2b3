// The job protocol: the lines a cluster's scheduler and an application job it runs exchange over a
// socket, the same for the simulated cluster (dps-cluster) and a real one. The job finds the socket on
// the descriptor DPS_CLUSTER_FD, and in a simulated cluster the model in DPS_CLUSTER_MODEL and the
// nodes it starts on in DPS_CLUSTER_NODES. Times are the job's seconds since it started (simulated
// seconds in a simulation).
//   job -> cluster:  "point ITERATION NODES ITERATION_S REDISTRIBUTION_S TIME"   a resize point: the answer follows
//                    "release NODES TIME"                                         it gave back nodes
//                    "end TIME"                                                   it is done
//   cluster -> job:  "size NODES"                                                 go on with this many
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace dps::job_protocol {

inline constexpr const char* kFd = "DPS_CLUSTER_FD";
inline constexpr const char* kModel = "DPS_CLUSTER_MODEL";
inline constexpr const char* kNodes = "DPS_CLUSTER_NODES";

struct Message {
  enum class Kind { Point, Release, End, Size } kind = Kind::End;
  long iteration = 0;
  std::size_t nodes = 0;
  double iteration_s = 0, redistribution_s = 0, time = 0;
};

std::string encode(const Message& m);                        // one line, with its newline
std::optional<Message> decode(std::string_view line);        // nullopt: not a line of the protocol

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
