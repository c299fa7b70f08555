// Parsing and checking the ranks' GPUs of the tools' command lines.
#include "tools/flags/device_list.h"

#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kernels/wire/signal_layout.h"
#include "ltx/status_macros.h"
#include "tools/flags/int_list.h"

namespace ltx {

absl::StatusOr<std::vector<int>> ParseDevices(const std::string& text) {
  LTX_ASSIGN_OR_RETURN(std::vector<int> devices,
                       ParseIntList(text, 0, std::numeric_limits<int>::max(),
                                    "a device ordinal (a number >= 0)"));
  if (devices.size() > static_cast<size_t>(kMaxWorldSize)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d devices; at most %d ranks (a GPU may be named more than once)", devices.size(),
        kMaxWorldSize));
  }
  return devices;
}

absl::StatusOr<std::vector<int>> DevicesOfFlags(const std::string& devices, int gpus) {
  absl::StatusOr<std::vector<int>> parsed = ParseDevices(devices);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--devices: ", parsed.status().message()));
  }
  if (gpus < 0 || gpus > kMaxWorldSize) {
    return absl::InvalidArgumentError(
        absl::StrFormat("-g/--gpus: must be 0 (every visible GPU) to %d", kMaxWorldSize));
  }
  if (gpus > 0 && !parsed->empty()) {
    return absl::InvalidArgumentError("-g/--gpus and --devices: give one of them, not both");
  }
  for (int device = 0; device < gpus; ++device) parsed->push_back(device);
  return parsed;
}

}  // namespace ltx
