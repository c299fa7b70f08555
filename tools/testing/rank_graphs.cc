// Per-rank calls captured into CUDA graphs (tools/testing/rank_graphs.h).
#include "tools/testing/rank_graphs.h"

#include "ltx/cuda/cuda_status.h"
#include "ltx/status_macros.h"
#include "tools/testing/rank_threads.h"

namespace ltx {

absl::Status CaptureRankGraphs(const std::vector<int>& devices,
                               const std::vector<RankBuffers>& buffers,
                               const std::function<absl::Status(int rank)>& call_rank,
                               const std::function<absl::Status(int rank, cudaGraph_t)>& take) {
  return RunOnRankThreads(static_cast<int>(devices.size()), [&](int rank) -> absl::Status {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(devices[rank]), "cudaSetDevice"));
    const cudaStream_t stream = buffers[rank].stream;
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "BeginCapture"));
    const absl::Status called = call_rank(rank);
    cudaGraph_t graph = nullptr;
    const absl::Status ended = CudaStatus(cudaStreamEndCapture(stream, &graph), "EndCapture");
    if (!called.ok() || !ended.ok()) {
      if (graph != nullptr) cudaGraphDestroy(graph);
      return called.ok() ? ended : called;
    }
    return take(rank, graph);
  });
}

}  // namespace ltx
