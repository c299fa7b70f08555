// The ranks' GPUs on the tools' command lines: --devices (CUDA ordinals in rank order, repeats
// allowed: ranks may share a GPU) and -g/--gpus (GPUs 0..N-1), checked for form without a GPU;
// whether the GPUs are visible is CheckDevicesVisible's (tools/flags/command_line.h).
#ifndef LTX_TOOLS_FLAGS_DEVICE_LIST_H_
#define LTX_TOOLS_FLAGS_DEVICE_LIST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ltx {

// "3,1" as {3, 1}; empty as {} (not given). InvalidArgument for a part that is not a device
// ordinal (a number >= 0) or more than kMaxWorldSize (8) entries. Repeats are allowed (ranks may
// share a GPU). Thread-safe (pure).
absl::StatusOr<std::vector<int>> ParseDevices(const std::string& text);

// The ranks' devices from --devices (`devices`) and -g/--gpus (`gpus`: 0..gpus-1; 0 = not
// given); empty when neither is given (every visible GPU). InvalidArgument naming the flag for a
// bad list, a negative or too large (over kMaxWorldSize) -g, or both flags given.
// Thread-safe (pure).
absl::StatusOr<std::vector<int>> DevicesOfFlags(const std::string& devices, int gpus);

}  // namespace ltx

#endif  // LTX_TOOLS_FLAGS_DEVICE_LIST_H_
