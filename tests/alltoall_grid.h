// The shape grid of the all-to-all CPU tests (testonly): cases over world sizes 1 to 8, both
// directions, uneven and zero token counts, even, uneven and zero head splits, batches 1 to 3;
// and a reference, written from the tensor definitions alone, of where each output byte comes
// from. The copy plan's simulations (tests/alltoall_plan_test.cc) and the copy engines'
// (tests/strided_copy_test.cc) walk the same grid.
#ifndef LTX_TESTS_ALLTOALL_GRID_H_
#define LTX_TESTS_ALLTOALL_GRID_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "ltx/alltoall_shape.h"
#include "ltx/collectives/alltoall_layout.h"
#include "ltx/data_type.h"

namespace ltx {

// One case of the all-to-all shape grid, and how a simulation runs it (block count, warps per
// block, how far the input and output addresses are off 16-byte alignment).
struct PlanCase {
  AllToAllDirection direction;
  DataType dtype;
  int64_t batch;
  int64_t heads;
  int64_t head_dim;
  std::vector<int64_t> counts;
  std::vector<int64_t> head_counts;  // Empty: the even split.
  int blocks = 1;
  int warps = 1;  // Warps per block.
  uint64_t input_misalignment = 0;
  uint64_t output_misalignment = 0;
  int tensors = 1;  // AllToAllShape::tensors.

  // E.g. "seq->heads bf16 batch=2 heads=4 head_dim=3 counts=[3,0] head_counts=[] blocks=1
  // warps=1 misalign=0/0 tensors=1".
  std::string ToString() const;
};

// Where one output byte comes from: the source rank and the offset in its input.
struct SourceByte {
  int rank = -1;
  int64_t offset = -1;
};

// For each rank's output of case `c` (of layout `layout`), where each byte comes from.
std::vector<std::vector<SourceByte>> Reference(const PlanCase& c, const AllToAllLayout& layout);

// The layout of case `c`, or ComputeAllToAllLayout's error.
absl::StatusOr<AllToAllLayout> LayoutOf(const PlanCase& c);

// The layout of an uneven split: 5 heads of 4 fp32 elements (16 bytes, token rows of 80 bytes)
// over 3 ranks as 2, 0, 3, token counts {2, 1, 4}, sequence -> heads, `batch` slices.
absl::StatusOr<AllToAllLayout> UnevenSplitLayout(int64_t batch);

// Token count vectors for `world` ranks: even, uneven (random, zeros allowed), all on the last
// rank, all zero.
std::vector<std::vector<int64_t>> CountsFor(int world, std::mt19937& random);

// A head split for `world` ranks, of kind `kind` % 3: the even split (empty head_counts), an
// uneven one (0 to 3 heads per rank, at least one in all), or every head on one rank.
struct HeadSplit {
  int64_t heads = 0;
  std::vector<int64_t> head_counts;
};
HeadSplit SplitFor(int world, int kind, std::mt19937& random);

// Calls `check(&c, random)` for every case of the shape grid: world sizes 1 to 8, both
// directions, the counts of CountsFor, three dtypes, head_dim 1, 3 and 8 (each shape with a head
// split of SplitFor and a batch of 1 to 3), and each block count of `blocks_for(world)`. `check`
// completes the case (warps, misalignment) and simulates it. Returns the cases run; stops at the
// first fatal failure.
template <typename BlocksFor, typename Check>
int ForEachGridCase(std::mt19937& random, const BlocksFor& blocks_for, const Check& check) {
  int cases = 0;
  int splits = 0;
  for (int world = 1; world <= 8; ++world) {
    for (AllToAllDirection direction :
         {AllToAllDirection::kSeqToHeads, AllToAllDirection::kHeadsToSeq}) {
      for (const std::vector<int64_t>& counts : CountsFor(world, random)) {
        for (DataType dtype : {DataType::kBFloat16, DataType::kFloat32, DataType::kUint8}) {
          for (int64_t head_dim : {1, 3, 8}) {
            const HeadSplit split = SplitFor(world, splits++, random);
            const int64_t batch = 1 + static_cast<int64_t>(random() % 3);
            for (int blocks : blocks_for(world)) {
              PlanCase c = {direction, dtype, batch, split.heads, head_dim, counts};
              c.head_counts = split.head_counts;
              c.blocks = blocks;
              c.warps = 1;
              check(&c, random);
              ++cases;
              if (::testing::Test::HasFatalFailure()) return cases;
            }
          }
        }
      }
    }
  }
  return cases;
}

}  // namespace ltx

#endif  // LTX_TESTS_ALLTOALL_GRID_H_
