// The all-to-all shape grid of the CPU tests and its reference.
#include "tests/alltoall_grid.h"

#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ltx {
namespace {

// Byte offset of element (b, token, head, byte) in a [batch, tokens, heads, head_bytes] tensor.
int64_t Offset(int64_t b, int64_t token, int64_t head, int64_t byte, int64_t tokens, int64_t heads,
               int64_t head_bytes) {
  return ((b * tokens + token) * heads + head) * head_bytes + byte;
}

}  // namespace

std::string PlanCase::ToString() const {
  return absl::StrCat(direction == AllToAllDirection::kSeqToHeads ? "seq->heads" : "heads->seq",
                      " ", DataTypeName(dtype), " batch=", batch, " heads=", heads,
                      " head_dim=", head_dim, " counts=[", absl::StrJoin(counts, ","),
                      "] head_counts=[", absl::StrJoin(head_counts, ","), "] blocks=", blocks,
                      " warps=", warps, " misalign=", input_misalignment, "/",
                      output_misalignment, " tensors=", tensors);
}

std::vector<std::vector<SourceByte>> Reference(const PlanCase& c, const AllToAllLayout& layout) {
  const int world = layout.world_size;
  const int64_t head_bytes = c.head_dim * ElementSize(c.dtype);
  std::vector<int64_t> groups = c.head_counts;  // Heads per rank.
  if (groups.empty()) groups.assign(world, c.heads / world);
  const int64_t total = layout.geometry.total_tokens;
  std::vector<std::vector<SourceByte>> expected(world);
  for (int r = 0; r < world; ++r) expected[r].resize(layout.OutputBytes(r));
  for (int s = 0; s < world; ++s) {    // Sequence-sharded rank.
    int64_t first_head = 0;            // Of rank h's group.
    for (int h = 0; h < world; ++h) {  // Head-group rank.
      const int64_t group = groups[h];
      for (int64_t b = 0; b < c.batch; ++b) {
        for (int64_t i = 0; i < c.counts[s]; ++i) {
          for (int64_t k = 0; k < group; ++k) {
            for (int64_t byte = 0; byte < head_bytes; ++byte) {
              const int64_t seq =
                  Offset(b, i, first_head + k, byte, c.counts[s], c.heads, head_bytes);
              const int64_t heads = Offset(b, layout.geometry.prefix_tokens[s] + i, k, byte, total,
                                           group, head_bytes);
              if (c.direction == AllToAllDirection::kSeqToHeads) {
                expected[h][heads] = {s, seq};
              } else {
                expected[s][seq] = {h, heads};
              }
            }
          }
        }
      }
      first_head += group;
    }
  }
  return expected;
}

absl::StatusOr<AllToAllLayout> LayoutOf(const PlanCase& c) {
  AllToAllShape shape;
  shape.dtype = c.dtype;
  shape.batch = c.batch;
  shape.heads = c.heads;
  shape.head_dim = c.head_dim;
  shape.token_counts = c.counts;
  shape.direction = c.direction;
  shape.head_counts = c.head_counts;
  shape.tensors = c.tensors;
  return ComputeAllToAllLayout(shape, static_cast<int>(c.counts.size()));
}

absl::StatusOr<AllToAllLayout> UnevenSplitLayout(int64_t batch) {
  const std::vector<int64_t> counts = {2, 1, 4};
  const std::vector<int64_t> head_counts = {2, 0, 3};
  AllToAllShape shape;
  shape.dtype = DataType::kFloat32;
  shape.batch = batch;
  shape.heads = 5;
  shape.head_dim = 4;
  shape.token_counts = counts;
  shape.head_counts = head_counts;
  return ComputeAllToAllLayout(shape, 3);
}

std::vector<std::vector<int64_t>> CountsFor(int world, std::mt19937& random) {
  std::vector<std::vector<int64_t>> all;
  all.push_back(std::vector<int64_t>(world, 3));
  std::vector<int64_t> uneven;
  for (int r = 0; r < world; ++r) uneven.push_back(static_cast<int64_t>(random() % 6));
  all.push_back(uneven);
  std::vector<int64_t> zeros(world, 0);
  zeros[world - 1] = 5;
  all.push_back(zeros);
  all.push_back(std::vector<int64_t>(world, 0));
  return all;
}

HeadSplit SplitFor(int world, int kind, std::mt19937& random) {
  HeadSplit split;
  switch (kind % 3) {
    case 0:
      split.heads = world * (1 + static_cast<int64_t>(random() % 2));
      return split;
    case 1:
      for (int r = 0; r < world; ++r) split.head_counts.push_back(random() % 4);
      if (std::accumulate(split.head_counts.begin(), split.head_counts.end(), int64_t{0}) == 0) {
        split.head_counts[0] = 1;
      }
      break;
    default:
      split.head_counts.assign(world, 0);
      split.head_counts[random() % world] = 1 + static_cast<int64_t>(random() % 3);
      break;
  }
  split.heads = std::accumulate(split.head_counts.begin(), split.head_counts.end(), int64_t{0});
  return split;
}

}  // namespace ltx
