// Layout of the one-trip path's staging memory, shared by the host (allocation, clearing, path
// choice) and the one-trip kernel.
//
// A sender packs its shard into 16-byte lines of two 8-byte words, each {4 payload bytes, flag},
// and stores them into every peer's staging area; the flag is derived from the op number
// (OneTripFlag), so data and "it has arrived" travel in the same store. The kernel moves a line
// as a vector of two 8-byte elements (st/ld .v2.u64), and PTX makes each naturally aligned
// element single-copy atomic, but not the vector: so each word carries its own flag, and a reader
// accepts a line once both words show the op (ReadOneTripLine). The first kOneTripHeaderLines
// lines carry the sender's announcement (PackHeader), so a receiver can detect disagreement (and
// stop waiting for data lines that may never come).
// Protocol: kernels/PROTOCOL.md.
//
// Each GPU's staging area holds, for both op-number parities and every source rank, room for
// `lines_per_source` lines: [parity][source][line].
#ifndef KERNELS_WIRE_ONE_TRIP_LAYOUT_H_
#define KERNELS_WIRE_ONE_TRIP_LAYOUT_H_

#include <cstdint>

#include "kernels/wire/entry_announcement.h"
#include "kernels/wire/host_device.h"

namespace ltx {

// One line: `low` carries payload bytes 0-3, `high` bytes 4-7; each word holds its 4 payload
// bytes in its low half and the flag in its high half (OneTripWord).
struct alignas(16) OneTripLine {
  uint64_t low;
  uint64_t high;
};

// Payload bytes per line.
inline constexpr int64_t kOneTripPayloadBytes = 8;

// The word that carries the 4 payload bytes `payload` with `flag`.
LTX_HOST_DEVICE constexpr uint64_t OneTripWord(uint32_t payload, uint32_t flag) {
  return (static_cast<uint64_t>(flag) << 32) | payload;
}

// The line that carries the 8 payload bytes `payload` (little-endian: byte k is bits 8k..8k+7)
// with `flag` in both words.
LTX_HOST_DEVICE constexpr OneTripLine MakeOneTripLine(uint64_t payload, uint32_t flag) {
  return OneTripLine{OneTripWord(static_cast<uint32_t>(payload), flag),
                     OneTripWord(static_cast<uint32_t>(payload >> 32), flag)};
}

// True, with the payload in `*payload`, once both words of `line` carry `flag`; `*seen` is the
// low word's flag either way (what a timeout reports). Thread-safe (pure).
LTX_HOST_DEVICE inline bool ReadOneTripLine(const OneTripLine& line, uint32_t flag,
                                            uint64_t* payload, uint32_t* seen) {
  *payload = (line.high << 32) | (line.low & 0xFFFFFFFFull);
  *seen = static_cast<uint32_t>(line.low >> 32);
  return *seen == flag && static_cast<uint32_t>(line.high >> 32) == flag;
}

// Header lines: one 8-byte payload each, the sender's announcement without its output address
// and protocol (every sender of header lines takes the one-trip path).
inline constexpr int64_t kOneTripHeaderLines = 6;

// The payloads of the header lines of a sender whose announcement is `announcement`:
// [0] dtype, [1] row bytes, [2] batch, [3] total tokens, [4] counts digest, [5] reset
// generation.
LTX_HOST_DEVICE inline void PackHeader(const EntryAnnouncement& announcement,
                                       uint64_t (&payloads)[kOneTripHeaderLines]) {
  payloads[0] = static_cast<uint64_t>(announcement.dtype);
  payloads[1] = static_cast<uint64_t>(announcement.row_bytes);
  payloads[2] = static_cast<uint64_t>(announcement.batch);
  payloads[3] = static_cast<uint64_t>(announcement.total_tokens);
  payloads[4] = announcement.counts_digest;
  payloads[5] = announcement.generation;
}

// The announcement that PackHeader packed into `payloads`, with output address 0 (the one-trip
// path never stores into a peer's output) and the one-trip protocol.
LTX_HOST_DEVICE inline EntryAnnouncement UnpackHeader(
    const uint64_t (&payloads)[kOneTripHeaderLines]) {
  return MakeEntryAnnouncement(0, static_cast<int32_t>(payloads[0]),
                               static_cast<int64_t>(payloads[1]), static_cast<int64_t>(payloads[2]),
                               static_cast<int64_t>(payloads[3]), payloads[4],
                               AnnouncedProtocol::kOneTrip, payloads[5]);
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
             ? static_cast<int>((world * lines + kOneTripLinesPerBlock - 1) / kOneTripLinesPerBlock)
             : max_blocks;
}

// One unit of one-trip work: line `line` of a rank's lines, travelling from that rank to the
// rank `offset` places after it (1 <= offset < world).
struct OneTripTransfer {
  int64_t line;
  int offset;
};

// The work item of thread `thread` of block `block` in round `round`, for a grid of `blocks`
// blocks of `threads_per_block` threads: rounds of blocks * threads_per_block consecutive items.
LTX_HOST_DEVICE constexpr int64_t OneTripItem(int64_t round, int block, int blocks, int thread,
                                              int threads_per_block) {
  return (round * blocks + block) * threads_per_block + thread;
}

// Consecutive lines of one peer that consecutive work items carry: a warp's worth, so that a
// warp stores (and polls) 32 consecutive lines of one staging area.
inline constexpr int64_t kOneTripRunLines = 32;

// The transfer of work item `item` for `world` >= 2 ranks: items run over kOneTripRunLines
// lines for one peer, then the same lines for the next peer, then the next lines. The sender of
// a transfer and its receiver both take it from the same item, so with equal grids, block b of
// a receiver waits only for lines that block b of each sender stores (no dependency on other
// blocks of a peer's grid). When threads_per_block is a multiple of kOneTripRunLines, the line
// of one thread's items never decreases from round to round, so a thread may stop at the first
// line past the end.
LTX_HOST_DEVICE constexpr OneTripTransfer OneTripTransferOf(int64_t item, int world) {
  return OneTripTransfer{
      item / kOneTripRunLines / (world - 1) * kOneTripRunLines + item % kOneTripRunLines,
      1 + static_cast<int>(item / kOneTripRunLines % (world - 1))};
}

// Index of line `line` from `source` for op parity `parity` (op number % 2) in a staging area.
LTX_HOST_DEVICE inline int64_t OneTripLineIndex(int parity, int source, int world, int64_t line) {
  return (static_cast<int64_t>(parity) * world + source) * kOneTripLinesPerSource + line;
}

}  // namespace ltx

#endif  // KERNELS_WIRE_ONE_TRIP_LAYOUT_H_
