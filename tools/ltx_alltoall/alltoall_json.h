// What one row of ltx_alltoall's benchmark measured (one shape, direction and protocol: ltx,
// NCCL's transfer and permute alone, NCCL's three modes), and the JSON file of a run's rows
// (--json) over the shared document (tools/bench/json_document.h). Pure (no GPU).
#ifndef LTX_TOOLS_LTX_ALLTOALL_ALLTOALL_JSON_H_
#define LTX_TOOLS_LTX_ALLTOALL_ALLTOALL_JSON_H_

#include <string>
#include <vector>

#include "ltx/alltoall_shape.h"
#include "ltx/runtime_options.h"
#include "tools/bench/json_document.h"
#include "tools/bench/nccl_best.h"
#include "tools/bench/tensor_calls.h"
#include "tools/ltx_alltoall/alltoall_config.h"

namespace ltx {

// One row of the benchmark. Times are medians over windows of device time per call (us); -1:
// not measured.
struct AllToAllBenchRow {
  AllToAllDirection direction = AllToAllDirection::kSeqToHeads;
  BenchShape shape{0, 0, 0};
  double size_bytes = 0;  // Output bytes per rank (the mean with an uneven head split).
  double count = 0;       // Its elements.
  Protocol protocol = Protocol::kAuto;
  double ltx_us = -1;  // -1: the protocol refused the shape.
  double ltx_algbw = -1;
  double ltx_busbw = -1;
  int wrong = 0;                 // 1 if ltx's output was wrong.
  double nccl_transfer_us = -1;  // Plain NCCL's grouped send/recv alone.
  double nccl_permute_us = -1;   // Plain NCCL's permute alone.
  NcclTimes nccl;                // Per NcclMode, the whole op with its permute.
  int nccl_wrong = 0;            // NCCL modes whose output was wrong.
  int tensors = 1;               // Tensors of ltx's op (ltx_us), each of `shape`.
  double calls_us = -1;          // With tensors > 1: as many single-tensor calls.
};

// The row's one op of its tensors against as many calls.
TensorCalls TensorCallsOf(const AllToAllBenchRow& row);

// "seq_to_heads" or "heads_to_seq", as --direction names them.
std::string DirectionFlagName(AllToAllDirection direction);

// The JSON document of a run of `config` on `devices` with NCCL `nccl_version` ("none" without
// NCCL): the shared settings (with batch and head_counts, empty for the even split), then one
// object per row: direction, tokens, heads, head_dim, size_bytes, count, protocol, ltx's time,
// algbw and busbw, wrong, NCCL's transfer and permute alone, its modes (NcclJsonMembers, each
// mode's figures or why it was unavailable) and nccl_wrong, then with more than one tensor
// TensorCallsJson's members.
JsonDocument AllToAllJson(const AllToAllToolConfig& config, const std::vector<int>& devices,
                          const std::string& nccl_version,
                          const std::vector<AllToAllBenchRow>& rows);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLTOALL_ALLTOALL_JSON_H_
