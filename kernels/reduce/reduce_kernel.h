// Host interface of the reductions' kernel (AllReduce, ReduceScatter and the AllReduce with the
// fused RMSNorm epilogue alike): the arguments
// one rank's launch carries and the launcher. The runtime validates arguments before it gets
// here; this layer only launches. Protocol: kernels/PROTOCOL.md, "The pull protocol".
#ifndef KERNELS_REDUCE_REDUCE_KERNEL_H_
#define KERNELS_REDUCE_REDUCE_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/reduce/reduce_plan.h"
#include "kernels/wire/collective.h"
#include "kernels/wire/entry_announcement.h"
#include "kernels/wire/error_record.h"
#include "kernels/wire/host_device.h"
#include "kernels/wire/signal_layout.h"

namespace ltx {

// Everything one rank's kernel needs. Passed by value, so a CUDA graph that captures the launch
// replays exactly these values; the op number lives in the signal region (kernels/PROTOCOL.md).
struct ReduceKernelParams {
  // This rank's input, which every rank reads, and its output, which only this rank writes.
  const void* input = nullptr;
  void* output = nullptr;
  // Every rank's signal region, indexed by rank; peers' entries are peer pointers.
  SignalRegion* signals[kMaxWorldSize] = {};
  // This rank's error record: device pointer of host-mapped pinned memory.
  DeviceErrorRecord* error_record = nullptr;
  // Which input elements this rank reduces into which output elements.
  ReduceGeometry geometry;
  // What ranks compare at entry: a digest of the collective, the reduction and the counts, and
  // the shape as an AllGather would announce it.
  uint64_t digest = 0;
  int64_t total_rows = 0;
  int64_t row_bytes = 0;
  int64_t batch = 0;
  int32_t dtype = 0;      // kReduceBFloat16, kReduceFloat16 or kReduceFloat32.
  int32_t reduction = 0;  // kReduceSum, kReduceMax or kReduceMin.
  uint32_t collective = 0;  // kAllReduce, kReduceScatter or kAllReduceRmsNorm, for error records.
  int32_t rank = 0;
  int32_t world_size = 0;
  uint64_t timeout_ns = 0;
  // The Runtime's reset generation at the launch (a captured graph keeps it).
  uint64_t generation = 0;
  // The fused residual-add + RMSNorm epilogue (Collective::kAllReduceRmsNorm; hidden 0 for the
  // other reductions): the sum is rows of `hidden` elements (geometry: one batch slice of every
  // row), and this rank stores residual_out = sum + residual and output = RMSNorm(residual_out)
  // * weight (kernels/reduce/rmsnorm_math.h) instead of the sum. residual_out may be residual.
  const void* residual = nullptr;
  void* residual_out = nullptr;
  const void* weight = nullptr;
  int64_t hidden = 0;
  float eps = 0.0f;
};

// The collective of the parameters' op (the kernel serves both reductions).
LTX_HOST_DEVICE inline Collective CollectiveOf(const ReduceKernelParams& params) {
  return static_cast<Collective>(params.collective);
}

// What the rank of `params` announces at the entry of an op: its input (the buffer its peers
// access) in the address field, with the direct protocol's path.
LTX_HOST_DEVICE inline EntryAnnouncement AnnouncementOf(const ReduceKernelParams& params) {
  return MakeEntryAnnouncement(reinterpret_cast<uint64_t>(params.input), params.dtype,
                               params.row_bytes, params.batch, params.total_rows, params.digest,
                               AnnouncedProtocol::kDirect, params.generation);
}

// Threads per block of the reduction kernel.
inline constexpr int kReduceThreads = 512;

// Enqueues the reduction kernel of one rank on `stream` with `blocks` thread blocks (any number
// >= 1); with params.hidden > 0, its form with the RMSNorm epilogue. Returns the launch error, if
// any (cudaErrorInvalidValue for a dtype the kernel does not reduce). Thread-safe; the caller's
// current device must be the stream's device.
cudaError_t LaunchReduceKernel(const ReduceKernelParams& params, int blocks, cudaStream_t stream);

// The epilogue alone, with no collective: for rows x hidden elements of `dtype`
// (kReduceBFloat16, kReduceFloat16 or kReduceFloat32), residual_out = input + residual and
// output = RMSNorm(residual_out) * weight, in the order of kernels/reduce/rmsnorm_math.h (the
// AllReduce with the epilogue on one rank whose sum is `input`). What a server runs after its
// AllReduce where the epilogue is not fused: the benchmark's unfused baseline. residual_out may
// be residual, and output may be input.
struct RmsNormAloneArgs {
  const void* input = nullptr;
  const void* residual = nullptr;
  void* residual_out = nullptr;
  const void* weight = nullptr;
  void* output = nullptr;
  int64_t rows = 0;
  int64_t hidden = 0;
  float eps = 0.0f;
  int32_t dtype = 0;
};

// Enqueues the epilogue alone on `stream` with `blocks` thread blocks (rows are spread over
// them). Returns the launch error (cudaErrorInvalidValue for another dtype, negative rows,
// hidden < 1 or blocks < 1). Thread-safe; the
// caller's current device must be the stream's device.
cudaError_t LaunchRmsNormAlone(const RmsNormAloneArgs& args, int blocks, cudaStream_t stream);

// Loads the kernel (each element type's instantiation, with and without the epilogue) onto the
// current device and lowers
// *resident_blocks_per_sm to the fewest blocks of them that one SM keeps resident, as
// LoadAllGatherKernel does. Returns the CUDA error.
cudaError_t LoadReduceKernel(int* resident_blocks_per_sm);

}  // namespace ltx

#endif  // KERNELS_REDUCE_REDUCE_KERNEL_H_
