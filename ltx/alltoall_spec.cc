// Validation and layout of all-to-all arguments. The checks shared with the AllGather (world
// size, dtype, batch, counts, sizes) are the AllGather's own, applied to the all-to-all's
// sequence-sharded tensor [batch, tokens, heads * head_dim].
#include "ltx/alltoall_spec.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ltx/allgather_shape.h"
#include "ltx/allgather_spec.h"
#include "ltx/buffer_checks.h"
#include "ltx/status_macros.h"

namespace ltx {
namespace {

// Mixed into the digest so that no all-to-all agrees with an AllGather of the same counts.
constexpr int64_t kAllToAllDigestTag = 0x416c6c546f416c6c;  // "AllToAll"

// Largest element count of a token row: its byte count must stay far below 2^62.
constexpr int64_t kMaxRowElements = int64_t{1} << 56;

absl::Status CheckHeads(const AllToAllShape& shape, int world_size) {
  if (shape.direction != AllToAllDirection::kSeqToHeads &&
      shape.direction != AllToAllDirection::kHeadsToSeq) {
    return absl::InvalidArgumentError(
        absl::StrCat("direction: unknown value ", static_cast<int32_t>(shape.direction)));
  }
  if (shape.heads < 1) {
    return absl::InvalidArgumentError(absl::StrCat("heads must be >= 1, got ", shape.heads));
  }
  if (shape.head_dim < 1) {
    return absl::InvalidArgumentError(absl::StrCat("head_dim must be >= 1, got ", shape.head_dim));
  }
  if (world_size >= 1 && world_size <= kMaxWorldSize && shape.heads % world_size != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "heads (%d) must be divisible by the world size (%d)", shape.heads, world_size));
  }
  int64_t row_elements = 0;
  if (__builtin_mul_overflow(shape.heads, shape.head_dim, &row_elements) ||
      row_elements > kMaxRowElements) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "heads * head_dim (%d * %d) overflows the row size", shape.heads, shape.head_dim));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AllToAllLayout> ComputeAllToAllLayout(const AllToAllShape& shape, int world_size) {
  LTX_RETURN_IF_ERROR(CheckHeads(shape, world_size));
  AllGatherShape sequence;
  sequence.dtype = shape.dtype;
  sequence.batch = shape.batch;
  sequence.hidden = shape.heads * shape.head_dim;
  sequence.token_counts = shape.token_counts;
  LTX_ASSIGN_OR_RETURN(const AllGatherLayout gathered, ComputeLayout(sequence, world_size));

  AllToAllLayout layout;
  layout.world_size = world_size;
  layout.dtype = shape.dtype;
  layout.direction = shape.direction;
  layout.heads = shape.heads;
  layout.head_dim = shape.head_dim;
  AllToAllGeometry& g = layout.geometry;
  g.heads_to_seq = shape.direction == AllToAllDirection::kHeadsToSeq ? 1 : 0;
  g.world_size = world_size;
  g.batch = shape.batch;
  g.total_tokens = gathered.total_tokens;
  g.token_bytes = gathered.row_bytes;
  g.group_bytes = gathered.row_bytes / world_size;
  for (int rank = 0; rank < world_size; ++rank) {
    g.token_counts[rank] = gathered.token_counts[rank];
    g.prefix_tokens[rank] = gathered.prefix_tokens[rank];
    // Both are at most the gathered output's size, which ComputeLayout bounded.
    const int64_t sequence_bytes = gathered.InputBytes(rank);
    const int64_t heads_bytes = gathered.output_bytes / world_size;
    layout.input_bytes[rank] = g.heads_to_seq ? heads_bytes : sequence_bytes;
    layout.output_bytes[rank] = g.heads_to_seq ? sequence_bytes : heads_bytes;
  }
  const int64_t digest_fields[] = {kAllToAllDigestTag, static_cast<int64_t>(shape.direction),
                                   shape.heads, shape.head_dim,
                                   static_cast<int64_t>(gathered.counts_digest)};
  layout.digest = CountsDigest(digest_fields);
  return layout;
}

absl::Status ValidateAllToAllBuffers(const AllToAllLayout& layout, int rank,
                                     const RankBuffers& buffers) {
  const bool in_range = rank >= 0 && rank < layout.world_size;
  return CheckRankBuffers(layout.world_size, rank, in_range ? layout.InputBytes(rank) : 0,
                          in_range ? layout.OutputBytes(rank) : 0, buffers);
}

}  // namespace ltx
