// The head split of ltx_alltoall (--head_counts): the heads each rank holds on the heads-sharded
// side, parsed from the flag and checked against a shape's heads without a GPU.
#ifndef LTX_TOOLS_LTX_ALLTOALL_HEAD_COUNTS_H_
#define LTX_TOOLS_LTX_ALLTOALL_HEAD_COUNTS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ltx {

// "2,3,0,3" as {2, 3, 0, 3}, the heads of each of `world` ranks (AllToAllShape::head_counts);
// empty as {} (the even split). InvalidArgument for a part that is not a number >= 0, a list
// whose length is not `world` (world 0: the world size is not known yet, any length), or one
// without any head. Thread-safe (pure).
absl::StatusOr<std::vector<int64_t>> ParseHeadCounts(absl::string_view text, int world);

// OK when `head_counts` (from ParseHeadCounts) is empty or sums to `heads`; else
// InvalidArgument saying both. Thread-safe (pure).
absl::Status CheckHeadCounts(const std::vector<int64_t>& head_counts, int64_t heads);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLTOALL_HEAD_COUNTS_H_
