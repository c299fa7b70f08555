// Parsing and validation of the phase-breakdown settings.
#include "tools/ltx_allgather/breakdown_config.h"

#include "absl/strings/str_format.h"
#include "ltx/status_macros.h"
#include "tools/bench/breakdown_plan.h"

namespace ltx {
namespace {

// The most bytes per rank the direct breakdown takes (each GPU holds the whole output).
constexpr int64_t kDirectMaxBytes = int64_t{1} << 30;

}  // namespace

absl::Status ValidateBreakdownConfig(const BreakdownConfig& config) {
  if (config.hidden < 1) {
    return absl::InvalidArgumentError(absl::StrFormat("--hidden=%d: must be >= 1", config.hidden));
  }
  if (config.protocol != Protocol::kOneTrip && config.protocol != Protocol::kDirect) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--protocol=%s: the breakdown times the one_trip or the direct kernel",
                        ProtocolName(config.protocol)));
  }
  const int64_t row_bytes = config.hidden * ElementSize(config.dtype);
  const int64_t most =
      config.protocol == Protocol::kOneTrip ? kBreakdownOneTripMaxBytes : kDirectMaxBytes;
  if (config.per_rank_bytes < row_bytes || config.per_rank_bytes > most) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "-b %d: the breakdown times the %s kernel; need one token row (%d bytes) to %d bytes "
        "per rank",
        config.per_rank_bytes, ProtocolName(config.protocol), row_bytes, most));
  }
  LTX_RETURN_IF_ERROR(ValidateTimingPlan(config.timing));
  if (config.runtime.transport == Transport::kCopyEngine) {
    return absl::InvalidArgumentError(
        "--breakdown: the timed kernels need the peer-store transport");
  }
  if (config.blocks.empty()) return absl::InvalidArgumentError("--breakdown_blocks: empty");
  return absl::OkStatus();
}

int64_t BreakdownTokensPerRank(const BreakdownConfig& config) {
  return config.per_rank_bytes / (config.hidden * ElementSize(config.dtype));
}

}  // namespace ltx
