// The copy plan of the Ulysses all-to-all: which bytes of a rank's input go where in which
// rank's output, how the work is cut among thread blocks, and how wide the stores may be.
//
// Plain integer arithmetic, compiled for host and device alike, so the CPU tests check the very
// functions the kernel runs (every output byte stored exactly once, from the right input byte).
//
// Model. What rank r sends to rank t is a "piece": `rows` runs of `run_bytes` contiguous bytes,
// one per (batch, token) pair, each taken from r's input and stored into t's output at offsets
// of the form slice * slice_stride + base + token * row_stride (slice = row / rows_per_slice,
// token = row % rows_per_slice). With S total tokens, token row T = heads * head_bytes, and rank
// h's head group of G_h = head_counts[h] * head_bytes bytes at byte offset O_h of a token row
// (O_h = G_0 + ... + G_{h-1}; the even split is G_h = T / P, O_h = h * G_h):
//   sequence -> heads: rows_per_slice = count_r, run = G_t;
//     input  offset b * count_r * T + O_t + i * T
//     output offset b * S * G_t + prefix_r * G_t + i * G_t
//   heads -> sequence: rows_per_slice = count_t, run = G_r;
//     input  offset b * S * G_r + prefix_t * G_r + i * G_r
//     output offset b * count_t * T + O_r + i * T
// Work is cut into lanes as in the AllGather plan (kernels/protocols/copy_plan.h: LaneCount,
// LaneTarget, LanePart): the lanes of a target share its piece's rows, warp by warp (RowSweep).
// An op of several tensors of one shape (Q, K and V) has, for each (rank, target) pair, one
// piece per tensor, alike but for the buffers: its lanes sweep them as one piece of
// tensors * rows rows (TensorRowOf), each row copied from its tensor's input into its tensor's
// output (TensorAddresses, kernels/protocols/copy_plan.h).
#ifndef KERNELS_ALLTOALL_ALLTOALL_PLAN_H_
#define KERNELS_ALLTOALL_ALLTOALL_PLAN_H_

#include <cstdint>

#include "kernels/protocols/copy_plan.h"
#include "kernels/wire/host_device.h"
#include "kernels/wire/signal_layout.h"

