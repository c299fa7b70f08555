// Parsing and checking the head split of ltx_alltoall.
#include "tools/ltx_alltoall/head_counts.h"

#include <limits>
#include <numeric>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ltx/status_macros.h"
#include "tools/flags/int_list.h"

namespace ltx {

absl::StatusOr<std::vector<int64_t>> ParseHeadCounts(absl::string_view text, int world) {
  // Ints, so that the sum of the counts cannot overflow.
  LTX_ASSIGN_OR_RETURN(const std::vector<int> parsed,
                       ParseIntList(text, 0, std::numeric_limits<int>::max(),
                                    "a head count (a number >= 0)"));
  const std::vector<int64_t> counts(parsed.begin(), parsed.end());
  if (counts.empty()) return counts;
  if (world != 0 && counts.size() != static_cast<size_t>(world)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d head counts for %d ranks; give one per rank", counts.size(), world));
  }
  if (std::accumulate(counts.begin(), counts.end(), int64_t{0}) == 0) {
    return absl::InvalidArgumentError("no rank holds a head");
  }
  return counts;
}

absl::Status CheckHeadCounts(const std::vector<int64_t>& head_counts, int64_t heads) {
  if (head_counts.empty()) return absl::OkStatus();
  const int64_t sum = std::accumulate(head_counts.begin(), head_counts.end(), int64_t{0});
  if (sum == heads) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("%s sums to %d heads; the shape has %d",
                                                    absl::StrJoin(head_counts, ","), sum, heads));
}

}  // namespace ltx
