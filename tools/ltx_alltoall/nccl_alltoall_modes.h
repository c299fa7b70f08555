// NCCL's all-to-all in ltx_alltoall's benchmark, three ways on one shape: plain (grouped
// ncclSend/ncclRecv plus the permute, on the harness's buffers); window (n/a: symmetric windows
// serve NCCL's collective kernels, not its point-to-point calls); ce (ncclAlltoAll of equal
// pieces between buffers of symmetric windows on communicators with a zero-CTA policy, plus the
// permute). Each whole op is timed from one thread and its output checked.
#ifndef LTX_TOOLS_LTX_ALLTOALL_NCCL_ALLTOALL_MODES_H_
#define LTX_TOOLS_LTX_ALLTOALL_NCCL_ALLTOALL_MODES_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/bench/nccl_best.h"
#include "tools/bench/nccl_side.h"
#include "tools/testing/alltoall_harness.h"

namespace ltx {

// Why the window mode does not apply to the all-to-all.
inline constexpr char kAllToAllNoWindows[] =
    "symmetric windows serve NCCL's collective kernels (AllGather, AllReduce, ReduceScatter), "
    "not ncclSend/ncclRecv";

// Buffers per rank in each mode's windows, in this order, each of the harness's capacity.
inline constexpr int kAllToAllWindowInput = 0;
inline constexpr int kAllToAllWindowStaging = 1;
inline constexpr int kAllToAllWindowOutput = 2;

// What NCCL measured on one shape.
struct NcclAllToAllTimes {
  double transfer_us = -1;  // Plain: the send/recv alone.
  double permute_us = -1;   // Plain: the permute alone.
  NcclTimes modes;          // Per mode, the whole op (transfer and permute).
  int wrong = 0;            // Modes whose output was wrong.
};

// Runs `step` as the benchmark's timing plan says, from one thread; the median device time per
// step (us).
using OneThreadTimer =
    std::function<absl::StatusOr<double>(const std::function<absl::Status()>& step)>;

// Times every mode that `nccl` runs on the harness's current case (batch 1) on `devices`;
// `bytes_per_rank` gives busbw. A mode that fails on this shape records why (and the sweep goes
// on); errors of the harness itself are returned.
absl::StatusOr<NcclAllToAllTimes> TimeNcclAllToAll(const NcclSide& nccl, AllToAllHarness& harness,
                                                   const std::vector<int>& devices,
                                                   double bytes_per_rank,
                                                   const OneThreadTimer& timer);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLTOALL_NCCL_ALLTOALL_MODES_H_
