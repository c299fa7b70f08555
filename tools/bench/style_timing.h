// Timing calls in a benchmark's call style (--style): ltx's calls per rank from one thread per
// GPU, every rank's from one thread, coordinated, or captured into CUDA graphs and replayed; and
// the calls of a library issued from one thread (NCCL's grouped calls), eagerly or replayed.
#ifndef TOOLS_BENCH_STYLE_TIMING_H_
#define TOOLS_BENCH_STYLE_TIMING_H_

#include <functional>

#include "absl/status/statusor.h"
#include "ltx/runtime_options.h"
#include "tools/bench/bench_style.h"
#include "tools/bench/bench_timing.h"
#include "tools/bench/timing_plan.h"

namespace ltx {

// One ltx call in both forms the styles issue: `rank(r)` enqueues rank r's per-rank call,
// `coordinated()` the one call for every rank.
struct LtxCall {
  std::function<absl::Status(int rank)> rank;
  std::function<absl::Status()> coordinated;
};

// Measures `call` on `ranks` in `style`: kPerRank from one host thread per GPU, kRankOneThread
// every rank's per-rank call in turn from one thread, kCoordinated the coordinated call from one
// thread, kGraph per-rank calls captured into one graph per GPU (each rank from its own thread,
// as captured copy-engine calls meet on the host) and replayed. `transport` is the Runtime's:
// Unimplemented for kGraph on the copy-engine transport. Returns the first error.
absl::StatusOr<Measured> MeasureLtxCall(BenchStyle style, Transport transport,
                                        const TimingPlan& plan, const TimedRanks& ranks,
                                        const LtxCall& call);

// `plan` as the measurements above run it in `style`: for kGraph, in whole graphs of
// GraphSet::kCallsPerGraph calls (InWholeUnits); unchanged otherwise. What the tools print.
// Thread-safe (pure).
TimingPlan PlanAsRun(BenchStyle style, const TimingPlan& plan);

// Measures `one_call_all_ranks` (which enqueues one call on every rank's stream from one thread,
// as NCCL's grouped calls) on `ranks`: captured and replayed for kGraph, else launched eagerly.
// Returns the first error.
absl::StatusOr<Measured> MeasureOneThreadCall(
    BenchStyle style, const TimingPlan& plan, const TimedRanks& ranks,
    const std::function<absl::Status()>& one_call_all_ranks);

}  // namespace ltx

#endif  // TOOLS_BENCH_STYLE_TIMING_H_
