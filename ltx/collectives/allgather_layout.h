// The byte layout of one AllGather, derived from its shape, and the host checks of each rank's
// buffers. Validation happens here, on the host, before any launch, so
// every bad input becomes an InvalidArgument that names the argument.
#ifndef LTX_COLLECTIVES_ALLGATHER_LAYOUT_H_
#define LTX_COLLECTIVES_ALLGATHER_LAYOUT_H_

#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/protocols/copy_plan.h"
#include "kernels/wire/signal_layout.h"
#include "ltx/allgather_shape.h"
#include "ltx/data_type.h"
#include "ltx/rank_buffers.h"
#include "ltx/wire_format.h"
#include "ltx/runtime/buffer_checks.h"

namespace ltx {

// Byte layout of a validated AllGather.
struct AllGatherLayout {
  int world_size = 0;
  DataType dtype = DataType::kBFloat16;
  int64_t batch = 0;
  int64_t row_bytes = 0;
  int64_t total_tokens = 0;
  int64_t output_bytes = 0;  // batch * total_tokens * row_bytes
  std::array<int64_t, kMaxWorldSize> token_counts = {};
  std::array<int64_t, kMaxWorldSize> prefix_tokens = {};
  // The tensors of the shape the op gathers (AllGatherShape::tensors), each shard once per
  // tensor.
  int tensors = 1;
  // Digest of the count vector (CountsDigest), which the other collectives' digests build on.
  uint64_t counts_digest = 0;
  // How the rows travel (AllGatherShape::wire).
  WireFormat wire = WireFormat::kNative;
  // Digest of the count vector, the tensor count and the wire format; ranks compare it on the
  // device to detect disagreement.
  uint64_t digest = 0;

  // Bytes of rank `rank`'s input (of one tensor's; output_bytes is one tensor's too).
  int64_t InputBytes(int rank) const { return batch * token_counts[rank] * row_bytes; }
  // Where rank `rank`'s shard lies in its input and in every output.
  ShardGeometry GeometryOf(int rank) const;
  // Where an in-place input of rank `rank` starts in its output: at its own tokens, with batch
  // 1 only (with more slices the rank's tokens are not contiguous in the output) and the native
  // wire (the FP8 wire writes the codes there first); kNotInPlace (ltx/runtime/buffer_checks.h)
  // otherwise.
  int64_t InPlaceOffset(int rank) const;
};

// Validates `shape` for `world_size` ranks and derives its layout. InvalidArgument names the
// argument: world size outside 1..kMaxWorldSize, an unknown dtype, batch or hidden < 1, a count
// vector whose length is not the world size, a negative count, sizes whose byte count
// overflows 2^62 (all tensors' outputs together), or tensors outside 1..kMaxTensors; for the
// FP8 wire (WireFormat::kFp8E4M3), InvalidArgument for an unknown wire format, a dtype other
// than bf16 and fp16 or hidden below 8 (a rank's codes and scales must fit its own slot of its
// output); several FP8 tensors pass here and are refused by ResolveCall (Unimplemented, alike on
// every rank). Thread-safe.
absl::StatusOr<AllGatherLayout> ComputeAllGatherLayout(const AllGatherShape& shape, int world_size);

// FNV-1a digest of a count vector (its length included).
uint64_t CountsDigest(absl::Span<const int64_t> token_counts);

}  // namespace ltx

#endif  // LTX_COLLECTIVES_ALLGATHER_LAYOUT_H_