namespace ltx {

// Rows one warp copies at once: their loads are in flight together, which short rows (a few
// hundred bytes per head group) need to keep NVLink busy. Warp w of a block with `warps` warps
// copies rows begin + w, begin + w + warps, ... of its lane, kRowsInFlight at a time.
inline constexpr int kRowsInFlight = 4;

// The byte layout of one all-to-all, the same on every rank.
struct AllToAllGeometry {
  int32_t heads_to_seq = 0;  // 0: sequence -> heads; 1: heads -> sequence.
  int32_t world_size = 0;
  int64_t batch = 0;
  int64_t total_tokens = 0;
  int64_t token_bytes = 0;  // heads * head_dim * element size.
  int64_t token_counts[kMaxWorldSize] = {};
  int64_t prefix_tokens[kMaxWorldSize] = {};
  // Rank h's head group in a token row: head_counts[h] * head_dim * element size bytes at byte
  // offset group_offsets[h] (the sum of the groups before it). Derived on the host for every
  // split, the even one included.
  int64_t group_bytes[kMaxWorldSize] = {};
  int64_t group_offsets[kMaxWorldSize] = {};
};

// Where a piece's rows lie in one buffer: row `row` starts at
// (row / rows_per_slice) * slice_stride + base + (row % rows_per_slice) * row_stride.
struct PieceSide {
  int64_t slice_stride = 0;
  int64_t base = 0;
  int64_t row_stride = 0;
};

// What one rank stores into one target's output.
struct Piece {
  int64_t rows_per_slice = 0;
  int64_t rows = 0;  // batch * rows_per_slice
  int64_t run_bytes = 0;
  PieceSide src;  // In the sender's input.
  PieceSide dst;  // In the target's output.
};

// The piece rank `rank` stores into rank `target`'s output.
LTX_HOST_DEVICE inline Piece PieceOf(const AllToAllGeometry& g, int rank, int target) {
  // The rank on the sequence-sharded side, whose tokens the piece carries, and the rank whose
  // head group it carries.
  const int seq_rank = g.heads_to_seq ? target : rank;
  const int head_rank = g.heads_to_seq ? rank : target;
  const int64_t count = g.token_counts[seq_rank];
  const int64_t group = g.group_bytes[head_rank];
  PieceSide sequence_side;  // [batch, count, heads, head_dim]
  sequence_side.slice_stride = count * g.token_bytes;
  sequence_side.base = g.group_offsets[head_rank];
  sequence_side.row_stride = g.token_bytes;
  PieceSide heads_side;  // [batch, total_tokens, head_counts[head_rank], head_dim]
  heads_side.slice_stride = g.total_tokens * group;
  heads_side.base = g.prefix_tokens[seq_rank] * group;
  heads_side.row_stride = group;
  Piece piece;
  piece.rows_per_slice = count;
  piece.rows = group == 0 ? 0 : g.batch * count;  // A rank without heads gets nothing.
  piece.run_bytes = group;
  piece.src = g.heads_to_seq ? heads_side : sequence_side;
  piece.dst = g.heads_to_seq ? sequence_side : heads_side;
  return piece;
}

// Offset of row `row` of a piece in one of its buffers.
LTX_HOST_DEVICE inline int64_t RowOffset(const PieceSide& side, int64_t rows_per_slice,
                                         int64_t row) {
  const int64_t slice = row / rows_per_slice;
  return slice * side.slice_stride + side.base + (row - slice * rows_per_slice) * side.row_stride;
}

// Row `row` of the sweep of an op's pieces (tensors * piece.rows rows, piece.rows > 0): row
// `row` % piece.rows of tensor `row` / piece.rows's piece.
struct TensorRow {
  int tensor = 0;
  int64_t row = 0;
};
LTX_HOST_DEVICE inline TensorRow TensorRowOf(const Piece& piece, int64_t row) {
  if (row < piece.rows) return TensorRow{0, row};  // One tensor: no division.
  const int64_t tensor = row / piece.rows;
  return TensorRow{static_cast<int>(tensor), row - tensor * piece.rows};
}

// The widest store (a power of two, at most kVectorBytes) that every row of `piece` allows
// when the input starts at address `input` and the output at `output`: every run start in both
// buffers and the run length are multiples of it.
LTX_HOST_DEVICE inline int PieceWidth(const Piece& piece, uint64_t input, uint64_t output) {
  const uint64_t bits =
      (input + static_cast<uint64_t>(piece.src.base)) |
      (output + static_cast<uint64_t>(piece.dst.base)) |
      static_cast<uint64_t>(piece.src.slice_stride) | static_cast<uint64_t>(piece.src.row_stride) |
      static_cast<uint64_t>(piece.dst.slice_stride) | static_cast<uint64_t>(piece.dst.row_stride) |
      static_cast<uint64_t>(piece.run_bytes);
  int width = kVectorBytes;
  while (width > 1 && (bits & static_cast<uint64_t>(width - 1)) != 0) width >>= 1;
  return width;
}

// The widest store that every row of every tensor's piece allows (PieceWidth of each).
LTX_HOST_DEVICE inline int PiecesWidth(const Piece& piece, const TensorAddresses& addresses) {
  int width = kVectorBytes;
  LTX_UNROLL
  for (int tensor = 0; tensor < kMaxOpTensors; ++tensor) {
    if (tensor >= addresses.tensors) break;
    const int own = PieceWidth(piece, addresses.inputs[tensor], addresses.outputs[tensor]);
    if (own < width) width = own;
  }
  return width;
}

// The rows of a piece that one block copies when `parts` blocks share the piece: warp w (of
// `warps`) of part p copies rows p * warps + w + i * parts * warps, i = 0, 1, ..., so that the
// parts sweep the piece together, front to back (as the AllGather's lanes sweep their tiles,
// kernels/protocols/copy_plan.h: kLaneTileBytes).
struct RowSweep {
  int64_t rows = 0;  // The piece's rows.
  int part = 0;
  int parts = 1;
};

// The first row warp `warp` of a block of `warps` warps copies.
LTX_HOST_DEVICE inline int64_t SweepFirstRow(const RowSweep& sweep, int warps, int warp) {
  return int64_t{sweep.part} * warps + warp;
}

// The distance from one row of a warp to its next.
LTX_HOST_DEVICE inline int64_t SweepStride(const RowSweep& sweep, int warps) {
  return int64_t{sweep.parts} * warps;
}

// The rows of its target's pieces of an op of `tensors` tensors that lane `lane` (of `lanes`)
// copies (rows of tensor 1 and on: TensorRowOf).
LTX_HOST_DEVICE inline RowSweep LaneRows(const Piece& piece, int lane, int lanes, int world,
                                         int tensors) {
  return RowSweep{tensors * piece.rows, LanePart(lane, world), LanePartCount(lane, lanes, world)};
}

// Bytes rank `rank` stores into the largest of its targets' outputs: what the automatic block
// count is sized by.
LTX_HOST_DEVICE inline int64_t LargestPieceBytes(const AllToAllGeometry& g, int rank) {
  int64_t largest = 0;
  for (int target = 0; target < g.world_size; ++target) {
    const Piece piece = PieceOf(g, rank, target);
    const int64_t bytes = piece.rows * piece.run_bytes;
    if (bytes > largest) largest = bytes;
  }
  return largest;
}

// The rows rank `rank` receives from its peers in an op of `tensors` tensors: every peer's piece
// (PieceOf(g, peer, rank)), tensors * rows each, in peer order, the rank's own left out. The
// FP8 wire's decoder shares them among its warps as one range.
LTX_HOST_DEVICE inline int64_t ReceivedRows(const AllToAllGeometry& g, int rank, int tensors) {
  int64_t rows = 0;
  for (int peer = 0; peer < g.world_size; ++peer) {
    if (peer != rank) rows += tensors * PieceOf(g, peer, rank).rows;
  }
  return rows;
}

// Row `index` (0 <= index < ReceivedRows) of that range: the peer it comes from, its piece, and
// its place in the piece's tensors * rows rows (TensorRowOf).
struct ReceivedRow {
  int peer = 0;
  Piece piece;
  int64_t row = 0;
};
LTX_HOST_DEVICE inline ReceivedRow ReceivedRowOf(const AllToAllGeometry& g, int rank, int tensors,
                                                 int64_t index) {
  ReceivedRow received;
  received.row = index;
  for (int peer = 0; peer < g.world_size; ++peer) {
    if (peer == rank) continue;
    received.peer = peer;
    received.piece = PieceOf(g, peer, rank);
    const int64_t rows = tensors * received.piece.rows;
    if (received.row < rows) break;
    received.row -= rows;
  }
  return received;
}

}  // namespace ltx

#endif  // KERNELS_ALLTOALL_ALLTOALL_PLAN_H_
