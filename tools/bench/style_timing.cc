// Timing ltx's calls and one-thread calls in a benchmark's call style.
#include "tools/bench/style_timing.h"

#include "ltx/status_macros.h"

namespace ltx {

absl::StatusOr<Measured> MeasureLtxCall(BenchStyle style, Transport transport,
                                        const TimingPlan& plan, const TimedRanks& ranks,
                                        const LtxCall& call) {
  switch (style) {
    case BenchStyle::kGraph:
      if (transport == Transport::kCopyEngine) {
        return absl::UnimplementedError(
            "--style=graph: the copy-engine transport cannot be captured into CUDA graphs");
      }
      return MeasureGraphReplaysPerRank(plan, ranks, call.rank);
    case BenchStyle::kPerRank:
      return Measure(plan, /*per_rank_threads=*/true, ranks, Repeated(call.rank), 1);
    case BenchStyle::kRankOneThread:
      return Measure(plan, /*per_rank_threads=*/false, ranks, Repeated([&](int) -> absl::Status {
                       for (int rank = 0; rank < static_cast<int>(ranks.devices.size()); ++rank) {
                         LTX_RETURN_IF_ERROR(call.rank(rank));
                       }
                       return absl::OkStatus();
                     }),
                     1);
    case BenchStyle::kCoordinated:
      break;
  }
  return Measure(plan, /*per_rank_threads=*/false, ranks,
                 Repeated([&](int) { return call.coordinated(); }), 1);
}

TimingPlan PlanAsRun(BenchStyle style, const TimingPlan& plan) {
  return style == BenchStyle::kGraph ? InWholeUnits(plan, GraphSet::kCallsPerGraph) : plan;
}

absl::StatusOr<Measured> MeasureOneThreadCall(
    BenchStyle style, const TimingPlan& plan, const TimedRanks& ranks,
    const std::function<absl::Status()>& one_call_all_ranks) {
  if (style == BenchStyle::kGraph) {
    return MeasureGraphReplays(plan, ranks, one_call_all_ranks);
  }
  return Measure(plan, /*per_rank_threads=*/false, ranks,
                 Repeated([&](int) { return one_call_all_ranks(); }), 1);
}

}  // namespace ltx
