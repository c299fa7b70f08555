// The block list and the timed protocol of a phase breakdown.
#include "tools/bench/breakdown_plan.h"

#include "absl/strings/str_format.h"
#include "ltx/status_macros.h"
#include "tools/flags/int_list.h"

namespace ltx {
namespace {

constexpr int kMostBlocks = 1024;

}  // namespace

absl::StatusOr<std::vector<int>> ParseBlockList(absl::string_view text) {
  LTX_ASSIGN_OR_RETURN(
      std::vector<int> blocks,
      ParseIntList(text, 0, kMostBlocks,
                   absl::StrFormat("a block count (0 = automatic, up to %d)", kMostBlocks)));
  if (blocks.empty()) return absl::InvalidArgumentError("no block count given");
  return blocks;
}

Protocol BreakdownProtocol(Protocol requested, int64_t per_rank_bytes) {
  if (requested != Protocol::kAuto) return requested;
  return per_rank_bytes <= kBreakdownOneTripMaxBytes ? Protocol::kOneTrip : Protocol::kDirect;
}

}  // namespace ltx
