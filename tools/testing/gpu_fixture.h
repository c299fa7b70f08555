// The fixture of the GPU tests (testonly): the rank layout and the skips (test_ranks.h); a
// Runtime with a harness over the same GPUs; running one case in either call style; and per-rank
// calls captured into CUDA graphs.
#ifndef LTX_TOOLS_TESTING_GPU_FIXTURE_H_
#define LTX_TOOLS_TESTING_GPU_FIXTURE_H_

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "ltx/runtime.h"
#include "tools/testing/allgather_harness.h"
#include "tools/testing/test_ranks.h"
#include "tools/testing/visible_gpus.h"

namespace ltx {

// How long the tests wait on the host for a call that should succeed.
inline constexpr absl::Duration kTestWait = absl::Seconds(30);

enum class CallStyle {
  kCoordinated,     // Runtime::AllGather from the test thread.
  kPerRankThreads,  // Runtime::AllGatherRank from one thread per rank.
};

// A Runtime and a harness over the same GPUs. On failure the test has already failed and the
// members are null.
struct GpuFixture {
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<AllGatherHarness> harness;
};
GpuFixture MakeGpuFixture(std::vector<int> devices, RuntimeOptions options = {});

// `options` on the peer-store transport, for tests that force a kernel protocol (kDirect,
// kOneTrip): on the automatic transport, GPUs without peer access would move their calls on the
// copy engines unseen. Creating a Runtime then fails where a pair of GPUs lacks peer access.
RuntimeOptions OnPeerStores(RuntimeOptions options = {});

// Prepares `c` in the harness and enqueues it on `ranks` (all ranks if empty) in `style`,
// without waiting. Returns the first launch error.
absl::Status LaunchCase(GpuFixture& f, const AllGatherCase& c, CallStyle style,
                        const CallOptions& call = {}, std::vector<int> ranks = {});

// LaunchCase on all ranks, waits (kTestWait), and verifies every rank's output.
absl::Status RunAndVerify(GpuFixture& f, const AllGatherCase& c, CallStyle style,
                          const CallOptions& call = {});

// One CUDA graph per rank, each holding that rank's captured per-rank call.
class CapturedRankCalls {
 public:
  CapturedRankCalls() = default;
  ~CapturedRankCalls();
  CapturedRankCalls(const CapturedRankCalls&) = delete;
  CapturedRankCalls& operator=(const CapturedRankCalls&) = delete;

  // Captures `call_rank(r)` on buffers[r].stream, from one thread per rank (device devices[r]
  // current); returns the first error (of the call, or of CUDA).
  absl::Status Capture(const std::vector<int>& devices, const std::vector<RankBuffers>& buffers,
                       const std::function<absl::Status(int rank)>& call_rank);
  // Capture of AllGatherRank / AllToAllRank calls.
  absl::Status CaptureAllGather(Runtime& runtime, const AllGatherShape& shape,
                                const std::vector<RankBuffers>& buffers, const CallOptions& call);
  absl::Status CaptureAllToAll(Runtime& runtime, const AllToAllShape& shape,
                               const std::vector<RankBuffers>& buffers, const CallOptions& call);

  // Replays the graph of every rank of `ranks` (every rank if empty) once on its stream.
  absl::Status Replay(const std::vector<int>& devices, const std::vector<RankBuffers>& buffers,
                      const std::vector<int>& ranks = {});

 private:
  std::vector<cudaGraphExec_t> execs_;
};

}  // namespace ltx

#endif  // LTX_TOOLS_TESTING_GPU_FIXTURE_H_
