// Parsing of command-line values shared by the ltx tools.
#include "tools/ltx_alltoall/flag_values.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace ltx {

absl::StatusOr<int64_t> ParseBytes(const std::string& text) {
  int64_t scale = 1;
  std::string digits = text;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K': case 'k': scale = int64_t{1} << 10; break;
      case 'M': case 'm': scale = int64_t{1} << 20; break;
      case 'G': case 'g': scale = int64_t{1} << 30; break;
      default: break;
    }
    if (scale != 1) digits.pop_back();
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(digits, &value) || value < 1) {
    return absl::InvalidArgumentError(absl::StrFormat("'%s' is not a byte size", text));
  }
  return value * scale;
}

absl::StatusOr<std::vector<int>> ParseDevices(const std::string& text) {
  std::vector<int> devices;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int device = 0;
    if (!absl::SimpleAtoi(part, &device)) {
      return absl::InvalidArgumentError(absl::StrFormat("--devices: '%s' is not a number", part));
    }
    devices.push_back(device);
  }
  return devices;
}

}  // namespace ltx
