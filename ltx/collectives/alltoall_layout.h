// The byte layout of one Ulysses all-to-all, derived from its shape, and the host checks of
// each rank's buffers. Validation happens here, on the host, before any launch, so every bad
// input becomes an InvalidArgument that names the argument.
#ifndef LTX_COLLECTIVES_ALLTOALL_LAYOUT_H_
#define LTX_COLLECTIVES_ALLTOALL_LAYOUT_H_

#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/alltoall/alltoall_plan.h"
#include "kernels/wire/signal_layout.h"
#include "ltx/alltoall_shape.h"
#include "ltx/data_type.h"
#include "ltx/wire_format.h"
#include "ltx/rank_buffers.h"

namespace ltx {

// Heads per rank on the heads-sharded side, indexed by rank.
using HeadCounts = std::array<int64_t, kMaxWorldSize>;

// Byte layout of a validated all-to-all.
struct AllToAllLayout {
  int world_size = 0;
  DataType dtype = DataType::kBFloat16;
  AllToAllDirection direction = AllToAllDirection::kSeqToHeads;
  int64_t heads = 0;
  int64_t head_dim = 0;
  // The tensors of the shape the op moves (AllToAllShape::tensors), each piece once per tensor.
  int tensors = 1;
  // How the head vectors travel (AllToAllShape::wire).
  WireFormat wire = WireFormat::kNative;
  // The split of the heads as resolved: shape.head_counts, or heads / world_size each.
  HeadCounts head_counts = {};
  // What the kernel and the copy plan work from.
  AllToAllGeometry geometry;
  std::array<int64_t, kMaxWorldSize> input_bytes = {};
  std::array<int64_t, kMaxWorldSize> output_bytes = {};
  // Digest of the op kind, direction, heads, head_dim, token count vector, head split, tensor
  // count and wire format; ranks compare it on the device, so an all-to-all never pairs with an
  // AllGather or with a different shape, tensor count or wire.
  uint64_t digest = 0;

  // Bytes of one tensor's input and output of rank `rank`.
  int64_t InputBytes(int rank) const { return input_bytes[rank]; }
  int64_t OutputBytes(int rank) const { return output_bytes[rank]; }
};

// Validates `shape` for `world_size` ranks and derives its layout. InvalidArgument names the
// argument: world size outside 1..kMaxWorldSize, an unknown dtype or direction, batch, heads or
// head_dim < 1, a token count vector whose length is not the world size, a negative count,
// sizes whose byte count overflows 2^62, an empty head_counts with heads not divisible by the
// world size, or a non-empty head_counts whose length is not the world size, with a negative
// entry, or whose sum is not heads, or tensors outside 1..kMaxTensors; for the FP8 wire
// (WireFormat::kFp8E4M3), an unknown wire format, a dtype other than bf16 and fp16, head_dim
// below kFp8MinVectorElements or a rank's head group of more than kFp8MaxRunVectors heads
// (kernels/wire/fp8_run.h: a run's codes and scales must fit its own bytes of the output).
// Thread-safe.
absl::StatusOr<AllToAllLayout> ComputeAllToAllLayout(const AllToAllShape& shape, int world_size);

}  // namespace ltx

#endif  // LTX_COLLECTIVES_ALLTOALL_LAYOUT_H_
