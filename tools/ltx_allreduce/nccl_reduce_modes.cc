// Timing NCCL's reductions three ways on one size.
#include "tools/ltx_allreduce/nccl_reduce_modes.h"

#include <cuda_runtime_api.h>

#include <string>

#include "absl/strings/str_format.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/status_macros.h"
#include "tools/bench/style_timing.h"
#include "tools/ltx_allreduce/reduce_bandwidth.h"

namespace ltx {
namespace {

// Buffers per rank in the windows, in this order.
constexpr int kWindowInput = 0;
constexpr int kWindowOutput = 1;

tools::NcclReduction NcclReductionOf(Reduction reduction) {
  switch (reduction) {
    case Reduction::kMax:
      return tools::NcclReduction::kMax;
    case Reduction::kMin:
      return tools::NcclReduction::kMin;
    case Reduction::kSum:
      break;
  }
  return tools::NcclReduction::kSum;
}

// Enqueues `call` on `clique` between each rank's inputs[r] and outputs[r].
absl::Status Enqueue(const tools::NcclClique& clique, const NcclReduceCall& call,
                     const std::vector<const void*>& inputs, const std::vector<void*>& outputs,
                     const std::vector<cudaStream_t>& streams) {
  const tools::NcclType type = NcclTypeOf(call.dtype);
  const tools::NcclReduction reduction = NcclReductionOf(call.reduction);
  if (call.collective != Collective::kReduceScatter) {  // The epilogue's: its AllReduce alone.
    return clique.AllReduce(inputs, outputs, call.input_elements, type, reduction, streams);
  }
  return clique.ReduceScatter(inputs, outputs, call.input_elements / clique.world_size(), type,
                              reduction, streams);
}

// Copies every rank's input of `bytes` from the harness into the windows, on its stream.
absl::Status CopyIntoWindows(const tools::NcclWindows& windows,
                             const std::vector<RankBuffers>& buffers, const TimedRanks& ranks,
                             int64_t bytes) {
  for (size_t r = 0; r < buffers.size(); ++r) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(ranks.devices[r]), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaMemcpyAsync(windows.buffer(static_cast<int>(r), kWindowInput), buffers[r].input, bytes,
                        cudaMemcpyDeviceToDevice, ranks.streams[r]),
        "copying the inputs into NCCL's windows"));
  }
  return absl::OkStatus();
}

}  // namespace

void OpenNcclReduceModes(const std::vector<int>& devices, int64_t capacity, NcclSide* nccl) {
  if (nccl->clique == nullptr) return;
  NcclModeRequest request;
  request.buffer_bytes.assign(2, static_cast<size_t>(capacity));  // Input, output.
  request.no_copy_engine = kNoCopyEngineReductions;
  const absl::Status reductions = nccl->library->ReductionsAvailable();
  if (!reductions.ok()) {
    nccl->why_not[static_cast<int>(NcclMode::kPlain)] = std::string(reductions.message());
    request.no_windows = std::string(reductions.message());
  }
  OpenNcclModes(devices, request, nccl);
}

absl::StatusOr<NcclTimes> TimeNcclReduce(const NcclSide& nccl, const NcclReduceCall& call,
                                         const std::vector<RankBuffers>& buffers, BenchStyle style,
                                         const TimingPlan& plan, const TimedRanks& ranks) {
  NcclTimes times;
  if (nccl.clique == nullptr) return times;
  const int64_t input_bytes = call.input_elements * ElementSize(call.dtype);
  for (NcclMode mode : kNcclModes) {
    NcclTime& time = At(times, mode);
    if (!nccl.Runs(mode)) {
      time.why_not = nccl.why_not[static_cast<int>(mode)];
      continue;
    }
    std::vector<const void*> inputs;
    std::vector<void*> outputs;
    for (size_t r = 0; r < buffers.size(); ++r) {
      const bool window = mode == NcclMode::kWindows;
      const int rank = static_cast<int>(r);
      inputs.push_back(window ? nccl.windows->buffer(rank, kWindowInput) : buffers[r].input);
      outputs.push_back(window ? nccl.windows->buffer(rank, kWindowOutput) : buffers[r].output);
    }
    if (mode == NcclMode::kWindows) {
      LTX_RETURN_IF_ERROR(CopyIntoWindows(*nccl.windows, buffers, ranks, input_bytes));
    }
    const absl::StatusOr<Measured> measured = MeasureOneThreadCall(style, plan, ranks, [&] {
      return Enqueue(*nccl.clique, call, inputs, outputs, ranks.streams);
    });
    if (!measured.ok()) {
      time.why_not = std::string(measured.status().message());
      absl::PrintF("# NCCL %s: n/a on this size: %s\n", NcclModeName(mode), time.why_not);
      continue;
    }
    time.us = measured->device_us;
    time.busbw =
        ReduceBandwidthOf(call.collective, nccl.clique->world_size(), input_bytes, time.us).busbw;
  }
  return times;
}

}  // namespace ltx
