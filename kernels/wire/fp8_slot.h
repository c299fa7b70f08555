// Where a rank's FP8 rows (kernels/wire/fp8_rows.h) lie while an AllGather with FP8 on the wire
// moves them: in the rank's own slot of its own output (its `tokens` rows of `hidden` 16-bit
// elements of one batch slice, tokens * hidden * 2 bytes), row i's `hidden` codes at byte
// i * hidden, then the rows' fp32 scales from the first multiple of 4 after the codes, 4 bytes
// each, little-endian (the slot itself may start on any even address). They fit for hidden >= 8
// (Fp8SlotFits). One definition for the kernels and the tests.
#ifndef KERNELS_WIRE_FP8_SLOT_H_
#define KERNELS_WIRE_FP8_SLOT_H_

#include <cstdint>

#include "kernels/wire/host_device.h"

namespace ltx {

// The least row length the slot carries.
inline constexpr int64_t kFp8MinHidden = 8;

// Byte offset, from the slot's start, of the codes of row `row` (0-based, of `hidden` elements):
// one byte per element, the rows one after another.
LTX_HOST_DEVICE inline int64_t Fp8CodesOffset(int64_t hidden, int64_t row) { return row * hidden; }

// Byte offset, from the slot's start, of the scales of a slot of `tokens` rows of `hidden`
// elements: the first multiple of 4 from the slot's start at or after the last row's codes (the
// slot may start on any even address, so the kernels move each scale byte by byte).
LTX_HOST_DEVICE inline int64_t Fp8ScalesOffset(int64_t tokens, int64_t hidden) {
  return (tokens * hidden + 3) / 4 * 4;
}

// Byte offset, from the slot's start, of row `row`'s 4-byte scale in a slot of `tokens` rows.
LTX_HOST_DEVICE inline int64_t Fp8ScaleOffset(int64_t tokens, int64_t hidden, int64_t row) {
  return Fp8ScalesOffset(tokens, hidden) + 4 * row;
}

// Whether `tokens` rows of codes and scales fit the slot of `tokens` rows of `hidden` 16-bit
// elements.
LTX_HOST_DEVICE inline bool Fp8SlotFits(int64_t tokens, int64_t hidden) {
  return Fp8ScaleOffset(tokens, hidden, tokens) <= tokens * hidden * 2;
}

// Byte offset of the slot of the rank whose rows start at token `prefix`, in batch slice `slice`
// of an output of `total_tokens` rows of `row_bytes` bytes per slice.
LTX_HOST_DEVICE inline int64_t Fp8SlotOffset(int64_t total_tokens, int64_t prefix,
                                             int64_t row_bytes, int64_t slice) {
  return (slice * total_tokens + prefix) * row_bytes;
}

// The rows a rank decodes from its peers' slots: batch * counts[peer] rows of every peer, in peer
// order, the rank's own left out (`counts` has `world` entries). The decoder's warps share
// them as one range.
LTX_HOST_DEVICE inline int64_t Fp8PeerRows(const int64_t* counts, int world, int rank,
                                           int64_t batch) {
  int64_t rows = 0;
  for (int peer = 0; peer < world; ++peer) {
    if (peer != rank) rows += batch * counts[peer];
  }
  return rows;
}

// Row `index` (0 <= index < Fp8PeerRows) of that range: its peer, and its place among that
// peer's batch * counts[peer] rows (slice row / counts[peer], token row % counts[peer]).
struct Fp8PeerRow {
  int peer = 0;
  int64_t row = 0;
};
LTX_HOST_DEVICE inline Fp8PeerRow Fp8PeerRowOf(const int64_t* counts, int world, int rank,
                                              int64_t batch, int64_t index) {
  Fp8PeerRow found;
  found.row = index;
  for (int peer = 0; peer < world; ++peer) {
    if (peer == rank) continue;
    found.peer = peer;
    const int64_t rows = batch * counts[peer];
    if (found.row < rows) break;
    found.row -= rows;
  }
  return found;
}

}  // namespace ltx

#endif  // KERNELS_WIRE_FP8_SLOT_H_
