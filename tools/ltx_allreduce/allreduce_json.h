// What one row of ltx_allreduce's benchmark measured (one size: ltx, NCCL's three modes), and
// the JSON file of a run's rows (--json) over the shared document
// (tools/bench/json_document.h). Pure (no GPU).
#ifndef LTX_TOOLS_LTX_ALLREDUCE_ALLREDUCE_JSON_H_
#define LTX_TOOLS_LTX_ALLREDUCE_ALLREDUCE_JSON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tools/bench/json_document.h"
#include "tools/bench/nccl_best.h"
#include "tools/ltx_allreduce/allreduce_config.h"
#include "tools/ltx_allreduce/allreduce_path.h"

namespace ltx {

// One row of the benchmark. Times are medians over windows of device time per call (us).
struct AllReduceBenchRow {
  int64_t size_bytes = 0;                     // Input bytes per rank (nccl-tests' size).
  int64_t count = 0;                          // Its elements.
  AllReducePath path = AllReducePath::kAuto;  // The path ltx's call was forced on.
  double ltx_us = -1;
  double ltx_algbw = -1;
  double ltx_busbw = -1;
  // The epilogue's rows (--op allreduce_rmsnorm) only, else -1: ltx's AllReduce of the same
  // elements alone, and that AllReduce followed by the epilogue as a kernel of its own.
  double all_reduce_us = -1;
  double unfused_us = -1;
  int wrong = 0;   // 1 if ltx's output was wrong.
  NcclTimes nccl;  // Per NcclMode; none measured without NCCL.
};

// The JSON document of a run of `config` on `devices` with NCCL `nccl_version` ("none" without
// NCCL): the shared settings (with op, reduction and path, the --path value), then one object
// per row: size_bytes, count, path, ltx's time, algbw and busbw (for the epilogue,
// all_reduce_us and unfused_us after them), wrong, and NCCL's modes
// (NcclJsonMembers: each mode's figures or why it was unavailable, the best and ltx's speedup
// over it).
JsonDocument AllReduceJson(const AllReduceToolConfig& config, const std::vector<int>& devices,
                           const std::string& nccl_version,
                           const std::vector<AllReduceBenchRow>& rows);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLREDUCE_ALLREDUCE_JSON_H_
