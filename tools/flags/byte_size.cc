// Parsing of byte sizes.
#include "tools/flags/byte_size.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace ltx {

absl::StatusOr<int64_t> ParseBytes(const std::string& text) {
  int shift = 0;
  std::string digits = text;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K':
      case 'k':
        shift = 10;
        break;
      case 'M':
      case 'm':
        shift = 20;
        break;
      case 'G':
      case 'g':
        shift = 30;
        break;
      default:
        break;
    }
    if (shift != 0) digits.pop_back();
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(digits, &value) || value < 1 || value > (int64_t{1} << (62 - shift))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s' is not a byte size (a number >= 1 with an optional K, M or G)", text));
  }
  return value << shift;
}

}  // namespace ltx
