// The per-rank calls of a phase breakdown (ltx_allgather and ltx_alltoall --breakdown): one
// configuration of them (block count, early start, timed kernel, graph replay), each rank's
// options, their measurement and the title of their phase table.
#ifndef TOOLS_BENCH_BREAKDOWN_CALLS_H_
#define TOOLS_BENCH_BREAKDOWN_CALLS_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ltx/runtime_options.h"
#include "tools/bench/bench_timing.h"
#include "tools/bench/phase_records.h"
#include "tools/bench/timing_plan.h"

namespace ltx {

// One configuration of calls: block count (0 = automatic), early start, timed kernel, graph
// replay (else eager per-rank calls).
struct BreakdownCalls {
  int blocks = 0;
  bool early = false;
  bool timed = false;
  bool graph = false;
};

// The options of rank `rank`'s call in `calls` on `protocol`: its block count and early start,
// and, timed, the rank's phase records of `records`. Thread-safe (pure).
CallOptions BreakdownCallOptions(Protocol protocol, const BreakdownCalls& calls,
                                 const PhaseRecords& records, int rank);

// Measures the calls `one_rank` makes (rank r's call) on `world` ranks with `timing`: eager,
// from one thread per rank, or (calls.graph) replays of one captured call per rank. Errors: those
// of the calls and of the timing.
absl::StatusOr<Measured> MeasureBreakdownCalls(const TimingPlan& timing, const TimedRanks& ranks,
                                               int world, const BreakdownCalls& calls,
                                               const std::function<absl::Status(int)>& one_rank);

// The title of a phase table, e.g. "one_trip, 64K per rank, graph replay, blocks auto: 5.10 us
// per call (device), host 2.31 us; timed kernel 5.40 us, host 2.40 us", where `what` names the
// size or shape. Thread-safe (pure).
std::string PhaseTableTitle(Protocol protocol, absl::string_view what,
                            const BreakdownCalls& calls, const Measured& untimed,
                            const Measured& timed);

}  // namespace ltx

#endif  // TOOLS_BENCH_BREAKDOWN_CALLS_H_
