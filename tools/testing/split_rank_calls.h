// Per-rank calls captured into CUDA graphs and each split at one of its kernels, for tests that
// put an event at a chosen point inside an op: every rank runs its call up to that kernel, the
// test does what it wants (a Stop of the Runtime), then every rank runs the kernel alone, with
// the arguments it was captured with.
#ifndef LTX_TOOLS_TESTING_SPLIT_RANK_CALLS_H_
#define LTX_TOOLS_TESTING_SPLIT_RANK_CALLS_H_

#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ltx/rank_buffers.h"

namespace ltx {

class SplitRankCalls {
 public:
  SplitRankCalls() = default;
  ~SplitRankCalls();
  SplitRankCalls(const SplitRankCalls&) = delete;
  SplitRankCalls& operator=(const SplitRankCalls&) = delete;

  // Captures `call_rank(r)` on buffers[r].stream, from one thread per rank (device devices[r]
  // current), and splits each rank's graph at the one kernel whose name contains `kernel_name`:
  // the rest of the graph (without it) and the kernel alone. NotFound when no kernel or several
  // match; FailedPrecondition when a node depends on that kernel (the split would reorder it);
  // else the first error of a call or of CUDA. Call once.
  absl::Status Capture(const std::vector<int>& devices, const std::vector<RankBuffers>& buffers,
                       const std::string& kernel_name,
                       const std::function<absl::Status(int rank)>& call_rank);

  // Launches, on each rank's stream in rank order, every node of its graph but the kernel.
  absl::Status LaunchBefore();
  // Launches, on each rank's stream in rank order, the kernel alone with its captured
  // arguments. Only after LaunchBefore; the graphs keep the arguments alive.
  absl::Status LaunchKernel();

 private:
  struct Rank {
    int device = 0;
    cudaStream_t stream = nullptr;
    cudaGraph_t graph = nullptr;          // As captured; owns the kernel's arguments.
    cudaGraphExec_t before = nullptr;     // The graph without the kernel.
    cudaKernelNodeParams kernel = {};
  };
  std::vector<Rank> ranks_;
};

}  // namespace ltx

#endif  // LTX_TOOLS_TESTING_SPLIT_RANK_CALLS_H_
