// Text of the benchmark's rows.
#include "tools/bench/bench_table.h"

#include "absl/strings/str_format.h"
#include "tools/bench/empty_kernel.h"
#include "tools/bench/nccl_best.h"

namespace ltx {

double BusBandwidth(double algbw, int world) {
  return world > 0 ? algbw * (world - 1) / world : 0;
}

std::string FormatBytes(int64_t bytes) {
  constexpr int64_t kKiB = int64_t{1} << 10;
  constexpr int64_t kMiB = int64_t{1} << 20;
  constexpr int64_t kGiB = int64_t{1} << 30;
  if (bytes >= kGiB && bytes % kGiB == 0) return absl::StrFormat("%dG", bytes / kGiB);
  if (bytes >= kMiB && bytes % kMiB == 0) return absl::StrFormat("%dM", bytes / kMiB);
  if (bytes >= kKiB && bytes % kKiB == 0) return absl::StrFormat("%dK", bytes / kKiB);
  return absl::StrFormat("%d", bytes);
}

std::string FloorLine(const LaunchFloor& floor) {
  return absl::StrFormat(
      "# launch floor: empty kernel %d x %d on every GPU at once: graph replay %.2f us, eager "
      "%.2f us per launch (host %.2f us); xfloor = ltx time / the floor of its call style\n",
      floor.blocks, kEmptyKernelThreads, floor.graph_us, floor.eager_us, floor.eager_host_us);
}

TensorCalls TensorCallsOf(const BenchRow& row) {
  return TensorCalls{row.tensors, row.ltx_us, row.calls_us};
}

std::string ColumnHeader(int tensors) {
  return absl::StrFormat("#\n# %10s %10s %12s %9s %6s %5s | %9s %8s %8s %6s %7s %6s | %s%s\n",
                         "size", "per-rank", "count", "type", "redop", "root", "ltx(us)", "algbw",
                         "busbw", "#wrong", "host", "xfloor", NcclColumnTitles(),
                         TensorCallsTitles(tensors)) +
         "# (size: output bytes per rank, nccl-tests' size; per-rank: input bytes per rank; "
         "plain, window, ce: NCCL's modes; speedup: best / ltx)\n" +
         TensorCallsNote(tensors);
}

std::string FormatRow(const BenchRow& row, DataType dtype) {
  return absl::StrFormat(
      "  %10s %10s %12d %9s %6s %5d | %9.2f %8.2f %8.2f %6d %7.2f %6.2f | %s%s\n",
      FormatBytes(row.size_bytes), FormatBytes(row.per_rank_bytes), row.count, DataTypeName(dtype),
      "none", -1, row.ltx_us, row.ltx_algbw, row.ltx_busbw, row.wrong, row.host_us, row.vs_floor,
      NcclCells(row.nccl, LtxUsAgainstNccl(TensorCallsOf(row))),
      TensorCallsCells(TensorCallsOf(row)));
}

}  // namespace ltx
