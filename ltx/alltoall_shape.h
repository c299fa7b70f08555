// AllToAllShape: the shape of one Ulysses all-to-all (sequence <-> heads), the same on every
// rank.
#ifndef LTX_ALLTOALL_SHAPE_H_
#define LTX_ALLTOALL_SHAPE_H_

#include <cstdint>

#include "absl/types/span.h"
#include "ltx/data_type.h"
#include "ltx/wire_format.h"

namespace ltx {

// Which way an all-to-all re-shards. With P ranks, S = sum(token_counts), H = heads,
// H_r = head_counts[r] (H / P for the even split), heads_prefix_r = H_0 + ... + H_{r-1} and
// prefix_r = token_counts[0] + ... + token_counts[r-1]:
enum class AllToAllDirection : int32_t {
  // Rank r's input is [batch, token_counts[r], H, head_dim]; every rank r's output is
  // [batch, S, H_r, head_dim]: heads [heads_prefix_r, heads_prefix_r + H_r) of the whole
  // sequence, rank s's tokens at token offset prefix_s.
  kSeqToHeads = 0,
  // The exact inverse: rank r's input is [batch, S, H_r, head_dim], its output
  // [batch, token_counts[r], H, head_dim].
  kHeadsToSeq = 1,
};

// All tensors are contiguous, elements of `dtype`, at any alignment (16-byte aligned rows and
// pointers take the vector path).
struct AllToAllShape {
  DataType dtype = DataType::kBFloat16;
  int64_t batch = 1;     // >= 1
  int64_t heads = 0;     // >= 1; divisible by the world size unless head_counts is given.
  int64_t head_dim = 0;  // Elements per head, >= 1.
  // One entry per rank, each >= 0; zeros allowed. The span points at the caller's memory, which
  // must stay valid until the call returns (it is read during the call only).
  absl::Span<const int64_t> token_counts;
  AllToAllDirection direction = AllToAllDirection::kSeqToHeads;
  // The heads each rank holds on the heads-sharded side: empty for the even split (heads / P
  // each), or one entry per rank, each >= 0 (a rank may hold none: its heads-side tensor is
  // empty), summing to heads. Every rank passes the same split. Read during the call only.
  absl::Span<const int64_t> head_counts;
  // How many tensors of this shape the call moves in one op (Q, K and V: 3), 1..kMaxTensors
  // (ltx/rank_buffers.h): each with its own input and output on every rank (RankBuffers), one
  // entry and one exit for all. Every rank passes the same count.
  int32_t tensors = 1;
  // How the head vectors travel (every rank passes the same). kFp8E4M3: each head vector a rank
  // receives from a peer arrives as the decoded fp8 values of kernels/wire/fp8_rows.h (one
  // scale per head vector; the same bits on every rank and run), its own piece exactly; bf16
  // and fp16 only, head_dim >= 8, at most 256 heads in any rank's group, on the direct kernel
  // (InvalidArgument or Unimplemented otherwise, before any launch). The codes travel inside
  // the receiver's own output, where it decodes them in place after the exchange.
  WireFormat wire = WireFormat::kNative;
};

}  // namespace ltx

#endif  // LTX_ALLTOALL_SHAPE_H_
