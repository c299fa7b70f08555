// Comma-separated integer lists on the tools' command lines (--devices, --breakdown_blocks,
// --head_counts), each value checked against its flag's range.
#ifndef LTX_TOOLS_FLAGS_INT_LIST_H_
#define LTX_TOOLS_FLAGS_INT_LIST_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ltx {

// "3,1,4" as {3, 1, 4}: the comma-separated integers of `text` (spaces around a value allowed),
// empty parts skipped (so "" is {}), each in [min, max]. InvalidArgument for a part that is not such an integer: "'x' is not
// <what>", e.g. what = "a device ordinal (a number >= 0)". Thread-safe (pure).
absl::StatusOr<std::vector<int>> ParseIntList(absl::string_view text, int min, int max,
                                              absl::string_view what);

}  // namespace ltx

#endif  // LTX_TOOLS_FLAGS_INT_LIST_H_
