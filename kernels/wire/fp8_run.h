// Where an FP8 run lies while a collective with FP8 on the wire moves it into a peer's output:
// inside the run's own destination bytes, so that the receiver decodes it in place.
//
// A run is `elements` (N) 16-bit elements that its receiver keeps contiguous (an all-to-all
// piece's row: a head group of one token), cut into vectors of `vector_elements` (d) elements,
// each with its own scale (kernels/wire/fp8_rows.h: a head vector's codes and fp32 scale). The
// sender stores the run's N e4m3 codes at bytes [N, 2N) of the run's destination (2N bytes of
// 16-bit elements) and its V = N / d scales, 4 bytes each, little-endian, at [N - 4V, N); that
// fits for d >= 4 (Fp8RunFits). The receiver, one warp per run, first reads every scale, then
// decodes the run in chunks of kFp8DecodeChunk elements in increasing order: reading a chunk's
// codes, then writing its decoded elements. Writing chunk c (bytes [2cC, 2(c+1)C)) overwrites
// only codes already read: later chunks' codes start at N + (c+1)C >= 2(c+1)C whenever chunk c
// is not the last (Fp8RunChunkSafe checks it for the tests), whatever the chunk size C. One definition for the kernels
// and the tests.
#ifndef KERNELS_WIRE_FP8_RUN_H_
#define KERNELS_WIRE_FP8_RUN_H_

#include <cstdint>

#include "kernels/wire/host_device.h"

namespace ltx {

// The least vector length a run carries (4 would fit; 8 keeps codes in whole 4-byte units).
inline constexpr int64_t kFp8MinVectorElements = 8;
// The most vectors one run has: its receiver's warp keeps every scale in shared memory.
inline constexpr int64_t kFp8MaxRunVectors = 256;
// Elements a warp decodes at once: 32 lanes of 8 units of 4 (every code of a chunk is read
// before any of its values is written; the invariant holds for any chunk size).
inline constexpr int64_t kFp8DecodeChunk = 1024;

// Byte offset, in a run's destination, of its scales.
LTX_HOST_DEVICE inline int64_t Fp8RunScalesOffset(int64_t elements, int64_t vector_elements) {
  return elements - 4 * (elements / vector_elements);
}

// Byte offset, in a run's destination, of its codes.
LTX_HOST_DEVICE inline int64_t Fp8RunCodesOffset(int64_t elements) { return elements; }

// Whether a run of `elements` in vectors of `vector_elements` carries its codes and scales in
// its own destination: whole vectors, and no more than kFp8MaxRunVectors of them, of at least
// kFp8MinVectorElements elements.
LTX_HOST_DEVICE inline bool Fp8RunFits(int64_t elements, int64_t vector_elements) {
  return vector_elements >= kFp8MinVectorElements && elements >= vector_elements &&
         elements % vector_elements == 0 && elements / vector_elements <= kFp8MaxRunVectors;
}

// Whether writing the decoded elements of chunk `chunk` (chunks of kFp8DecodeChunk elements from
// the run's start; the last may be shorter) leaves every code of the later chunks unread-over:
// the bytes it writes end at or before the first code of chunk + 1.
LTX_HOST_DEVICE inline bool Fp8RunChunkSafe(int64_t elements, int64_t chunk) {
  const int64_t end = (chunk + 1) * kFp8DecodeChunk;
  if (end >= elements) return true;  // The last chunk: no code after it.
  return 2 * end <= Fp8RunCodesOffset(elements) + end;
}

}  // namespace ltx

#endif  // KERNELS_WIRE_FP8_RUN_H_
