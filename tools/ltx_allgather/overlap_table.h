// The output of the overlap run: one row per AllGather style with its times alone and beside
// the GEMM, and the figures derived from them (GEMM slowdown, collective bandwidth kept, the
// pair's wall time against the sum of the times alone).
#ifndef LTX_TOOLS_LTX_ALLGATHER_OVERLAP_TABLE_H_
#define LTX_TOOLS_LTX_ALLGATHER_OVERLAP_TABLE_H_

#include <cstdint>
#include <string>

namespace ltx {

// One style's measurements; times are medians over windows, slowest GPU.
struct OverlapRow {
  std::string style;                // OverlapStyleName, with the block budget for sm_budget.
  double gemm_alone_us = 0;         // One GEMM with the GPU to itself.
  double collective_alone_us = 0;   // One AllGather call alone.
  double gemm_beside_us = 0;        // One GEMM while the AllGather runs.
  double collective_beside_us = 0;  // One AllGather call while the GEMM runs.
  double pair_us = 0;               // Wall time of one window of both.
  int gemm_calls = 0;               // GEMMs per window of the pair.
  int collective_calls = 0;         // AllGather calls per window of the pair.
  int64_t wrong = 0;                // Ranks whose output was wrong in the checks.
};

// What the derived columns need besides the row.
struct OverlapShape {
  int64_t output_bytes = 0;  // AllGather output per rank.
  int world = 1;
  double gemm_flops = 0;  // Of one GEMM.
};

// 100 * (beside / alone - 1): how much longer a GEMM takes beside the collective.
double SlowdownPercent(double alone_us, double beside_us);
// 100 * alone / beside: the share of its bandwidth alone the collective keeps beside the GEMM.
double KeptPercent(double alone_us, double beside_us);
// AllGather bus bandwidth in GB/s: output bytes / time * (world - 1) / world.
double AllGatherBusBandwidth(int64_t output_bytes, int world, double us);
// 100 * pair / (gemm_calls * gemm alone + collective_calls * collective alone): 100 when the
// pair takes as long as running both one after the other, lower when they overlap.
double PairOverSumPercent(const OverlapRow& row);

// The column titles (lines starting with '#').
std::string OverlapColumnHeader();

// One row of the table, ending in a newline.
std::string FormatOverlapRow(const OverlapRow& row, const OverlapShape& shape);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLGATHER_OVERLAP_TABLE_H_
