// Parsing of command-line values shared by the ltx tools: byte sizes with K/M/G suffixes and
// device lists.
#ifndef LTX_TOOLS_LTX_ALLTOALL_FLAG_VALUES_H_
#define LTX_TOOLS_LTX_ALLTOALL_FLAG_VALUES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ltx {

// "4096", "32K", "8M", "1G" (powers of 1024) -> bytes. InvalidArgument for anything else or a
// size < 1.
absl::StatusOr<int64_t> ParseBytes(const std::string& text);

// "0,2,3" -> {0, 2, 3}; empty -> {}. InvalidArgument for a part that is not a number.
absl::StatusOr<std::vector<int>> ParseDevices(const std::string& text);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLTOALL_FLAG_VALUES_H_
