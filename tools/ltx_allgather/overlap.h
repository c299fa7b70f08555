// The overlap run of the ltx_allgather tool: on every GPU a cuBLAS bf16 GEMM on one stream and
// the AllGather on another, started together, for each AllGather style (SM kernels, SM kernels
// under a block budget, copy engines, NCCL), against each alone: what the collective costs the
// GEMM and what the GEMM costs the collective.
#ifndef LTX_TOOLS_LTX_ALLGATHER_OVERLAP_H_
#define LTX_TOOLS_LTX_ALLGATHER_OVERLAP_H_

#include <vector>

#include "absl/status/statusor.h"
#include "tools/ltx_allgather/overlap_config.h"
#include "tools/ltx_allgather/overlap_table.h"

namespace ltx {

// Runs every style of `config`: validates it (InvalidArgument before touching a GPU), loads
// cuBLAS (NotFound listing the places tried), prepares the GEMM and the AllGather buffers, then
// per style measures the GEMM alone, the AllGather alone and both together, checking the
// AllGather's output byte-exact before and after the pair when config.check. Prints the header
// and each row to stdout as it completes, progress to stderr. The NCCL style is skipped with a
// note when libnccl does not load (or config.nccl_path is empty). Returns the rows, or the
// first error that stopped it.
absl::StatusOr<std::vector<OverlapRow>> RunOverlap(const OverlapConfig& config);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLGATHER_OVERLAP_H_
