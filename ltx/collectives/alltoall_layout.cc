// Validation and layout of all-to-all arguments. The checks shared with the AllGather (world
// size, dtype, batch, counts, sizes) are the AllGather's own, applied to the all-to-all's
// sequence-sharded tensor [batch, tokens, heads * head_dim].
#include "ltx/collectives/alltoall_layout.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "kernels/wire/fp8_run.h"
#include "ltx/allgather_shape.h"
#include "ltx/collectives/allgather_layout.h"
#include "ltx/status_macros.h"

namespace ltx {
namespace {

static_assert(kMaxTensors == kMaxOpTensors, "the public tensor limit is the wire's");

// Mixed into the digest so that no all-to-all agrees with an AllGather of the same counts.
constexpr int64_t kAllToAllDigestTag = 0x416c6c546f416c6c;  // "AllToAll"

// Largest element count of a token row: its byte count must stay far below 2^62.
constexpr int64_t kMaxRowElements = int64_t{1} << 56;

// InvalidArgument for a tensor count, direction, heads or head_dim out of range.
absl::Status CheckShapeFields(const AllToAllShape& shape) {
  if (shape.tensors < 1 || shape.tensors > kMaxTensors) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "tensors must be in [1, %d] (ltx::kMaxTensors), got %d", kMaxTensors, shape.tensors));
  }
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
  int64_t row_elements = 0;
  if (__builtin_mul_overflow(shape.heads, shape.head_dim, &row_elements) ||
      row_elements > kMaxRowElements) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "heads * head_dim (%d * %d) overflows the row size", shape.heads, shape.head_dim));
  }
  return absl::OkStatus();
}

// The heads each of `world_size` ranks holds on the heads side: shape.head_counts, checked,
// or heads / world_size each when it is empty. world_size is valid.
absl::StatusOr<HeadCounts> HeadCountsOf(const AllToAllShape& shape, int world_size) {
  HeadCounts counts = {};
  if (shape.head_counts.empty()) {
    if (shape.heads % world_size != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "heads (%d) must be divisible by the world size (%d), or head_counts must give the "
          "split",
          shape.heads, world_size));
    }
    for (int rank = 0; rank < world_size; ++rank) counts[rank] = shape.heads / world_size;
    return counts;
  }
  if (static_cast<int64_t>(shape.head_counts.size()) != world_size) {
    return absl::InvalidArgumentError(
        absl::StrFormat("head_counts has %d entries, but the world size is %d",
                        shape.head_counts.size(), world_size));
  }
  int64_t sum = 0;
  bool overflow = false;
  for (int rank = 0; rank < world_size; ++rank) {
    counts[rank] = shape.head_counts[rank];
    if (counts[rank] < 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("head_counts[%d] = %d is negative", rank, counts[rank]));
    }
    overflow = overflow || __builtin_add_overflow(sum, counts[rank], &sum);
  }
  if (overflow || sum != shape.heads) {
    return absl::InvalidArgumentError(absl::StrFormat("head_counts [%s] must sum to heads (%d)",
                                                      absl::StrJoin(shape.head_counts, ","),
                                                      shape.heads));
  }
  return counts;
}

// What the FP8 wire needs of `shape` with the resolved split `head_counts`: each rank's head
// group, one head vector after another, travels as one FP8 run (kernels/wire/fp8_run.h).
absl::Status CheckWire(const AllToAllShape& shape, const HeadCounts& head_counts,
                       int world_size) {
  if (shape.wire == WireFormat::kNative) return absl::OkStatus();
  if (shape.wire != WireFormat::kFp8E4M3) {
    return absl::InvalidArgumentError(
        absl::StrCat("wire: unknown value ", static_cast<int32_t>(shape.wire)));
  }
  if (shape.dtype != DataType::kBFloat16 && shape.dtype != DataType::kFloat16) {
    return absl::InvalidArgumentError(absl::StrCat(
        "wire fp8_e4m3 carries bf16 or fp16 head vectors, not ", DataTypeName(shape.dtype)));
  }
  if (shape.head_dim < kFp8MinVectorElements) {
    return absl::InvalidArgumentError(absl::StrCat(
        "wire fp8_e4m3 needs head_dim >= ", kFp8MinVectorElements,
        " (a head vector's codes and scale travel in its own bytes of the output), got ",
        shape.head_dim));
  }
  for (int rank = 0; rank < world_size; ++rank) {
    if (head_counts[rank] > kFp8MaxRunVectors) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "wire fp8_e4m3 carries at most %d heads in a rank's group (its receiver keeps their "
          "scales on chip), but rank %d's group has %d",
          kFp8MaxRunVectors, rank, head_counts[rank]));
    }
  }
  return absl::OkStatus();
}

