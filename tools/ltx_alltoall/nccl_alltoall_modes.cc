// Timing NCCL's all-to-all three ways on one shape.
#include "tools/ltx_alltoall/nccl_alltoall_modes.h"

#include <cuda_runtime_api.h>

#include <memory>
#include <utility>

#include "absl/strings/str_format.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/status_macros.h"
#include "tools/bench/bench_table.h"
#include "tools/ltx_alltoall/nccl_alltoall.h"

namespace ltx {
namespace {

// Copies `bytes` per rank from `from[r]` to `to[r]` on rank r's harness stream.
absl::Status CopyEach(const std::vector<int>& devices, const std::vector<RankBuffers>& buffers,
                      const std::vector<const void*>& from, const std::vector<void*>& to,
                      const std::vector<int64_t>& bytes) {
  for (size_t r = 0; r < devices.size(); ++r) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(devices[r]), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaMemcpyAsync(to[r], from[r], bytes[r], cudaMemcpyDeviceToDevice, buffers[r].stream),
        "copying between the harness and NCCL's windows"));
  }
  return absl::OkStatus();
}

// The ce mode: the harness's input copied into the windows, the op timed there, its output
// copied back for the check. Returns the whole op's time.
absl::StatusOr<double> TimeCopyEngine(const NcclSide& nccl, AllToAllHarness& harness,
                                      const std::vector<int>& devices,
                                      const OneThreadTimer& timer) {
  const AllToAllLayout& layout = harness.layout();
  const std::vector<RankBuffers> harness_buffers = harness.AllBuffers();
  std::vector<RankBuffers> windows = harness_buffers;
  NcclAllToAllOptions options;
  options.collective = true;
  std::vector<const void*> harness_inputs, window_outputs;
  std::vector<void*> window_inputs, harness_outputs;
  std::vector<int64_t> input_bytes, output_bytes;
  for (size_t r = 0; r < devices.size(); ++r) {
    const int rank = static_cast<int>(r);
    windows[r].input = nccl.ce_windows->buffer(rank, kAllToAllWindowInput);
    windows[r].output = nccl.ce_windows->buffer(rank, kAllToAllWindowOutput);
    options.staging.push_back(nccl.ce_windows->buffer(rank, kAllToAllWindowStaging));
    harness_inputs.push_back(harness_buffers[r].input);
    window_inputs.push_back(nccl.ce_windows->buffer(rank, kAllToAllWindowInput));
    window_outputs.push_back(windows[r].output);
    harness_outputs.push_back(harness_buffers[r].output);
    input_bytes.push_back(layout.InputBytes(rank));
    output_bytes.push_back(layout.OutputBytes(rank));
  }
  LTX_ASSIGN_OR_RETURN(std::unique_ptr<NcclAllToAll> op,
                       NcclAllToAll::Create(*nccl.ce_clique, devices, layout, windows, options));
  LTX_RETURN_IF_ERROR(
      CopyEach(devices, harness_buffers, harness_inputs, window_inputs, input_bytes));
  LTX_ASSIGN_OR_RETURN(const double us, timer([&] { return op->Run(); }));
  LTX_RETURN_IF_ERROR(
      CopyEach(devices, harness_buffers, window_outputs, harness_outputs, output_bytes));
  LTX_RETURN_IF_ERROR(harness.SynchronizeStreams());
  return us;
}

}  // namespace

absl::StatusOr<NcclAllToAllTimes> TimeNcclAllToAll(const NcclSide& nccl, AllToAllHarness& harness,
                                                   const std::vector<int>& devices,
                                                   double bytes_per_rank,
                                                   const OneThreadTimer& timer) {
  NcclAllToAllTimes times;
  if (nccl.clique == nullptr) return times;
  const int world = static_cast<int>(devices.size());
  for (NcclMode mode : kNcclModes) {
    NcclTime& time = At(times.modes, mode);
    if (!nccl.Runs(mode)) {
      time.why_not = nccl.why_not[static_cast<int>(mode)];
      continue;
    }
    // Fresh inputs and poisoned outputs: an output a mode leaves alone shows up as wrong.
    LTX_RETURN_IF_ERROR(harness.RefreshInputs());
    absl::StatusOr<double> us;
    if (mode == NcclMode::kPlain) {
      const std::vector<RankBuffers> buffers = harness.AllBuffers();
      LTX_ASSIGN_OR_RETURN(std::unique_ptr<NcclAllToAll> op,
                           NcclAllToAll::Create(*nccl.clique, devices, harness.layout(), buffers));
      us = timer([&] { return op->Run(); });
      if (us.ok()) {
        LTX_ASSIGN_OR_RETURN(times.transfer_us, timer([&] { return op->Transfer(); }));
        LTX_ASSIGN_OR_RETURN(times.permute_us, timer([&] { return op->Permute(); }));
      }
      LTX_RETURN_IF_ERROR(harness.SynchronizeStreams());
    } else {
      us = TimeCopyEngine(nccl, harness, devices, timer);
    }
    if (!us.ok()) {
      time.why_not = std::string(us.status().message());
      absl::PrintF("# NCCL %s: n/a on this shape: %s\n", NcclModeName(mode), time.why_not);
      continue;
    }
    if (!harness.Verify().ok()) ++times.wrong;
    time.us = *us;
    time.busbw = BusBandwidth(bytes_per_rank / *us / 1e3, world);
  }
  return times;
}

}  // namespace ltx
