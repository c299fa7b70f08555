// Timing of a GEMM and a collective running at the same time on two streams of every GPU: one
// window forks both streams from one event, interleaves the launches of the two loops so that
// both start together, and times each stream and the pair with CUDA events.
#ifndef LTX_TOOLS_LTX_ALLGATHER_OVERLAP_TIMING_H_
#define LTX_TOOLS_LTX_ALLGATHER_OVERLAP_TIMING_H_

#include <cuda_runtime_api.h>

#include <vector>

#include "absl/status/statusor.h"
#include "tools/bench/bench_timing.h"
#include "tools/ltx_allgather/bench_config.h"

namespace ltx {

// How a collective is issued: `loop(rank, calls)` from one host thread per rank, or
// `loop(-1, calls)` for every rank from one thread.
struct CollectiveLoop {
  bool per_rank_threads = true;
  RankLoop loop;
};

// The GPUs in rank order with the GEMM stream and the collective stream of each.
struct PairRanks {
  std::vector<int> devices;
  std::vector<cudaStream_t> gemm_streams;
  std::vector<cudaStream_t> collective_streams;
};

// Medians over windows; each time is the slowest GPU's.
struct PairTimes {
  double gemm_us = 0;        // One GEMM beside the collective.
  double collective_us = 0;  // One collective call beside the GEMM.
  double wall_us = 0;        // One window, from the fork to the end of both streams.
  int gemm_calls = 0;        // Per window.
  int collective_calls = 0;  // Per window.
};

// Collective calls that last about as long as `gemms` GEMMs, from their times alone: the
// rounded ratio, at least 1.
int MatchingCalls(int gemms, double gemm_us, double collective_us);

// How many of `collectives` calls are launched right after GEMM `i` of `gemms`, spreading
// them evenly; over i = 0 .. gemms - 1 they sum to `collectives`.
int CallsAfterGemm(int i, int gemms, int collectives);

// Runs a warm-up window of plan.warmup GEMMs (skipped when 0), then plan.windows windows of
// plan.iterations GEMMs and `collective_calls` collective calls, both streams of every GPU
// forked from one event; `gemm` is called from the same thread as the collective's loop of
// that rank (or with rank -1 from one thread). Returns the first error.
absl::StatusOr<PairTimes> MeasurePair(const TimingPlan& plan, const PairRanks& ranks,
                                      const RankLoop& gemm, const CollectiveLoop& collective,
                                      int collective_calls);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLGATHER_OVERLAP_TIMING_H_
