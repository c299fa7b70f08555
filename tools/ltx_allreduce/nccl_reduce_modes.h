// NCCL's reductions in ltx_allreduce's benchmark, three ways on one size: plain (ncclAllReduce
// or ncclReduceScatter on the harness's cudaMalloc buffers), window (the same between buffers of
// symmetric windows, the harness's inputs copied in first), ce (n/a: NCCL's copy-engine
// collectives move data, they do not reduce). Each is grouped from one thread and timed in the
// benchmark's call style. NCCL's outputs are not checked: its reduction order is its own, so its
// bits need not match ltx's rank-order reference.
#ifndef LTX_TOOLS_LTX_ALLREDUCE_NCCL_REDUCE_MODES_H_
#define LTX_TOOLS_LTX_ALLREDUCE_NCCL_REDUCE_MODES_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/wire/collective.h"
#include "ltx/data_type.h"
#include "ltx/rank_buffers.h"
#include "ltx/reduction.h"
#include "tools/bench/bench_style.h"
#include "tools/bench/bench_timing.h"
#include "tools/bench/nccl_best.h"
#include "tools/bench/nccl_side.h"
#include "tools/bench/timing_plan.h"

namespace ltx {

// Why the ce mode does not apply to the reductions.
inline constexpr char kNoCopyEngineReductions[] = "NCCL has no copy-engine reductions";

// Opens the modes the reductions take on `nccl` (which may lack a clique: then nothing): window
// with an input and an output buffer of `capacity` bytes per rank, not ce; where the library
// lacks ncclAllReduce or ncclReduceScatter, plain and window say so instead.
void OpenNcclReduceModes(const std::vector<int>& devices, int64_t capacity, NcclSide* nccl);

// One reduction as NCCL runs it: every rank's input holds `input_elements` of `dtype`; the
// AllReduce reduces them all, the ReduceScatter gives rank r the block r of input_elements /
// world (equal blocks).
struct NcclReduceCall {
  Collective collective = Collective::kAllReduce;
  DataType dtype = DataType::kBFloat16;
  Reduction reduction = Reduction::kSum;
  int64_t input_elements = 0;
};

// Times `call` in every mode that `nccl` runs, on `ranks` (the harness's streams): plain on
// `buffers` (each rank's input and output), window on the windows' buffers. `style` and `plan`
// as ltx's. A mode that fails records why (and the sweep goes on); a failed copy into the
// windows is returned.
absl::StatusOr<NcclTimes> TimeNcclReduce(const NcclSide& nccl, const NcclReduceCall& call,
                                         const std::vector<RankBuffers>& buffers, BenchStyle style,
                                         const TimingPlan& plan, const TimedRanks& ranks);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLREDUCE_NCCL_REDUCE_MODES_H_
