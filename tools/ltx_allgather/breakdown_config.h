// What one phase-breakdown run of the ltx_allgather tool measures: one per-rank size on the
// one-trip or the direct path, the block counts to compare, the timing plan and the Runtime
// options; with the plain logic over them (parsing the block list, validation).
#ifndef LTX_TOOLS_LTX_ALLGATHER_BREAKDOWN_CONFIG_H_
#define LTX_TOOLS_LTX_ALLGATHER_BREAKDOWN_CONFIG_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ltx/data_type.h"
#include "ltx/runtime_options.h"
#include "tools/ltx_allgather/bench_config.h"

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

// "0,1,2,4" as {0, 1, 2, 4}; InvalidArgument for an empty list or a part that is not a number
// in [0, 1024].
absl::StatusOr<std::vector<int>> ParseBlockList(absl::string_view text);

// InvalidArgument naming the first setting a breakdown cannot run with (a protocol other than
// kOneTrip or kDirect, per-rank size below one token row or above the protocol's limit: 512 KiB
// for one-trip, 1 GiB for direct; hidden, timing counts, the copy-engine transport). Needs no
// GPU.
absl::Status ValidateBreakdownConfig(const BreakdownConfig& config);

// The protocol whose kernel a breakdown of `per_rank_bytes` per rank times when asked for
// `requested`: kAuto gives kOneTrip up to 512 KiB per rank and kDirect above; any other protocol
// is itself (ValidateBreakdownConfig refuses all but kOneTrip and kDirect). Shared by the
// AllGather's and the all-to-all's breakdowns.
Protocol BreakdownProtocol(Protocol requested, int64_t per_rank_bytes);

// Tokens per rank: per_rank_bytes over the row size. Requires a valid config.
int64_t BreakdownTokensPerRank(const BreakdownConfig& config);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLGATHER_BREAKDOWN_CONFIG_H_
