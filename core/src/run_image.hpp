// A run's disk checkpoint (--checkpoint-dir, --restart): every thread's state and the driver's
// progress, taken between two calls, in one file written so that a crash mid-write never leaves a
// checkpoint that loads wrongly (a temporary file, synced, then renamed over the last one).
//
//   write_run_image("ckpt", image);                       // ckpt/checkpoint.dps
//   RunImage back = read_run_image("ckpt", "stencil");    // throws std::invalid_argument, one line
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dps::detail {

struct CollectionImage {
  std::string name;
  std::string state_type;           // the type's registry key: a restart must hold the same
  std::vector<std::string> images;  // of its threads, by index
  template <class A>
  void serialize(A& a) {
    a(name, state_type, images);
  }
};

struct RunImage {
  std::string application;  // the program that wrote it
  std::string progress;     // the driver's, encoded
  double time = 0;          // seconds into the run that wrote it
  std::vector<CollectionImage> collections;
  template <class A>
  void serialize(A& a) {
    a(application, progress, time, collections);
  }
  // The first collection of that name, moved out: namesakes are restored in the order they were made.
  std::optional<CollectionImage> take(std::string_view name);
};

// DIR/checkpoint.dps; DIR is created if missing. Throws std::runtime_error naming the file.
void write_run_image(const std::string& dir, const RunImage& image);
// Throws std::invalid_argument ("--restart DIR: ...") when DIR holds no checkpoint, a damaged one,
// or one of another application than `application`.
RunImage read_run_image(const std::string& dir, std::string_view application);

}  // namespace dps::detail
