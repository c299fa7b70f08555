// Names, parsing and validation of an overlap run.
#include "tools/ltx_allgather/overlap_config.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "ltx/status_macros.h"
#include "absl/strings/str_split.h"

namespace ltx {
namespace {

constexpr OverlapStyle kAllStyles[] = {OverlapStyle::kSm, OverlapStyle::kSmBudget,
                                       OverlapStyle::kCopyEngine, OverlapStyle::kNccl};

}  // namespace

std::string OverlapStyleName(OverlapStyle style) {
  switch (style) {
    case OverlapStyle::kSm:
      return "sm";
    case OverlapStyle::kSmBudget:
      return "sm_budget";
    case OverlapStyle::kCopyEngine:
      return "copy_engine";
    case OverlapStyle::kNccl:
      return "nccl";
  }
  return "unknown";
}

absl::StatusOr<std::vector<OverlapStyle>> ParseOverlapStyles(absl::string_view text) {
  std::vector<OverlapStyle> styles;
  for (absl::string_view name : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    const auto* found = std::find_if(std::begin(kAllStyles), std::end(kAllStyles),
                                     [&](OverlapStyle s) { return OverlapStyleName(s) == name; });
    if (found == std::end(kAllStyles)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "unknown style '%s'; expected a list of sm, sm_budget, copy_engine, nccl", name));
    }
    if (std::find(styles.begin(), styles.end(), *found) != styles.end()) {
      return absl::InvalidArgumentError(absl::StrFormat("style '%s' given twice", name));
    }
    styles.push_back(*found);
  }
  if (styles.empty()) return absl::InvalidArgumentError("no style given");
  return styles;
}

absl::Status ValidateOverlapConfig(const OverlapConfig& config) {
  if (config.hidden < 1) {
    return absl::InvalidArgumentError(absl::StrFormat("--hidden=%d: must be >= 1", config.hidden));
  }
  const int64_t row_bytes = config.hidden * ElementSize(config.dtype);
  if (config.per_rank_bytes < row_bytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("-b %d: the per-rank size must hold at least one token row (%d bytes)",
                        config.per_rank_bytes, row_bytes));
  }
  if (config.block_budget < 1) {
    return absl::InvalidArgumentError("--max_blocks: the block budget must be >= 1");
  }
  LTX_RETURN_IF_ERROR(ValidateTimingPlan(config.timing));
  if (config.styles.empty()) return absl::InvalidArgumentError("--overlap_styles: no style given");
  return absl::OkStatus();
}

int64_t OverlapTokensPerRank(const OverlapConfig& config) {
  return config.per_rank_bytes / (config.hidden * ElementSize(config.dtype));
}

}  // namespace ltx
