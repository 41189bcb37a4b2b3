// KernelModel: how long each LU kernel takes as a function of the block size r, fitted to times
// measured at several sizes: seconds = a + b·r³ for the multiplication and the triangular solve,
// a + b·r² for the others (per row for the panel factorization; copy: an r×r block into a new
// array; the owner variant's update, measured on the matrix order's layout, per r×r×r, and with it
// the row interchanges and the panel's height). What partial
// direct execution charges; a file carries it, with where and when it was measured, to a simulation
// of this machine run anywhere.
//
//   lu::KernelModel model = lu::KernelModel::measure({64, 128, 256, 512}, 3072);   // a second or so
//   model.save("kernels.json");
//   lu::set_kernels(lu::Kernels(lu::KernelModel::load("kernels.json").at(324)));
#pragma once

#include "kernels.hpp"

#include <string>
#include <vector>

namespace lu {

struct KernelModel {
  struct Fit {
    double a = 0, b = 0;  // seconds = a + b·size
    double power = 3;     // size = r^power
    double at(int r) const;
  };
  Fit factor_per_row{0, 0, 2}, swap{0, 0, 2}, solve{0, 0, 3}, multiply{0, 0, 3}, subtract{0, 0, 2}, copy{0, 0, 2},
      update{0, 0, 3},  // update: zero when not measured (then charged as multiply)
      swap_more{0, 0, 1};  // zero when not measured (then charged as swap)
  std::vector<int> sizes;  // the block sizes measured
  int n = 0;               // the matrix order the update was measured on (0: not measured)
  std::string measured_on, measured_at;  // where (the host's name and address) and when (ISO 8601)

  // At each block size; with the matrix order n, the update too, on its layout (sizes up to n/2).
  static KernelModel measure(std::vector<int> sizes, int n = 0);
  KernelTimes at(int r) const;

  void save(const std::string& path) const;         // JSON; throws std::runtime_error naming the file
  static KernelModel load(const std::string& path);  // throws std::runtime_error naming the file and why
};

}  // namespace lu
