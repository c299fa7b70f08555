// Phase timestamps of the one-trip kernel, a diagnostic: a separate instantiation of the kernel
// reads %globaltimer at fixed points of every block and stores them into a small device buffer,
// so that a tool can tell where the time of a small AllGather or all-to-all goes. The production
// instantiation records nothing and reads no timer for it. Shared by the host (buffer size,
// reading records back) and the kernel.
#ifndef LTX_KERNELS_ONE_TRIP_TIMESTAMPS_H_
#define LTX_KERNELS_ONE_TRIP_TIMESTAMPS_H_

#include <cstdint>

#include "kernels/host_device.h"

namespace ltx {

// The points of one block of the one-trip kernel that are timed, in program order.
enum class OneTripPhase : int {
  kStart = 0,       // The block's first instruction (thread 0).
  kSent,            // Every thread of the block has issued its line stores to the peers.
  kOwnCopied,       // Every thread has stored its part of the own shard into the output
                    // (with peers: beside its line stores, so just after kSent).
  kHeadersChecked,  // Block 0 only: every peer's header lines arrived and were compared.
  kLastArrived,     // The last line any thread of the block waited for has arrived.
  kUnpacked,        // Every thread has stored its received payloads into the output.
  kEnd,             // Thread 0 after the block's last Mark, its last instruction.
};

inline constexpr int kOneTripPhaseCount = static_cast<int>(OneTripPhase::kEnd) + 1;

// What one block of one op recorded: the op number, then each phase's %globaltimer value in ns
// (0: the block did not reach it, e.g. kHeadersChecked outside block 0, or a thread without
// lines for kLastArrived).
struct OneTripTimestampRecord {
  uint64_t op = 0;
  uint64_t ns[kOneTripPhaseCount] = {};
};

// Where the timed kernel of one rank writes: device memory of the rank's GPU holding
// `samples * max_blocks` records. Op n's block b writes record OneTripRecordIndex(n, b, ...), so
// graph replays, which repeat the same arguments, fill successive records; blocks at or past
// `max_blocks` record nothing.
struct OneTripTimestamps {
  OneTripTimestampRecord* records = nullptr;
  int samples = 0;
  int max_blocks = 0;
};

// Index of op `op`'s block `block` among the records of `timestamps`.
LTX_HOST_DEVICE constexpr int64_t OneTripRecordIndex(uint64_t op, int block, int samples,
                                                     int max_blocks) {
  return static_cast<int64_t>(op % static_cast<uint64_t>(samples)) * max_blocks + block;
}

}  // namespace ltx

#endif  // LTX_KERNELS_ONE_TRIP_TIMESTAMPS_H_
