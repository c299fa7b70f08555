// ReduceScatterShape: the shape of one ReduceScatter, the same on every rank.
#ifndef LTX_REDUCE_SCATTER_SHAPE_H_
#define LTX_REDUCE_SCATTER_SHAPE_H_

#include <cstdint>

#include "absl/types/span.h"
#include "ltx/data_type.h"
#include "ltx/reduction.h"

namespace ltx {

// The AllGather's layout reversed. With S = sum(token_counts) and
// prefix_r = token_counts[0] + ... + token_counts[r-1]: every rank's input is
// [batch, S, hidden]; rank r's output is [batch, token_counts[r], hidden], the element-wise
// `reduction` over all ranks of the input rows [prefix_r, prefix_r + token_counts[r]) of each
// batch slice, bitwise the same whoever computes it (ltx/reduction.h). All tensors are
// contiguous, elements of `dtype` (bf16, fp16 or fp32), aligned to the element size.
struct ReduceScatterShape {
  DataType dtype = DataType::kBFloat16;
  int64_t batch = 1;   // >= 1
  int64_t hidden = 0;  // Elements per token, >= 1.
  // One entry per rank, each >= 0; zeros allowed. The span points at the caller's memory, which
  // must stay valid until the call returns (it is read during the call only, also by per-rank
  // calls that are being captured into a CUDA graph).
  absl::Span<const int64_t> token_counts;
  Reduction reduction = Reduction::kSum;
};

}  // namespace ltx

#endif  // LTX_REDUCE_SCATTER_SHAPE_H_
