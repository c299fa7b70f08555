// The output of the benchmark: one row per size, printed in the layout of nccl-tests (size,
// count, type, redop, root, then time, algbw, busbw and #wrong per side) with ltx's host cost
// and its ratio to the launch floor added, then NCCL three ways (plain, window, ce), the best of
// them and ltx's speedup over it; with several tensors per op, also as many single-tensor calls.
#ifndef TOOLS_BENCH_BENCH_TABLE_H_
#define TOOLS_BENCH_BENCH_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ltx/data_type.h"
#include "tools/bench/launch_floor.h"
#include "tools/bench/nccl_best.h"
#include "tools/bench/tensor_calls.h"

namespace ltx {

// One row of the sweep. Times are medians over windows of device time per call.
struct BenchRow {
  int64_t size_bytes = 0;      // Total output bytes.
  int64_t per_rank_bytes = 0;  // Largest rank's input bytes.
  int64_t count = 0;           // Output elements.
  double ltx_us = 0;
  double ltx_algbw = 0;  // GB/s: size / time.
  double ltx_busbw = 0;  // GB/s: algbw * (n - 1) / n.
  double host_us = 0;    // Host time of one call (launch cost), median.
  double vs_floor = 0;   // ltx_us over the launch floor of the row's call style.
  int64_t wrong = 0;     // 1 where some rank's output was wrong in a check, else 0.
  NcclTimes nccl;        // Per NcclMode; none measured without NCCL.
  int tensors = 1;       // Tensors of ltx's op (ltx_us), each of size_bytes.
  double calls_us = -1;  // With tensors > 1: as many single-tensor calls.
};

// The row's one op of its tensors against as many calls.
TensorCalls TensorCallsOf(const BenchRow& row);

// "8K", "1M", "2G" for whole multiples of 1024, else the plain number.
std::string FormatBytes(int64_t bytes);

// nccl-tests' bus bandwidth of an AllGather or an all-to-all over `world` ranks from its
// algorithm bandwidth: algbw * (world - 1) / world (0 for one rank, as nccl-tests prints it, and
// for no rank). Thread-safe (pure).
double BusBandwidth(double algbw, int world);

// The header line of the launch floor, e.g. "# launch floor: empty kernel 132 x 512, ...".
std::string FloorLine(const LaunchFloor& floor);

// The column titles and their units (lines starting with '#'), with TensorCallsTitles(tensors)
// and what they mean for more than one tensor.
std::string ColumnHeader(int tensors);

// One row of the table, ending in a newline; an NCCL column is "n/a" where its mode did not run
// (the header says why) and "-" without NCCL; TensorCallsCells for more than one tensor.
std::string FormatRow(const BenchRow& row, DataType dtype);

}  // namespace ltx

#endif  // TOOLS_BENCH_BENCH_TABLE_H_
