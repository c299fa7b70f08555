// The one-trip packing of the Ulysses all-to-all: how the piece one rank sends one peer
// (kernels/alltoall_plan.h) is cut into the 8-byte payloads of one-trip lines
// (kernels/one_trip_layout.h), and where each payload byte comes from and lands.
//
// A piece's bytes are numbered flat, row by row: flat byte `row * run_bytes + within` is byte
// `within` of row `row`. Payload k carries flat bytes [8k, 8k + 8) (fewer at the end), which
// may span rows when the run is not a multiple of 8 bytes; each part inside one row is one
// contiguous span of the sender's input and of the receiver's output. Plain integer arithmetic
// for host and device, so the CPU tests simulate exactly what the kernel does.
#ifndef LTX_KERNELS_ALLTOALL_ONE_TRIP_PLAN_H_
#define LTX_KERNELS_ALLTOALL_ONE_TRIP_PLAN_H_

#include <cstdint>

#include "kernels/alltoall_plan.h"
#include "kernels/copy_plan.h"
#include "kernels/host_device.h"
#include "kernels/one_trip_layout.h"

namespace ltx {

// Bytes of a piece.
LTX_HOST_DEVICE inline int64_t PieceBytes(const Piece& piece) {
  return piece.rows * piece.run_bytes;
}

// The flat bytes of a piece that payload `index` carries.
LTX_HOST_DEVICE inline ByteRange PayloadRange(const Piece& piece, int64_t index) {
  const int64_t bytes = PieceBytes(piece);
  ByteRange range;
  range.begin = index * kOneTripPayloadBytes;
  range.end =
      bytes - range.begin < kOneTripPayloadBytes ? bytes : range.begin + kOneTripPayloadBytes;
  return range;
}

// A contiguous part of a payload inside one buffer: `bytes` bytes at `offset`.
struct PieceSpan {
  int64_t offset = 0;
  int64_t bytes = 0;
};

// The span of `side` (the piece's src or dst) that holds flat bytes [flat, end) of `piece`, or
// the part of them up to the end of flat byte `flat`'s row. flat < end <= PieceBytes(piece).
LTX_HOST_DEVICE inline PieceSpan PieceSpanAt(const Piece& piece, const PieceSide& side,
                                             int64_t flat, int64_t end) {
  const int64_t row = flat / piece.run_bytes;
  const int64_t within = flat - row * piece.run_bytes;
  const int64_t room = piece.run_bytes - within;
  PieceSpan span;
  span.offset = RowOffset(side, piece.rows_per_slice, row) + within;
  span.bytes = end - flat < room ? end - flat : room;
  return span;
}

// The rows of a rank's own piece (input to its own output) that block `block` of `blocks`
// copies on the one-trip path.
LTX_HOST_DEVICE inline ByteRange OwnPieceRows(const Piece& piece, int block, int blocks) {
  return EvenPart(piece.rows, block, blocks);
}

}  // namespace ltx

#endif  // LTX_KERNELS_ALLTOALL_ONE_TRIP_PLAN_H_
