// Per-rank calls captured into CUDA graphs, one graph per rank, each captured from the rank's own
// thread (as a server with one thread per GPU captures them).
#ifndef LTX_TOOLS_TESTING_RANK_GRAPHS_H_
#define LTX_TOOLS_TESTING_RANK_GRAPHS_H_

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "ltx/rank_buffers.h"

namespace ltx {

// Captures `call_rank(r)` on buffers[r].stream, from one thread per rank (device devices[r]
// current; thread-local capture), and hands each captured graph to `take(r, graph)`, which owns
// it from then on. A graph whose call failed is destroyed and not handed over. Returns the first
// error in rank order: of the call, of CUDA, or of `take`.
absl::Status CaptureRankGraphs(const std::vector<int>& devices,
                               const std::vector<RankBuffers>& buffers,
                               const std::function<absl::Status(int rank)>& call_rank,
                               const std::function<absl::Status(int rank, cudaGraph_t)>& take);

}  // namespace ltx

#endif  // LTX_TOOLS_TESTING_RANK_GRAPHS_H_