// Fills the per-rank fields of `layout` (counts, head groups, buffer sizes) from the sequence
// side's `gathered` layout.
void FillRanks(const AllGatherLayout& gathered, AllToAllLayout& layout) {
  AllToAllGeometry& g = layout.geometry;
  const int64_t head_bytes = gathered.row_bytes / layout.heads;
  int64_t offset = 0;
  for (int rank = 0; rank < layout.world_size; ++rank) {
    g.token_counts[rank] = gathered.token_counts[rank];
    g.prefix_tokens[rank] = gathered.prefix_tokens[rank];
    g.group_bytes[rank] = layout.head_counts[rank] * head_bytes;
    g.group_offsets[rank] = offset;
    offset += g.group_bytes[rank];
    // Both are at most the gathered output's size, which ComputeAllGatherLayout bounded.
    const int64_t sequence_bytes = gathered.InputBytes(rank);
    const int64_t heads_bytes = gathered.batch * gathered.total_tokens * g.group_bytes[rank];
    layout.input_bytes[rank] = g.heads_to_seq ? heads_bytes : sequence_bytes;
    layout.output_bytes[rank] = g.heads_to_seq ? sequence_bytes : heads_bytes;
  }
}

}  // namespace

absl::StatusOr<AllToAllLayout> ComputeAllToAllLayout(const AllToAllShape& shape, int world_size) {
  LTX_RETURN_IF_ERROR(CheckShapeFields(shape));
  AllGatherShape sequence;
  sequence.dtype = shape.dtype;
  sequence.batch = shape.batch;
  sequence.hidden = shape.heads * shape.head_dim;
  sequence.token_counts = shape.token_counts;
  LTX_ASSIGN_OR_RETURN(const AllGatherLayout gathered,
                       ComputeAllGatherLayout(sequence, world_size));
  // Every buffer of the op is at most the gathered sequence; all tensors' together stay below
  // 2^62 bytes too.
  if (gathered.output_bytes > (int64_t{1} << 62) / shape.tensors) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d tensors of %d bytes each overflow 2^62 bytes", shape.tensors, gathered.output_bytes));
  }

  AllToAllLayout layout;
  LTX_ASSIGN_OR_RETURN(layout.head_counts, HeadCountsOf(shape, world_size));
  LTX_RETURN_IF_ERROR(CheckWire(shape, layout.head_counts, world_size));
  layout.wire = shape.wire;
  layout.world_size = world_size;
  layout.dtype = shape.dtype;
  layout.direction = shape.direction;
  layout.heads = shape.heads;
  layout.head_dim = shape.head_dim;
  layout.tensors = shape.tensors;
  AllToAllGeometry& g = layout.geometry;
  g.heads_to_seq = shape.direction == AllToAllDirection::kHeadsToSeq ? 1 : 0;
  g.world_size = world_size;
  g.batch = shape.batch;
  g.total_tokens = gathered.total_tokens;
  g.token_bytes = gathered.row_bytes;
  FillRanks(gathered, layout);
  // The split as resolved, so that an empty head_counts and the even split it stands for agree.
  const int64_t digest_fields[] = {
      kAllToAllDigestTag,
      static_cast<int64_t>(shape.direction),
      shape.heads,
      shape.head_dim,
      static_cast<int64_t>(gathered.counts_digest),
      static_cast<int64_t>(CountsDigest(
          absl::MakeConstSpan(layout.head_counts.data(), static_cast<size_t>(world_size)))),
      shape.tensors,
      static_cast<int64_t>(shape.wire)};
  layout.digest = CountsDigest(digest_fields);
  return layout;
}

}  // namespace ltx
