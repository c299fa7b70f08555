// The per-rank calls of a phase breakdown (tools/bench/breakdown_calls.h).
#include "tools/bench/breakdown_calls.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ltx/status_macros.h"

namespace ltx {

CallOptions BreakdownCallOptions(Protocol protocol, const BreakdownCalls& calls,
                                 const PhaseRecords& records, int rank) {
  CallOptions call;
  call.protocol = protocol;
  call.blocks = calls.blocks;
  call.early_start = calls.early;
  if (calls.timed) call.phase_timestamps = records.ForRank(rank);
  return call;
}

absl::StatusOr<Measured> MeasureBreakdownCalls(const TimingPlan& timing, const TimedRanks& ranks,
                                               int world, const BreakdownCalls& calls,
                                               const std::function<absl::Status(int)>& one_rank) {
  if (!calls.graph) {
    return Measure(timing, /*per_rank_threads=*/true, ranks, Repeated(one_rank), 1);
  }
  return MeasureGraphReplays(timing, ranks, [&]() -> absl::Status {
    for (int rank = 0; rank < world; ++rank) LTX_RETURN_IF_ERROR(one_rank(rank));
    return absl::OkStatus();
  });
}

std::string PhaseTableTitle(Protocol protocol, absl::string_view what,
                            const BreakdownCalls& calls, const Measured& untimed,
                            const Measured& timed) {
  return absl::StrFormat(
      "%s, %s, %s, blocks %s%s: %.2f us per call (device), host %.2f us; timed kernel %.2f us, "
      "host %.2f us",
      ProtocolName(protocol), what, calls.graph ? "graph replay" : "eager per-rank",
      calls.blocks == 0 ? "auto" : absl::StrCat(calls.blocks), calls.early ? ", early start" : "",
      untimed.device_us, untimed.host_us, timed.device_us, timed.host_us);
}

}  // namespace ltx
