// The launch floor of the benchmark: what an empty kernel of the AllGather's launch shape costs
// per call, as a graph replay and launched eagerly from one host thread per GPU at once, so
// that each measured time can be read against the least any kernel launch could take.
#ifndef TOOLS_BENCH_LAUNCH_FLOOR_H_
#define TOOLS_BENCH_LAUNCH_FLOOR_H_

#include "absl/status/statusor.h"
#include "tools/bench/bench_style.h"
#include "tools/bench/bench_timing.h"
#include "tools/bench/timing_plan.h"

namespace ltx {

struct LaunchFloor {
  int blocks = 0;            // Blocks per grid (of kEmptyKernelThreads threads).
  double graph_us = 0;       // Device time per launch, replayed from graphs, slowest GPU.
  double eager_us = 0;       // Device time per launch, launched eagerly, slowest GPU.
  double eager_host_us = 0;  // Host time of one eager launch.

  // The floor of a call style: graph replay for kGraph, eager for the others.
  double For(BenchStyle style) const;
};

// Blocks the floor launches with: `blocks` if > 0, else the smallest SM count of `devices`
// capped by `max_blocks` if > 0 (the block count ltx uses for its largest messages).
absl::StatusOr<int> FloorBlocks(const std::vector<int>& devices, int blocks, int max_blocks);

// Measures the empty kernel of `blocks` blocks on every rank of `ranks`, with the same timing
// plan as the AllGather rows: eagerly from one host thread per GPU, and as graph replays.
// Returns the first CUDA error. Leaves the streams idle.
absl::StatusOr<LaunchFloor> MeasureLaunchFloor(const TimingPlan& plan, const TimedRanks& ranks,
                                               int blocks);

}  // namespace ltx

#endif  // TOOLS_BENCH_LAUNCH_FLOOR_H_
