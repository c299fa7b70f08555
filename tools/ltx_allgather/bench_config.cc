// Names, token splits, sizes and validation of a benchmark sweep.
#include "tools/ltx_allgather/bench_config.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kernels/wire/fp8_slot.h"
#include "ltx/status_macros.h"

namespace ltx {
namespace {

// Slack for the floating-point product of the size steps reaching max_bytes exactly.
constexpr double kSizeSlack = 1.0000001;

}  // namespace

std::string SplitPatternName(SplitPattern pattern) {
  switch (pattern) {
    case SplitPattern::kEven:
      return "even";
    case SplitPattern::kUneven:
      return "uneven";
    case SplitPattern::kZeros:
      return "zeros";
  }
  return "unknown";
}

absl::StatusOr<SplitPattern> ParseSplitPattern(absl::string_view name) {
  for (SplitPattern pattern : {SplitPattern::kEven, SplitPattern::kUneven, SplitPattern::kZeros}) {
    if (name == SplitPatternName(pattern)) return pattern;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("unknown split '%s'; expected one of even, uneven, zeros", name));
}

std::vector<int64_t> SplitTokens(int64_t total_tokens, int world, SplitPattern pattern) {
  std::vector<int64_t> weights(world, 1);
  for (int rank = 0; rank < world; ++rank) {
    if (pattern == SplitPattern::kUneven) weights[rank] = rank + 1;
    if (pattern == SplitPattern::kZeros) weights[rank] = (rank % 2 == 0 || world == 1) ? 1 : 0;
  }
  int64_t weight_sum = 0;
  for (int64_t w : weights) weight_sum += w;
  std::vector<int64_t> counts(world, 0);
  int64_t assigned = 0;
  for (int rank = 0; rank < world; ++rank) {
    counts[rank] = total_tokens * weights[rank] / weight_sum;
    assigned += counts[rank];
  }
  // The remainder goes to the last rank with a non-zero weight.
  for (int rank = world - 1; rank >= 0; --rank) {
    if (weights[rank] > 0) {
      counts[rank] += total_tokens - assigned;
      break;
    }
  }
  return counts;
}

absl::Status ValidateBenchConfig(const BenchConfig& config) {
  if (config.min_bytes < 1 || config.max_bytes < config.min_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat("sizes: need 1 <= -b <= -e, got -b %d -e %d",
                                                      config.min_bytes, config.max_bytes));
  }
  if (!(config.factor > 1)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("-f %g: the step factor must be > 1", config.factor));
  }
  if (config.hidden < 1) {
    return absl::InvalidArgumentError(absl::StrFormat("--hidden=%d: must be >= 1", config.hidden));
  }
  if (config.wire == WireFormat::kFp8E4M3) {
    if (config.dtype != DataType::kBFloat16 && config.dtype != DataType::kFloat16) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--wire=fp8_e4m3 carries bf16 or fp16 rows, not ", DataTypeName(config.dtype)));
    }
    if (config.hidden < kFp8MinHidden || config.in_place || config.tensors > 1 ||
        (config.call.protocol != Protocol::kAuto && config.call.protocol != Protocol::kDirect)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--wire=fp8_e4m3 needs --hidden >= ", kFp8MinHidden,
          ", one tensor, no --in_place and --protocol auto or direct"));
    }
  }
  LTX_RETURN_IF_ERROR(ValidateTimingPlan(config.timing));
  return CheckStyleOnTransport(config.style, config.runtime.transport);
}

std::vector<int64_t> SweepSizes(const BenchConfig& config) {
  std::vector<int64_t> sizes;
  for (double size = config.min_bytes; size <= config.max_bytes * kSizeSlack;
       size *= config.factor) {
    sizes.push_back(static_cast<int64_t>(size));
  }
  return sizes;
}

}  // namespace ltx
