// Layouts: how a rows × cols array is dealt over the threads of a collection. Part p is held by the
// thread at index p, row major, inside a margin of ghost cells the application fills (halos).
//
//   using dps::Distribution;
//   dps::Layout strips(Distribution::blocks({300, 200, 524}), Distribution::whole(1024));     // 1-D block
//   dps::Layout cyclic(Distribution::cyclic(1024, 16, 4), Distribution::whole(1024));          // 1-D block-cyclic
//   dps::Layout grid(Distribution::cyclic(1024, 64, 2), Distribution::cyclic(1024, 64, 3));    // 2×3 block-cyclic
//   dps::Layout blocks(Distribution::even(1022, 2), Distribution::even(1022, 2), 1);           // 2×2 blocks, margin 1
//   auto [part, row, col] = grid.locate(700, 12);      // who holds element (700, 12), and where
//
// Parts form a grid, rows.parts() × cols.parts(), numbered row major: part (r, c) is r·cols.parts() + c
// (ReSHAPE's ownership Pc·(x % Pr) + (y % Pc) for 2-D block-cyclic).
#pragma once

#include <cereal/types/vector.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace dps {

// How the indices [0, extent) of one dimension are dealt over parts.
class Distribution {
 public:
  // Indices [global, global + length) are held by `part`, from its local index `local` on.
  struct Run {
    std::size_t global = 0, length = 0;
    std::uint32_t part = 0;
    std::size_t local = 0;
    bool operator==(const Run&) const = default;
  };

  Distribution() = default;
  // Part i holds counts[i] consecutive indices, parts in order (a part may hold none).
  static Distribution blocks(std::vector<std::size_t> counts);
  // `parts` blocks whose sizes differ by at most one, the larger ones last (MPI's textbook split:
  // part i starts at extent·i / parts).
  static Distribution even(std::size_t extent, std::size_t parts);
  // Blocks of `block` indices dealt round robin over `parts` (ScaLAPACK's block-cyclic).
  static Distribution cyclic(std::size_t extent, std::size_t block, std::size_t parts);
  static Distribution whole(std::size_t extent) { return blocks({extent}); }

  bool is_cyclic() const noexcept { return block_ > 0; }
  std::size_t extent() const noexcept { return extent_; }
  std::size_t parts() const noexcept { return counts_.size(); }
  std::size_t count(std::size_t part) const { return counts_.at(part); }  // indices the part holds
  // The first index a blocks() part holds (its indices are [first, first + count)).
  std::size_t first(std::size_t part) const;
  // The ownership pattern repeats every period() indices: block·parts when cyclic, else the extent.
  std::size_t period() const noexcept { return block_ > 0 ? block_ * counts_.size() : extent_; }
  const std::vector<Run>& runs() const noexcept { return runs_; }  // in global order, covering [0, extent)
  const Run& run_at(std::size_t global) const;                      // the run holding `global`

  bool operator==(const Distribution& other) const {
    return extent_ == other.extent_ && block_ == other.block_ && counts_ == other.counts_;
  }
  std::string describe() const;  // "blocks 300/200/524", "cyclic 1024 by 16 over 4"

  template <class A>
  void save(A& a) const {
    a(extent_, block_, counts_);
  }
  template <class A>
  void load(A& a) {
    std::size_t extent = 0, block = 0;
    std::vector<std::size_t> counts;
    a(extent, block, counts);
    *this = block > 0 ? cyclic(extent, block, counts.size()) : blocks(std::move(counts));
    if (extent_ != extent) throw std::invalid_argument("dps::Distribution: block counts that do not add up");
  }

 private:
  std::size_t extent_ = 0, block_ = 0;  // block_ 0: blocks()
  std::vector<std::size_t> counts_;
  std::vector<Run> runs_;
};

class Layout {
 public:
  struct Place {
    std::uint32_t part = 0;
    std::size_t row = 0, col = 0;  // local, without the margin
  };

  Layout() = default;
  Layout(Distribution rows, Distribution cols, std::size_t margin = 0)
      : rows_(std::move(rows)), cols_(std::move(cols)), margin_(margin) {}

  const Distribution& rows() const noexcept { return rows_; }
  const Distribution& cols() const noexcept { return cols_; }
  std::size_t margin() const noexcept { return margin_; }
  std::size_t parts() const noexcept { return rows_.parts() * cols_.parts(); }
  std::size_t grid_row(std::size_t part) const noexcept { return part / cols_.parts(); }
  std::size_t grid_col(std::size_t part) const noexcept { return part % cols_.parts(); }

  std::size_t local_rows(std::size_t part) const { return rows_.count(grid_row(part)); }
  std::size_t local_cols(std::size_t part) const { return cols_.count(grid_col(part)); }
  // Part p's storage: (local_rows + 2·margin) × stride elements, row major.
  std::size_t stride(std::size_t part) const { return local_cols(part) + 2 * margin_; }
  std::size_t elements(std::size_t part) const { return (local_rows(part) + 2 * margin_) * stride(part); }
  // Where local element (row, col) of part p lies in its storage.
  std::size_t offset(std::size_t part, std::size_t row, std::size_t col) const {
    return (row + margin_) * stride(part) + col + margin_;
  }
  Place locate(std::size_t row, std::size_t col) const;

  bool operator==(const Layout&) const = default;
  std::string describe() const;

  template <class A>
  void serialize(A& a) {
    a(rows_, cols_, margin_);
  }

 private:
  Distribution rows_, cols_;
  std::size_t margin_ = 0;
};

}  // namespace dps
