// Validation and layout of AllReduce and ReduceScatter arguments.
#include "ltx/collectives/reduce_layout.h"

#include <cstdint>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "kernels/protocols/copy_plan.h"
#include "ltx/collectives/allgather_layout.h"
#include "ltx/runtime/buffer_checks.h"
#include "ltx/status_macros.h"

namespace ltx {
namespace {

constexpr int64_t kAllReduceDigestTag = 0x416c6c5265647563;         // "AllReduc"
constexpr int64_t kTwoShotAllReduceDigestTag = 0x54776f53686f7452;  // "TwoShotR"
constexpr int64_t kReduceScatterDigestTag = 0x5265647563655363;     // "ReduceSc"
constexpr int64_t kRmsNormDigestTag = 0x524d534e6f726d41;           // "RMSNormA"
// Most elements of one row of the epilogue: exact as an fp32 (kernels/reduce/rmsnorm_math.h).
constexpr int64_t kMaxRmsNormHidden = int64_t{1} << 24;

// Checks what every reduction takes alike: the world size, the dtype and the reduction.
// Returns the element size.
absl::StatusOr<int> CheckReduction(DataType dtype, Reduction reduction, int world_size) {
  if (world_size < 1 || world_size > kMaxWorldSize) {
    return absl::InvalidArgumentError(
        absl::StrFormat("world_size %d is outside 1..%d", world_size, kMaxWorldSize));
  }
  if (dtype != DataType::kBFloat16 && dtype != DataType::kFloat16 &&
      dtype != DataType::kFloat32) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dtype ", DataTypeName(dtype), " cannot be reduced: the reductions take bf16, fp16 and "
        "fp32"));
  }
  if (reduction != Reduction::kSum && reduction != Reduction::kMax &&
      reduction != Reduction::kMin) {
    return absl::InvalidArgumentError(
        absl::StrCat("reduction: unknown value ", static_cast<int32_t>(reduction)));
  }
  return ElementSize(dtype);
}

// The fields of a reduction's layout that its shape gives directly (the dtype and reduction
// checked).
ReduceLayout LayoutOf(Collective collective, int world_size, DataType dtype, Reduction reduction,
                      int64_t batch, int64_t row_elements) {
  ReduceLayout layout;
  layout.collective = collective;
  layout.world_size = world_size;
  layout.dtype = dtype;
  layout.reduction = reduction;
  layout.element_size = ElementSize(dtype);
  layout.batch = batch;
  layout.row_elements = row_elements;
  return layout;
}

// The digest of `fields` (CountsDigest of the sequence).
uint64_t DigestOf(std::initializer_list<int64_t> fields) {
  return CountsDigest(absl::MakeConstSpan(fields.begin(), fields.size()));
}

}  // namespace

int64_t ReduceLayout::InputBytes() const {
  return batch * total_rows * row_elements * element_size;
}

int64_t ReduceLayout::OutputBytes(int rank) const {
  return batch * rows[rank] * row_elements * element_size;
}

ReduceGeometry ReduceLayout::GeometryOf(int rank) const {
  ReduceGeometry geometry;
  geometry.batch = batch;
  geometry.slice_elements = rows[rank] * row_elements;
  geometry.input_batch_stride = total_rows * row_elements;
  geometry.input_offset = first_rows[rank] * row_elements;
  geometry.element_size = element_size;
  return geometry;
}

int64_t ReduceLayout::InPlaceOffset(int) const {
  return collective == Collective::kReduceScatter ? kNotInPlace : 0;
}

absl::StatusOr<ReduceLayout> ComputeAllReduceLayout(const AllReduceShape& shape, int world_size) {
  LTX_ASSIGN_OR_RETURN(const int element_size,
                       CheckReduction(shape.dtype, shape.reduction, world_size));
  if (shape.count < 0) {
    return absl::InvalidArgumentError(absl::StrCat("count must be >= 0, got ", shape.count));
  }
  // Bounded as every buffer is: byte offsets are int64 on host and device.
  if (shape.count > (int64_t{1} << 62) / element_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("count ", shape.count, " overflows 2^62 bytes"));
  }
  ReduceLayout layout = LayoutOf(Collective::kAllReduce, world_size, shape.dtype,
                                 shape.reduction, /*batch=*/1, /*row_elements=*/shape.count);
  layout.total_rows = 1;
  for (int rank = 0; rank < world_size; ++rank) layout.rows[rank] = 1;
  layout.digest = DigestOf(
      {kAllReduceDigestTag, static_cast<int64_t>(shape.reduction), shape.count});
  return layout;
}

absl::StatusOr<ReduceLayout> ComputeReduceScatterLayout(const ReduceScatterShape& shape,
                                                        int world_size) {
  LTX_RETURN_IF_ERROR(CheckReduction(shape.dtype, shape.reduction, world_size).status());
  // The input of a ReduceScatter is the output of the AllGather of the same counts.
  AllGatherShape gathered_shape;
  gathered_shape.dtype = shape.dtype;
  gathered_shape.batch = shape.batch;
  gathered_shape.hidden = shape.hidden;
  gathered_shape.token_counts = shape.token_counts;
  LTX_ASSIGN_OR_RETURN(const AllGatherLayout gathered,
                       ComputeAllGatherLayout(gathered_shape, world_size));
  ReduceLayout layout = LayoutOf(Collective::kReduceScatter, world_size, shape.dtype,
                                 shape.reduction, shape.batch, shape.hidden);
  layout.total_rows = gathered.total_tokens;
  layout.rows = gathered.token_counts;
  layout.first_rows = gathered.prefix_tokens;
  layout.digest = DigestOf({kReduceScatterDigestTag, static_cast<int64_t>(shape.reduction),
                            shape.hidden, static_cast<int64_t>(gathered.counts_digest)});
  return layout;
}

