// The layout of one reduction (AllReduce or ReduceScatter), derived from its shape: which rows
// of every rank's input each rank reduces, the bytes of each rank's buffers, and the host checks
// of each rank's buffers. Validation happens here, on the host, before any launch, so every bad
// input becomes an InvalidArgument that names the argument. The model is that of the kernel's
// plan (kernels/reduce/reduce_plan.h): every input is [batch, total_rows, row_elements], and
// rank r reduces rows [first_rows[r], first_rows[r] + rows[r]) of each batch slice into its
// output.
#ifndef LTX_COLLECTIVES_REDUCE_LAYOUT_H_
#define LTX_COLLECTIVES_REDUCE_LAYOUT_H_

#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/reduce/reduce_plan.h"
#include "kernels/wire/collective.h"
#include "kernels/wire/signal_layout.h"
#include "ltx/allreduce_rmsnorm.h"
#include "ltx/allreduce_shape.h"
#include "ltx/collectives/allgather_layout.h"
#include "ltx/data_type.h"
#include "ltx/rank_buffers.h"
#include "ltx/reduce_scatter_shape.h"
#include "ltx/reduction.h"

namespace ltx {

// Layout of a validated reduction.
struct ReduceLayout {
  Collective collective = Collective::kAllReduce;
  int world_size = 0;
  DataType dtype = DataType::kBFloat16;
  Reduction reduction = Reduction::kSum;
  int element_size = 0;
  int64_t batch = 0;
  int64_t row_elements = 0;
  int64_t total_rows = 0;
  std::array<int64_t, kMaxWorldSize> rows = {};
  std::array<int64_t, kMaxWorldSize> first_rows = {};
  // Digest of the collective, the reduction and the counts; ranks compare it on the device, so
  // a reduction never pairs with another collective, another reduction or another shape.
  uint64_t digest = 0;
  // The fused RMSNorm epilogue (Collective::kAllReduceRmsNorm): rows of `hidden` elements
  // (row_elements), and eps. hidden is 0 for the other reductions.
  int64_t hidden = 0;
  float eps = 0.0f;

  // Every rank's input: batch * total_rows * row_elements elements.
  int64_t InputBytes() const;
  // Rank `rank`'s output: batch * rows[rank] * row_elements elements.
  int64_t OutputBytes(int rank) const;
  // Which input elements rank `rank` reduces into which output elements.
  ReduceGeometry GeometryOf(int rank) const;
  // Where an in-place input of rank `rank` may start in its output: at the output itself for
  // the AllReduce, nowhere (kNotInPlace) for the ReduceScatter.
  int64_t InPlaceOffset(int rank) const;
};

// Validates `shape` for `world_size` ranks and derives its layout: one row of `count` elements
// that every rank reduces. InvalidArgument names the argument: a world size outside
// 1..kMaxWorldSize, a dtype the reductions do not take (only bf16, fp16 and fp32), an unknown
// reduction, a negative count, or a count whose byte size overflows 2^62. Thread-safe.
absl::StatusOr<ReduceLayout> ComputeAllReduceLayout(const AllReduceShape& shape, int world_size);

// Validates `shape` for `world_size` ranks and derives its layout: rank r reduces its token rows.
// InvalidArgument as ComputeAllReduceLayout, and as ComputeAllGatherLayout for the batch,
// hidden and token counts. Thread-safe.
absl::StatusOr<ReduceLayout> ComputeReduceScatterLayout(const ReduceScatterShape& shape,
                                                        int world_size);

// Validates `shape` for `world_size` ranks and derives the layout of the AllReduce with the
// fused RMSNorm epilogue: rows of `hidden` elements that every rank sums and normalises (one-shot).
// InvalidArgument names the argument: the world size and dtype as ComputeAllReduceLayout, rows
// < 0, hidden outside 1..2^24, eps not positive and finite, or a byte size that overflows 2^62.
// Thread-safe.
absl::StatusOr<ReduceLayout> ComputeAllReduceRmsNormLayout(const AllReduceRmsNormShape& shape,
                                                           int world_size);

// The first op of the two-shot AllReduce of `all_reduce` (ComputeAllReduceLayout): a
// ReduceScatter of the count split into world_size chunks (whole 16-byte vectors but for the
// last rank's), rank r's chunk of every rank's input reduced into its own place in rank r's
// output (in place or not: no rank stores an element that any rank reads). The second op
// gathers the chunks (TwoShotAllReduceGather). Its digest differs from the AllReduce's: ranks
// that disagree on one-shot or two-shot disagree at entry. Thread-safe (pure).
ReduceLayout TwoShotAllReduceStep(const ReduceLayout& all_reduce);

// The second op of the two-shot AllReduce whose first op is `step` (TwoShotAllReduceStep): the
// AllGather of its chunks (rows of one element), rank r's input being its chunk, in place in
// its output. A valid step always makes a valid AllGather. Thread-safe (pure).
absl::StatusOr<AllGatherLayout> TwoShotAllReduceGather(const ReduceLayout& step);

// The buffers of the fused RMSNorm epilogue as the Runtime's funnel carries them: two tensors,
// the input and output, then the residual and residual_out (more_inputs[0], more_outputs[0]);
// the weight travels beside them (CollectiveOp::local_inputs).
RankBuffers RmsNormRankBuffers(const RmsNormBuffers& buffers);

// What messages call those two tensors' buffers: input, output; residual, residual_out.
TensorNames RmsNormTensorNames();

// The checks of rank `rank`'s epilogue buffers that only the epilogue makes, without touching
// the GPU: InvalidArgument for an input that overlaps its output (the peers read the input while
// this rank writes its output), a null weight where there are rows, a weight not aligned to the
// element size, or a weight that overlaps an output. OK for a rank outside [0, world_size) and
// for what the common checks of its two tensors cover (the Runtime's funnel makes those, with
// RmsNormTensorNames). Thread-safe.
absl::Status CheckRmsNormOwnBuffers(const ReduceLayout& layout, int rank,
                                    const RmsNormBuffers& buffers);

}  // namespace ltx

#endif  // LTX_COLLECTIVES_REDUCE_LAYOUT_H_
