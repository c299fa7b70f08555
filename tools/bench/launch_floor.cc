// Empty-kernel timings in the benchmark's two launch modes.
#include "tools/bench/launch_floor.h"

#include <algorithm>
#include <limits>

#include "ltx/cuda/cuda_status.h"
#include "ltx/status_macros.h"
#include "tools/bench/empty_kernel.h"

namespace ltx {

double LaunchFloor::For(BenchStyle style) const {
  return style == BenchStyle::kGraph ? graph_us : eager_us;
}

absl::StatusOr<int> FloorBlocks(const std::vector<int>& devices, int blocks, int max_blocks) {
  if (blocks > 0) return blocks;
  int sms = std::numeric_limits<int>::max();
  for (int device : devices) {
    int count = 0;
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device),
                   "cudaDeviceGetAttribute(multiProcessorCount)"));
    sms = std::min(sms, count);
  }
  return max_blocks > 0 ? std::min(sms, max_blocks) : sms;
}

absl::StatusOr<LaunchFloor> MeasureLaunchFloor(const TimingPlan& plan, const TimedRanks& ranks,
                                               int blocks) {
  LaunchFloor floor;
  floor.blocks = blocks;
  auto launch = [&](int rank) {
    return CudaStatus(LaunchEmptyKernel(blocks, ranks.streams[rank]), "empty kernel launch");
  };
  LTX_ASSIGN_OR_RETURN(const Measured eager, Measure(plan, /*per_rank_threads=*/true, ranks,
                                                     Repeated(launch), /*calls_per_unit=*/1));
  floor.eager_us = eager.device_us;
  floor.eager_host_us = eager.host_us;
  LTX_ASSIGN_OR_RETURN(
      const Measured replayed, MeasureGraphReplays(plan, ranks, [&]() -> absl::Status {
        for (size_t rank = 0; rank < ranks.devices.size(); ++rank) {
          LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(ranks.devices[rank]), "cudaSetDevice"));
          LTX_RETURN_IF_ERROR(launch(static_cast<int>(rank)));
        }
        return absl::OkStatus();
      }));
  floor.graph_us = replayed.device_us;
  return floor;
}

}  // namespace ltx
