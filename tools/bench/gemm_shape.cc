// Parsing of a GEMM shape.
#include "tools/bench/gemm_shape.h"

#include <limits>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace ltx {

absl::StatusOr<GemmShape> ParseGemmShape(absl::string_view text) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, ',');
  int64_t dims[3] = {0, 0, 0};
  bool ok = parts.size() == 3;
  for (size_t i = 0; ok && i < 3; ++i) {
    ok = absl::SimpleAtoi(parts[i], &dims[i]) && dims[i] >= 1 &&
         dims[i] <= std::numeric_limits<int32_t>::max();
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s' is not a GEMM shape (M,N,K: three numbers from 1 to 2^31 - 1)", text));
  }
  return GemmShape{dims[0], dims[1], dims[2]};
}

}  // namespace ltx
