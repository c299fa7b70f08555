// Layout of the one-trip path's staging memory, shared by the host (allocation, clearing, path
// choice) and the one-trip kernel.
//
// A sender packs its shard into 16-byte lines {low 4 payload bytes, flag, high 4 payload bytes,
// flag} and stores them into every peer's staging area; the flag is derived from the op number
// (OneTripFlag), so data and "it has arrived" travel in the same store. 8-byte halves of a line
// are single-copy atomic, a whole line is not: a reader accepts a line once both flags show the
// op. The first kOneTripHeaderLines lines carry the sender's announcement (PackHeader), so a
// receiver can detect disagreement (and stop waiting for data lines that may never come).
// Protocol: kernels/PROTOCOL.md.
//
// Each GPU's staging area holds, for both op-number parities and every source rank, room for
// `lines_per_source` lines: [parity][source][line].
#ifndef LTX_KERNELS_ONE_TRIP_LAYOUT_H_
#define LTX_KERNELS_ONE_TRIP_LAYOUT_H_

#include <cstdint>

#include "kernels/entry_announcement.h"
#include "kernels/host_device.h"

namespace ltx {

struct alignas(16) OneTripLine {
  uint32_t low;
  uint32_t flag_low;
  uint32_t high;
  uint32_t flag_high;
};

// Payload bytes per line.
inline constexpr int64_t kOneTripPayloadBytes = 8;

// Header lines: one 8-byte payload each, the sender's announcement without its output address.
inline constexpr int64_t kOneTripHeaderLines = 5;

// The payloads of the header lines of a sender whose announcement is `announcement`:
// [0] dtype, [1] row bytes, [2] batch, [3] total tokens, [4] counts digest.
LTX_HOST_DEVICE inline void PackHeader(const EntryAnnouncement& announcement,
                                       uint64_t (&payloads)[kOneTripHeaderLines]) {
  payloads[0] = static_cast<uint64_t>(announcement.dtype);
  payloads[1] = static_cast<uint64_t>(announcement.row_bytes);
  payloads[2] = static_cast<uint64_t>(announcement.batch);
  payloads[3] = static_cast<uint64_t>(announcement.total_tokens);
  payloads[4] = announcement.counts_digest;
}

// The announcement that PackHeader packed into `payloads`, with output address 0 (the one-trip
// path never stores into a peer's output).
LTX_HOST_DEVICE inline EntryAnnouncement UnpackHeader(
    const uint64_t (&payloads)[kOneTripHeaderLines]) {
  return MakeEntryAnnouncement(0, static_cast<int32_t>(payloads[0]),
                               static_cast<int64_t>(payloads[1]),
                               static_cast<int64_t>(payloads[2]),
                               static_cast<int64_t>(payloads[3]), payloads[4]);
}

// Largest shard (bytes one rank sends) the staging area is sized for.
inline constexpr int64_t kOneTripMaxShardBytes = 512 * 1024;

// Lines one rank sends for a shard of `shard_bytes` bytes.
LTX_HOST_DEVICE constexpr int64_t OneTripLines(int64_t shard_bytes) {
  return kOneTripHeaderLines + (shard_bytes + kOneTripPayloadBytes - 1) / kOneTripPayloadBytes;
}

inline constexpr int64_t kOneTripLinesPerSource = OneTripLines(kOneTripMaxShardBytes);

// Bytes of one GPU's staging area for `world` ranks.
LTX_HOST_DEVICE constexpr int64_t OneTripStagingBytes(int world) {
  return 2 * world * kOneTripLinesPerSource * static_cast<int64_t>(sizeof(OneTripLine));
}

// The flag value of op number `op` (>= 1): never 0, which is what cleared staging holds, and
// different for ops that share a parity until 2^32 - 1 ops have passed.
LTX_HOST_DEVICE constexpr uint32_t OneTripFlag(uint64_t op) {
  return static_cast<uint32_t>(1 + (op - 1) % 0xFFFFFFFFull);
}

// Lines (sent plus received) one thread block of the one-trip kernel is given.
inline constexpr int64_t kOneTripLinesPerBlock = 512;

// Block count of the one-trip kernel when every rank sends at most `lines` lines: enough
// blocks for kOneTripLinesPerBlock lines each, at least 1, at most `max_blocks` (>= 1).
LTX_HOST_DEVICE constexpr int OneTripBlockCount(int64_t lines, int world, int max_blocks) {
  return (world * lines + kOneTripLinesPerBlock - 1) / kOneTripLinesPerBlock < max_blocks
             ? static_cast<int>((world * lines + kOneTripLinesPerBlock - 1) /
                                kOneTripLinesPerBlock)
             : max_blocks;
}

// Index of line `line` from `source` for op parity `parity` (op number % 2) in a staging area.
LTX_HOST_DEVICE inline int64_t OneTripLineIndex(int parity, int source, int world, int64_t line) {
  return (static_cast<int64_t>(parity) * world + source) * kOneTripLinesPerSource + line;
}

}  // namespace ltx

#endif  // LTX_KERNELS_ONE_TRIP_LAYOUT_H_
