// The JSON file of an ltx_allgather benchmark sweep (--json): the run's settings and every row's
// figures.
#ifndef LTX_TOOLS_LTX_ALLGATHER_BENCH_JSON_H_
#define LTX_TOOLS_LTX_ALLGATHER_BENCH_JSON_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tools/bench/bench_table.h"
#include "tools/bench/launch_floor.h"
#include "tools/ltx_allgather/bench_config.h"

namespace ltx {

// What the JSON file records besides the rows.
struct BenchRunInfo {
  std::vector<int> devices;
  std::string nccl_version;  // "none" without NCCL.
  LaunchFloor floor;
};

// Writes `rows` with the run's settings to config.json_path. PermissionDenied if the file
// cannot be opened, DataLoss if writing fails.
absl::Status WriteJson(const BenchConfig& config, const BenchRunInfo& info,
                       const std::vector<BenchRow>& rows);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLGATHER_BENCH_JSON_H_
