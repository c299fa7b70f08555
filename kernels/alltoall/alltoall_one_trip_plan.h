// The one-trip packing of the Ulysses all-to-all: how the piece one rank sends one peer
// (kernels/alltoall/alltoall_plan.h) is cut into the 8-byte payloads of one-trip lines
// (kernels/wire/one_trip_layout.h), and where each payload byte comes from and lands. The own piece
// (a rank to itself) is cut the same way: the sender stores it payload by payload.
//
// A piece's bytes are numbered flat, row by row: flat byte `row * run_bytes + within` is byte
// `within` of row `row`. Payload k carries flat bytes [8k, 8k + 8) (fewer at the end), which
// may span rows when the run is not a multiple of 8 bytes; each part inside one row is one
// contiguous span of the sender's input and of the receiver's output. A one-trip piece has at
// most kOneTripMaxShardBytes bytes, so flat positions and rows fit 32 bits: finding where a
// payload lies costs one 32-bit division (and one more per row only for a side whose batch
// slices are apart, when the piece has more than one slice). Plain integer arithmetic for host
// and device, so the CPU tests simulate exactly what the kernel does.
#ifndef KERNELS_ALLTOALL_ALLTOALL_ONE_TRIP_PLAN_H_
#define KERNELS_ALLTOALL_ALLTOALL_ONE_TRIP_PLAN_H_

#include <cstdint>

#include "kernels/alltoall/alltoall_plan.h"
#include "kernels/protocols/copy_plan.h"
#include "kernels/wire/host_device.h"
#include "kernels/wire/one_trip_layout.h"

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

// Offset in `side` (the piece's src or dst) of byte `within` of row `row` of `piece`: what
// RowOffset(side, rows_per_slice, row) + within gives, without its 64-bit division. A row lies
// at base + row * row_stride, plus, per batch slice before it, the room a slice leaves beyond
// its rows (0 on the sequence side, where slices follow each other; the row's slice is only
// divided out on a side with such room, for a piece of more than one slice).
LTX_HOST_DEVICE inline int64_t PieceByteOffset(const Piece& piece, const PieceSide& side,
                                               uint32_t row, uint32_t within) {
  int64_t offset = side.base + static_cast<int64_t>(row) * side.row_stride + within;
  const int64_t room = side.slice_stride - piece.rows_per_slice * side.row_stride;
  if (room != 0 && piece.rows > piece.rows_per_slice) {
    offset += static_cast<int64_t>(row / static_cast<uint32_t>(piece.rows_per_slice)) * room;
  }
  return offset;
}

// Where payload `index` of a non-empty piece lies in `side` when it is whole (8 bytes) and
// inside one row: its offset there (the fast path of the kernel); -1 otherwise.
// PieceBytes(piece) <= kOneTripMaxShardBytes.
LTX_HOST_DEVICE inline int64_t WholePayloadOffset(const Piece& piece, const PieceSide& side,
                                                  int64_t index) {
  const ByteRange range = PayloadRange(piece, index);
  const uint32_t begin = static_cast<uint32_t>(range.begin);
  const uint32_t run = static_cast<uint32_t>(piece.run_bytes);
  const uint32_t row = begin / run;
  const uint32_t within = begin - row * run;
  if (range.end - range.begin != kOneTripPayloadBytes || within + kOneTripPayloadBytes > run) {
    return -1;
  }
  return PieceByteOffset(piece, side, row, within);
}

// Calls visit(offset, first, bytes) for each contiguous part of payload `index` of `piece` in
// `side`, in payload order: payload bytes [first, first + bytes) lie at `offset` of that
// buffer. One part per row the payload touches, stepping from row to row without a division.
// PieceBytes(piece) <= kOneTripMaxShardBytes.
template <typename Visit>
LTX_HOST_DEVICE inline void ForEachPayloadSpan(const Piece& piece, const PieceSide& side,
                                               int64_t index, const Visit& visit) {
  const ByteRange range = PayloadRange(piece, index);
  const uint32_t run = static_cast<uint32_t>(piece.run_bytes);
  const int bytes = static_cast<int>(range.end - range.begin);
  uint32_t row = static_cast<uint32_t>(range.begin) / run;
  uint32_t within = static_cast<uint32_t>(range.begin) - row * run;
  for (int first = 0; first < bytes; ++row, within = 0) {
    const uint32_t room = run - within;
    const int part = static_cast<uint32_t>(bytes - first) < room ? bytes - first
                                                                 : static_cast<int>(room);
    visit(PieceByteOffset(piece, side, row, within), first, part);
    first += part;
  }
}

}  // namespace ltx

#endif  // KERNELS_ALLTOALL_ALLTOALL_ONE_TRIP_PLAN_H_
