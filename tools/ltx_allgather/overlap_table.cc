// Text of the overlap run's rows and the figures derived from them.
#include "tools/ltx_allgather/overlap_table.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/bench/bench_table.h"

namespace ltx {

double SlowdownPercent(double alone_us, double beside_us) {
  return alone_us > 0 ? 100.0 * (beside_us / alone_us - 1) : 0;
}

double KeptPercent(double alone_us, double beside_us) {
  return beside_us > 0 ? 100.0 * alone_us / beside_us : 0;
}

double AllGatherBusBandwidth(int64_t output_bytes, int world, double us) {
  return us > 0 ? BusBandwidth(output_bytes / (us * 1e3), world) : 0;
}

double PairOverSumPercent(const OverlapRow& row) {
  const double sum =
      row.gemm_calls * row.gemm_alone_us + row.collective_calls * row.collective_alone_us;
  return sum > 0 ? 100.0 * row.pair_us / sum : 0;
}

std::string OverlapColumnHeader() {
  // Each group's title centred over its columns (their widths with the spaces between).
  constexpr struct {
    const char* title;
    int width;
  } kGroups[] = {{"GEMM alone", 21},
                 {"AllGather alone", 20},
                 {"GEMM beside", 20},
                 {"AllGather beside", 19},
                 {"pair of both", 33}};
  std::string groups = absl::StrFormat("#\n# %-14s |", "");
  for (const auto& group : kGroups) {
    const int left = (group.width - static_cast<int>(std::strlen(group.title))) / 2;
    absl::StrAppendFormat(&groups, "%*s%-*s|", left, "", group.width - left, group.title);
  }
  return absl::StrCat(
      groups, "\n",
      absl::StrFormat("# %-14s | %9s %9s | %9s %8s | %9s %8s | %9s %7s | %5s %9s %9s %6s | %6s\n",
                      "style", "ms", "TFLOP/s", "us", "busbw", "ms", "slower%", "us", "kept%",
                      "calls", "wall ms", "sum ms", "wall%", "#wrong"));
}

std::string FormatOverlapRow(const OverlapRow& row, const OverlapShape& shape) {
  const double sum_ms =
      (row.gemm_calls * row.gemm_alone_us + row.collective_calls * row.collective_alone_us) / 1e3;
  return absl::StrFormat(
      "  %-14s | %9.3f %9.1f | %9.1f %8.1f | %9.3f %8.1f | %9.1f %7.1f | %5d %9.2f %9.2f %6.1f | "
      "%6d\n",
      row.style, row.gemm_alone_us / 1e3,
      row.gemm_alone_us > 0 ? shape.gemm_flops / (row.gemm_alone_us * 1e6) : 0,
      row.collective_alone_us,
      AllGatherBusBandwidth(shape.output_bytes, shape.world, row.collective_alone_us),
      row.gemm_beside_us / 1e3, SlowdownPercent(row.gemm_alone_us, row.gemm_beside_us),
      row.collective_beside_us, KeptPercent(row.collective_alone_us, row.collective_beside_us),
      row.collective_calls, row.pair_us / 1e3, sum_ms, PairOverSumPercent(row), row.wrong);
}

}  // namespace ltx
