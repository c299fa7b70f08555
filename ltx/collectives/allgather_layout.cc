// Validation and layout of AllGather arguments.
#include "ltx/collectives/allgather_layout.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kernels/wire/fp8_slot.h"
#include "ltx/runtime/buffer_checks.h"

namespace ltx {
namespace {

// Largest byte count a buffer may have: byte offsets are int64 on host and device.
constexpr int64_t kMaxBytes = int64_t{1} << 62;

bool CheckedMultiply(int64_t a, int64_t b, int64_t* product) {
  return !__builtin_mul_overflow(a, b, product) && *product <= kMaxBytes;
}

}  // namespace

ShardGeometry AllGatherLayout::GeometryOf(int rank) const {
  return ShardGeometryOf(batch, row_bytes, total_tokens, token_counts[rank], prefix_tokens[rank]);
}

uint64_t CountsDigest(absl::Span<const int64_t> token_counts) {
  constexpr uint64_t kFnvOffset = 14695981039346656037ull;
  constexpr uint64_t kFnvPrime = 1099511628211ull;
  uint64_t digest = kFnvOffset;
  auto mix = [&digest](uint64_t value) {
    for (int byte = 0; byte < 8; ++byte) {
      digest ^= (value >> (8 * byte)) & 0xff;
      digest *= kFnvPrime;
    }
  };
  mix(token_counts.size());
  for (int64_t count : token_counts) mix(static_cast<uint64_t>(count));
  return digest;
}

absl::StatusOr<AllGatherLayout> ComputeAllGatherLayout(const AllGatherShape& shape,
                                                       int world_size) {
  if (shape.tensors < 1 || shape.tensors > kMaxTensors) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "tensors must be in [1, %d] (ltx::kMaxTensors), got %d", kMaxTensors, shape.tensors));
  }
  if (world_size < 1 || world_size > kMaxWorldSize) {
    return absl::InvalidArgumentError(
        absl::StrFormat("world_size %d is outside 1..%d", world_size, kMaxWorldSize));
  }
  const int element_size = ElementSize(shape.dtype);
  if (element_size == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("dtype: unknown value ", static_cast<int32_t>(shape.dtype)));
  }
  if (shape.batch < 1) {
    return absl::InvalidArgumentError(absl::StrCat("batch must be >= 1, got ", shape.batch));
  }
  if (shape.hidden < 1) {
    return absl::InvalidArgumentError(absl::StrCat("hidden must be >= 1, got ", shape.hidden));
  }
  if (static_cast<int64_t>(shape.token_counts.size()) != world_size) {
    return absl::InvalidArgumentError(
        absl::StrFormat("token_counts has %d entries but the world size is %d",
                        shape.token_counts.size(), world_size));
  }
  AllGatherLayout layout;
  layout.world_size = world_size;
  layout.dtype = shape.dtype;
  layout.batch = shape.batch;
  if (!CheckedMultiply(shape.hidden, element_size, &layout.row_bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("hidden ", shape.hidden, " overflows the row size in bytes"));
  }
  for (int rank = 0; rank < world_size; ++rank) {
    const int64_t count = shape.token_counts[rank];
    if (count < 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("token_counts[%d] is negative: %d", rank, count));
    }
    layout.token_counts[rank] = count;
    layout.prefix_tokens[rank] = layout.total_tokens;
    if (__builtin_add_overflow(layout.total_tokens, count, &layout.total_tokens) ||
        layout.total_tokens > kMaxBytes) {
      return absl::InvalidArgumentError("token_counts: the sum of the counts overflows");
    }
  }
  int64_t slice_bytes = 0;
  if (!CheckedMultiply(layout.total_tokens, layout.row_bytes, &slice_bytes) ||
      !CheckedMultiply(slice_bytes, shape.batch, &layout.output_bytes)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the output of batch %d x %d tokens x %d bytes per row overflows 2^62 bytes", shape.batch,
        layout.total_tokens, layout.row_bytes));
  }
  if (layout.output_bytes > kMaxBytes / shape.tensors) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d tensors of %d bytes each overflow 2^62 bytes", shape.tensors, layout.output_bytes));
  }
  layout.tensors = shape.tensors;
  if (shape.wire != WireFormat::kNative && shape.wire != WireFormat::kFp8E4M3) {
    return absl::InvalidArgumentError(
        absl::StrCat("wire: unknown value ", static_cast<int32_t>(shape.wire)));
  }
  if (shape.wire == WireFormat::kFp8E4M3) {
    if (shape.dtype != DataType::kBFloat16 && shape.dtype != DataType::kFloat16) {
      return absl::InvalidArgumentError(absl::StrCat(
          "wire fp8_e4m3 carries bf16 or fp16 rows, not ", DataTypeName(shape.dtype)));
    }
    if (shape.hidden < kFp8MinHidden) {
      return absl::InvalidArgumentError(absl::StrCat(
          "wire fp8_e4m3 needs hidden >= ", kFp8MinHidden, " (a row's codes and scale travel "
          "in its own slot of the output), got ", shape.hidden));
    }
  }
  layout.wire = shape.wire;
  layout.counts_digest = CountsDigest(shape.token_counts);
  const int64_t digest_fields[] = {static_cast<int64_t>(layout.counts_digest), shape.tensors,
                                   static_cast<int64_t>(shape.wire)};
  layout.digest = CountsDigest(digest_fields);
  return layout;
}

int64_t AllGatherLayout::InPlaceOffset(int rank) const {
  return batch == 1 && wire == WireFormat::kNative ? GeometryOf(rank).output_offset
                                                    : kNotInPlace;
}

}  // namespace ltx
