// How one measurement of the tools' benchmarks is timed: warm-up calls, then timed windows of
// calls, of which the median is reported; and its check against the tools' flags.
#ifndef TOOLS_BENCH_TIMING_PLAN_H_
#define TOOLS_BENCH_TIMING_PLAN_H_

#include "absl/status/status.h"

namespace ltx {

// Warm-up and timed windows of one measurement.
struct TimingPlan {
  int warmup = 20;       // Calls before timing.
  int iterations = 100;  // Calls per timed window.
  int windows = 5;       // Timed windows; the median is reported.
};

// InvalidArgument naming -w, -n and --windows unless warmup >= 0, iterations >= 1 and
// windows >= 1. Thread-safe (pure).
absl::Status ValidateTimingPlan(const TimingPlan& plan);

// `plan` as it runs in units of `calls_per_unit` calls (>= 1; a CUDA graph of several captured
// calls): warm-up and window lengths rounded down to whole units, a window at least one unit.
// Thread-safe (pure).
TimingPlan InWholeUnits(const TimingPlan& plan, int calls_per_unit);

}  // namespace ltx

#endif  // TOOLS_BENCH_TIMING_PLAN_H_
