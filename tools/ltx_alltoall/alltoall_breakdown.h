// The phase breakdown of the one-trip or the direct all-to-all (ltx_alltoall --breakdown): where
// the time of a Ulysses all-to-all goes. Per direction and block count it times the production
// kernel (graph replay and eager per-rank calls), launched the ordinary way and, for the
// one-trip kernel, with early start, and then the kernel's timed instantiation, whose
// %globaltimer records give the time of each phase per rank, the gap between ops and the
// cross-GPU round trips: the same table as ltx_allgather --breakdown
// (tools/bench/phase_records.h).
#ifndef LTX_TOOLS_LTX_ALLTOALL_ALLTOALL_BREAKDOWN_H_
#define LTX_TOOLS_LTX_ALLTOALL_ALLTOALL_BREAKDOWN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ltx/collectives/alltoall_layout.h"
#include "ltx/data_type.h"
#include "ltx/runtime.h"
#include "ltx/runtime_options.h"
#include "tools/bench/timing_plan.h"

namespace ltx {

struct AllToAllBreakdownConfig {
  // Protocol::kOneTrip or kDirect: whose kernel is timed.
  Protocol protocol = Protocol::kOneTrip;
  DataType dtype = DataType::kBFloat16;
  int64_t heads = 32;
  int64_t head_dim = 128;
  // Bytes per rank: total tokens = max(1, per_rank_bytes * world / token row), split evenly.
  int64_t per_rank_bytes = 8 << 10;
  std::vector<AllToAllDirection> directions = {AllToAllDirection::kSeqToHeads,
                                               AllToAllDirection::kHeadsToSeq};
  std::vector<int> blocks = {0, 1, 2, 4};  // Block counts to compare; 0 = automatic.
  TimingPlan timing;
};

// Runs `config` on every rank of `runtime` (calls on config.protocol; for one-trip, a shape whose
// pieces exceed the one-trip staging is InvalidArgument from the first call; a protocol other
// than kOneTrip or kDirect is InvalidArgument before anything runs): prints to stdout, per
// direction, early start (off, then, for one-trip, on), block count and call style, the phase
// table; progress to stderr.
// Each configuration is verified byte-exact afterwards (its last calls, then one call on fresh
// inputs). Returns the number of configurations with a wrong output, or the first error.
absl::StatusOr<int> RunAllToAllBreakdown(Runtime& runtime, const AllToAllBreakdownConfig& config);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLTOALL_ALLTOALL_BREAKDOWN_H_
