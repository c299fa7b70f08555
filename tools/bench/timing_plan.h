// How one measurement of the tools' benchmarks is timed: warm-up calls, then timed windows of
// calls, of which the median is reported.
#ifndef TOOLS_BENCH_TIMING_PLAN_H_
#define TOOLS_BENCH_TIMING_PLAN_H_

namespace ltx {

// Warm-up and timed windows of one measurement.
struct TimingPlan {
  int warmup = 20;       // Calls before timing.
  int iterations = 100;  // Calls per timed window.
  int windows = 5;       // Timed windows; the median is reported.
};

}  // namespace ltx

#endif  // TOOLS_BENCH_TIMING_PLAN_H_
