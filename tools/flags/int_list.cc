// Comma-separated integer lists on the tools' command lines.
#include "tools/flags/int_list.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace ltx {

absl::StatusOr<std::vector<int>> ParseIntList(absl::string_view text, int min, int max,
                                              absl::string_view what) {
  std::vector<int> values;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int value = 0;
    if (!absl::SimpleAtoi(part, &value) || value < min || value > max) {
      return absl::InvalidArgumentError(absl::StrFormat("'%s' is not %s", part, what));
    }
    values.push_back(value);
  }
  return values;
}

}  // namespace ltx