absl::StatusOr<ReduceLayout> ComputeAllReduceRmsNormLayout(const AllReduceRmsNormShape& shape,
                                                           int world_size) {
  LTX_ASSIGN_OR_RETURN(const int element_size,
                       CheckReduction(shape.dtype, Reduction::kSum, world_size));
  if (shape.rows < 0) {
    return absl::InvalidArgumentError(absl::StrCat("rows must be >= 0, got ", shape.rows));
  }
  if (shape.hidden < 1 || shape.hidden > kMaxRmsNormHidden) {
    return absl::InvalidArgumentError(absl::StrCat("hidden must be in 1..", kMaxRmsNormHidden,
                                                   " (2^24), got ", shape.hidden));
  }
  if (!(shape.eps > 0.0f) || shape.eps == std::numeric_limits<float>::infinity()) {
    return absl::InvalidArgumentError(
        absl::StrCat("eps must be positive and finite, got ", shape.eps));
  }
  if (shape.rows > (int64_t{1} << 62) / element_size / shape.hidden) {
    return absl::InvalidArgumentError(absl::StrCat("rows ", shape.rows, " x hidden ",
                                                   shape.hidden, " overflows 2^62 bytes"));
  }
  ReduceLayout layout = LayoutOf(Collective::kAllReduceRmsNorm, world_size, shape.dtype,
                                 Reduction::kSum, /*batch=*/1, /*row_elements=*/shape.hidden);
  layout.total_rows = shape.rows;
  for (int rank = 0; rank < world_size; ++rank) layout.rows[rank] = shape.rows;
  layout.hidden = shape.hidden;
  layout.eps = shape.eps;
  uint32_t eps_bits = 0;
  std::memcpy(&eps_bits, &shape.eps, sizeof(eps_bits));
  layout.digest =
      DigestOf({kRmsNormDigestTag, shape.rows, shape.hidden, static_cast<int64_t>(eps_bits)});
  return layout;
}

ReduceLayout TwoShotAllReduceStep(const ReduceLayout& all_reduce) {
  ReduceLayout step = all_reduce;
  const int world = all_reduce.world_size;
  const int64_t count = all_reduce.row_elements;
  const int64_t vector = kVectorBytes / all_reduce.element_size;
  const int64_t vectors = count / vector;
  step.row_elements = 1;
  step.total_rows = count;
  int64_t first = 0;
  for (int rank = 0; rank < world; ++rank) {
    step.rows[rank] = (vectors / world + (rank < vectors % world ? 1 : 0)) * vector;
    if (rank == world - 1) step.rows[rank] += count - vectors * vector;
    step.first_rows[rank] = first;
    first += step.rows[rank];
  }
  step.digest = DigestOf(
      {kTwoShotAllReduceDigestTag, static_cast<int64_t>(all_reduce.reduction), count});
  return step;
}

absl::StatusOr<AllGatherLayout> TwoShotAllReduceGather(const ReduceLayout& step) {
  AllGatherShape chunks;
  chunks.dtype = step.dtype;
  chunks.hidden = 1;
  chunks.token_counts = absl::MakeConstSpan(step.rows.data(), step.world_size);
  return ComputeAllGatherLayout(chunks, step.world_size);
}

RankBuffers RmsNormRankBuffers(const RmsNormBuffers& buffers) {
  RankBuffers rank_buffers;
  rank_buffers.input = buffers.input;
  rank_buffers.output = buffers.output;
  rank_buffers.stream = buffers.stream;
  rank_buffers.more_inputs[0] = buffers.residual;
  rank_buffers.more_outputs[0] = buffers.residual_out;
  return rank_buffers;
}

TensorNames RmsNormTensorNames() {
  TensorNames names;
  names.inputs[1] = "residual";
  names.outputs[1] = "residual_out";
  return names;
}

absl::Status CheckRmsNormOwnBuffers(const ReduceLayout& layout, int rank,
                                    const RmsNormBuffers& buffers) {
  if (rank < 0 || rank >= layout.world_size) return absl::OkStatus();
  const int64_t bytes = layout.OutputBytes(rank);
  if (Overlap(buffers.input, bytes, buffers.output, bytes)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "rank %d: input overlaps output: the AllReduce with the RMSNorm epilogue cannot run in "
        "place (the peers read the input while this rank writes its output); residual_out may "
        "be residual",
        rank));
  }
  if (bytes == 0) return absl::OkStatus();
  if (buffers.weight == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("rank %d: weight is null, but there are %d rows", rank,
                        layout.total_rows));
  }
  const uintptr_t weight = reinterpret_cast<uintptr_t>(buffers.weight);
  if (weight % static_cast<uintptr_t>(layout.element_size) != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("rank %d: weight %p is not aligned to its %d-byte elements", rank,
                        buffers.weight, layout.element_size));
  }
  const int64_t weight_bytes = layout.hidden * layout.element_size;
  const TensorNames names = RmsNormTensorNames();
  const void* outputs[] = {buffers.output, buffers.residual_out};
  for (int k = 0; k < 2; ++k) {
    if (Overlap(buffers.weight, weight_bytes, outputs[k], bytes)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("rank %d: weight overlaps %s", rank, names.outputs[k]));
    }
  }
  return absl::OkStatus();
}

}  // namespace ltx
