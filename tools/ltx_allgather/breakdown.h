// The phase-breakdown run of the ltx_allgather tool: where the time of an AllGather on the
// one-trip or the direct path goes. Per block count it times the production kernel (graph replay
// and eager per-rank calls), and then the kernel's timed instantiation, whose %globaltimer
// records give the mean time of each phase per rank, the gap between ops and the cross-GPU round
// trips (direct: also the spread of the blocks' stores). For the one-trip path, then the host
// cost of each step of an eager per-rank call, of a bare launch by parameter size and with a
// completion event in the launch, and every block count again with early start.
#ifndef LTX_TOOLS_LTX_ALLGATHER_BREAKDOWN_H_
#define LTX_TOOLS_LTX_ALLGATHER_BREAKDOWN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/ltx_allgather/breakdown_config.h"

namespace ltx {

// One block count of the breakdown.
struct BreakdownRow {
  int blocks = 0;     // As requested (0 = automatic).
  bool early_start = false;
  int64_t wrong = 0;  // 1 if an output differed from the expected bytes in the checks.
};

// Runs `config`: validates it (InvalidArgument before touching a GPU), then prints to stdout
// the timer's tick, one table per block count and call style, and for the one-trip path the
// host tables and last the tables with early start; progress to stderr. Returns a row per block
// count (and early start), or the first error that stopped it.
absl::StatusOr<std::vector<BreakdownRow>> RunBreakdown(const BreakdownConfig& config);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLGATHER_BREAKDOWN_H_
