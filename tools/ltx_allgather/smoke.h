// The smoke run of ltx_allgather: the GPUs and their peer access, then a handful of AllGather
// shapes and dtypes in both call styles, each verified byte-exact on every GPU.
#ifndef LTX_TOOLS_LTX_ALLGATHER_SMOKE_H_
#define LTX_TOOLS_LTX_ALLGATHER_SMOKE_H_

#include "absl/status/statusor.h"
#include "tools/ltx_allgather/tool_config.h"

namespace ltx {

struct SmokeResult {
  int cases = 0;     // Case x call style runs.
  int failures = 0;  // Runs whose call failed or whose output was wrong.
};

// Runs the smoke cases with `config` (its dtype replaces every case's, if set; its call options
// go with every call; per-rank calls come from one thread per GPU), printing the topology, one
// line per run and a closing PASS/FAIL line to stdout. An error before the first case (no
// Runtime, no buffers) is returned; a failing case is counted, and the Runtime reset after it.
absl::StatusOr<SmokeResult> RunSmoke(const SmokeConfig& config);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLGATHER_SMOKE_H_
