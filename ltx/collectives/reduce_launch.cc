// Filling the reduction kernel's parameters for one rank and launching it; the two ops of a
// two-shot AllReduce.
#include "ltx/collectives/reduce_launch.h"

#include <cstdint>

#include "kernels/reduce/reduce_math.h"
#include "ltx/collectives/allgather_launch.h"
#include "ltx/collectives/allgather_layout.h"
#include "ltx/collectives/kernel_params.h"

namespace ltx {
namespace {

// The kernel reads the element type and the reduction as these values.
static_assert(static_cast<int32_t>(DataType::kBFloat16) == kReduceBFloat16 &&
              static_cast<int32_t>(DataType::kFloat16) == kReduceFloat16 &&
              static_cast<int32_t>(DataType::kFloat32) == kReduceFloat32);
static_assert(static_cast<int32_t>(Reduction::kSum) == kReduceSum &&
              static_cast<int32_t>(Reduction::kMax) == kReduceMax &&
              static_cast<int32_t>(Reduction::kMin) == kReduceMin);

// The two-shot AllReduce of `layout` for rank `view.rank`: its chunk of every rank's input
// reduced into its own chunk of its output (in place, no rank reads another rank's chunk of a
// peer: each reads its own chunk of every buffer), then every chunk gathered in place in the
// outputs (kernels/PROTOCOL.md, "The two-shot AllReduce, in place or not").
cudaError_t LaunchTwoShotAllReduce(const PeerStoreView& view, const ReduceLayout& layout,
                                   const RankBuffers& buffers, const ResolvedCall& call) {
  const ReduceLayout step = TwoShotAllReduceStep(layout);
  // A valid reduction's chunks always make a valid AllGather; checked before the first step is
  // launched, so that no rank launches one step without the other.
  const absl::StatusOr<AllGatherLayout> gather = TwoShotAllReduceGather(step);
  if (!gather.ok()) return cudaErrorInvalidValue;
  RankBuffers chunk = buffers;
  chunk.output = static_cast<uint8_t*>(buffers.output) + step.first_rows[view.rank] *
                                                              step.element_size;
  const cudaError_t reduced =
      LaunchReduceKernel(ReduceParamsOf(view, step, chunk, call), call.blocks, buffers.stream);
  if (reduced != cudaSuccess) return reduced;
  RankBuffers gathered = buffers;
  gathered.input = chunk.output;
  ResolvedCall direct = call;
  direct.protocol = Protocol::kDirect;
  return LaunchAllGather(view, *gather, gathered, direct);
}

}  // namespace

ReduceKernelParams ReduceParamsOf(const PeerStoreView& view, const ReduceLayout& layout,
                                  const RankBuffers& buffers, const ResolvedCall& call) {
  ReduceKernelParams params;
  SetViewParams(view, call, &params);
  params.input = buffers.input;
  params.output = buffers.output;
  params.generation = call.generation;
  params.geometry = layout.GeometryOf(view.rank);
  params.digest = layout.digest;
  params.total_rows = layout.total_rows;
  params.row_bytes = layout.row_elements * layout.element_size;
  params.batch = layout.batch;
  params.dtype = static_cast<int32_t>(layout.dtype);
  params.reduction = static_cast<int32_t>(layout.reduction);
  params.collective = static_cast<uint32_t>(layout.collective);
  return params;
}

cudaError_t LaunchAllReduceRmsNorm(const PeerStoreView& view, const ReduceLayout& layout,
                                   const RankBuffers& buffers, const void* weight,
                                   const ResolvedCall& call) {
  ReduceKernelParams params = ReduceParamsOf(view, layout, buffers, call);
  params.residual = buffers.more_inputs[0];
  params.residual_out = buffers.more_outputs[0];
  params.weight = weight;
  params.hidden = layout.hidden;
  params.eps = layout.eps;
  return LaunchReduceKernel(params, call.blocks, buffers.stream);
}

cudaError_t LaunchReduce(const PeerStoreView& view, const ReduceLayout& layout,
                         const RankBuffers& buffers, const ResolvedCall& call) {
  if (call.two_shot) return LaunchTwoShotAllReduce(view, layout, buffers, call);
  return LaunchReduceKernel(ReduceParamsOf(view, layout, buffers, call), call.blocks,
                            buffers.stream);
}

}  // namespace ltx
