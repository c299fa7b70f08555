// What one phase-breakdown run of the ltx_allgather tool measures: one per-rank size on the
// one-trip or the direct path, the block counts to compare, the timing plan and the Runtime
// options; with the plain logic over them (validation, tokens per rank). The block list and the
// protocol a breakdown times are those of tools/bench/breakdown_plan.h.
#ifndef LTX_TOOLS_LTX_ALLGATHER_BREAKDOWN_CONFIG_H_
#define LTX_TOOLS_LTX_ALLGATHER_BREAKDOWN_CONFIG_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "ltx/data_type.h"
#include "ltx/runtime_options.h"
#include "tools/bench/timing_plan.h"

namespace ltx {

struct BreakdownConfig {
  RuntimeOptions runtime;
  DataType dtype = DataType::kBFloat16;
  int64_t hidden = 4096;
  // Protocol::kOneTrip or kDirect: whose kernel is timed.
  Protocol protocol = Protocol::kOneTrip;
  int64_t per_rank_bytes = 8 << 10;        // Rounded down to whole token rows.
  std::vector<int> blocks = {0, 1, 2, 4};  // Block counts to compare; 0 = automatic.
  TimingPlan timing;
  bool check = true;
  // Each rank's input is its own tokens inside its output (AllGatherCase::in_place).
  bool in_place = false;
  absl::Duration host_wait = absl::Seconds(60);
};

// InvalidArgument naming the first setting a breakdown cannot run with (a protocol other than
// kOneTrip or kDirect, per-rank size below one token row or above the protocol's limit: 512 KiB
// for one-trip, 1 GiB for direct; hidden, timing counts, the copy-engine transport). Needs no
// GPU.
absl::Status ValidateBreakdownConfig(const BreakdownConfig& config);

// Tokens per rank: per_rank_bytes over the row size. Requires a valid config.
int64_t BreakdownTokensPerRank(const BreakdownConfig& config);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLGATHER_BREAKDOWN_CONFIG_H_
