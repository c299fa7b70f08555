// AllGatherShape: the shape of one AllGather, the same on every rank.
#ifndef LTX_ALLGATHER_SHAPE_H_
#define LTX_ALLGATHER_SHAPE_H_

#include <cstdint>

#include "absl/types/span.h"
#include "ltx/data_type.h"
#include "ltx/wire_format.h"

namespace ltx {

// Rank r's input is [batch, token_counts[r], hidden] and every output is
// [batch, sum(token_counts), hidden], all contiguous, elements of `dtype`; rank r's tokens sit at
// token offset token_counts[0] + ... + token_counts[r-1] of each batch slice.
struct AllGatherShape {
  DataType dtype = DataType::kBFloat16;
  int64_t batch = 1;   // >= 1
  int64_t hidden = 0;  // Elements per token, >= 1.
  // One entry per rank, each >= 0; zeros allowed. The span points at the caller's memory, which
  // must stay valid until the call returns (it is read during the call only, also by
  // per-rank calls that are being captured into a CUDA graph).
  absl::Span<const int64_t> token_counts;
  // How many tensors of this shape the call gathers in one op (Q, K and V: 3), 1..kMaxTensors
  // (ltx/rank_buffers.h): each with its own input and output on every rank (RankBuffers), one
  // entry and one exit for all. Every rank passes the same count.
  int32_t tensors = 1;
  // How the rows travel (every rank passes the same). kFp8E4M3: each peer's rows arrive as the
  // decoded fp8 values of kernels/wire/fp8_rows.h (the same bits on every rank and run), a
  // rank's own rows exactly; bf16 and fp16 only, hidden >= 8, one tensor, not in place, on the
  // direct kernel (InvalidArgument or Unimplemented otherwise, before any launch). The sender's
  // codes travel through its own slot of its own output, which its peers read.
  WireFormat wire = WireFormat::kNative;
};

}  // namespace ltx

#endif  // LTX_ALLGATHER_SHAPE_H_
