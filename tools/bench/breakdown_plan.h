// What a phase breakdown of the tools times, shared by the AllGather's and the all-to-all's:
// the protocol whose kernel it times at a size, and the block counts it compares.
#ifndef TOOLS_BENCH_BREAKDOWN_PLAN_H_
#define TOOLS_BENCH_BREAKDOWN_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ltx/runtime_options.h"

namespace ltx {

// The most bytes per rank a one-trip breakdown times, and where kAuto turns to the direct
// kernel.
inline constexpr int64_t kBreakdownOneTripMaxBytes = int64_t{512} << 10;

// "0,1,2,4" as {0, 1, 2, 4}; InvalidArgument for an empty list or a part that is not a number
// in [0, 1024]. Thread-safe (pure).
absl::StatusOr<std::vector<int>> ParseBlockList(absl::string_view text);

// The protocol whose kernel a breakdown of `per_rank_bytes` per rank times when asked for
// `requested`: kAuto gives kOneTrip up to kBreakdownOneTripMaxBytes per rank and kDirect above;
// any other protocol is itself (the tools' settings refuse all but kOneTrip and kDirect).
// Thread-safe (pure).
Protocol BreakdownProtocol(Protocol requested, int64_t per_rank_bytes);

}  // namespace ltx

#endif  // TOOLS_BENCH_BREAKDOWN_PLAN_H_
