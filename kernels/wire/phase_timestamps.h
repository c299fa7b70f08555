// Phase timestamps of the collective kernels, a diagnostic: a separate instantiation of a
// kernel reads %globaltimer at fixed points of every block and stores them into a small device
// buffer, so that a tool can tell where the time of an op goes. The production instantiation
// records nothing and reads no timer for it. Each protocol names its own phases (OneTripPhase,
// DirectPhase); the records and the buffer are shared. Used by the host (buffer size, reading
// records back) and the kernels.
#ifndef KERNELS_WIRE_PHASE_TIMESTAMPS_H_
#define KERNELS_WIRE_PHASE_TIMESTAMPS_H_

#include <cstdint>

#include "kernels/wire/host_device.h"

namespace ltx {

// The points of one block of a one-trip kernel (AllGather or all-to-all) that are timed, in
// program order.
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

// The points of one block of the direct protocol (kernels/protocols/direct_protocol.cuh) that are
// timed, in program order. A block of an abandoned op reaches none between kStart and kStoresDone.
enum class DirectPhase : int {
  kStart = 0,        // The block's first instruction (thread 0).
  kEntryPublished,   // The block published this rank's entry to every peer and claimed its stores.
  kTargetSeen,       // Thread 0 saw the entry of its first lane's target (AwaitTargetEntry).
  kFirstStore,       // The block starts the stores of its first lane.
  kStoresDone,       // Every thread of the block has issued its stores (all lanes).
  kFenced,           // Thread 0's __threadfence_system after the stores returned.
  kCounted,          // Thread 0's atomicAdd on blocks_done returned (last block: and its reset).
  kExitFlagsStored,  // Last block only: this rank's exit flag stored into every peer.
  kExitFlagsSeen,    // Last block only: every peer's exit flag for this rank seen.
  kEnd,              // Thread 0's last instruction (last block: after advancing last_op).
};

// Phases of `Phase` (each enum runs from kStart = 0 to kEnd).
template <typename Phase>
inline constexpr int kPhaseCount = static_cast<int>(Phase::kEnd) + 1;

// Slots of a record: the most phases of any protocol.
inline constexpr int kMaxPhaseCount = kPhaseCount<DirectPhase> > kPhaseCount<OneTripPhase>
                                          ? kPhaseCount<DirectPhase>
                                          : kPhaseCount<OneTripPhase>;

// How far a block's end (thread 0's %globaltimer read after the block's last barrier) may fall
// before the phases its other warps recorded: the assembler may schedule that read where warp 0
// reaches the barrier, while other warps still work. Measured on H200: up to 0.8 us.
inline constexpr uint64_t kPhaseEndSlackNs = 2000;

// What one block of one op recorded: the op number, then each phase's %globaltimer value in ns
// (0: the block did not reach it, e.g. kHeadersChecked outside block 0, or a phase past the
// protocol's kEnd).
struct PhaseTimestampRecord {
  uint64_t op = 0;
  uint64_t ns[kMaxPhaseCount] = {};
};

// Where the timed kernel of one rank writes: device memory of the rank's GPU holding
// `samples * max_blocks` records. Op n's block b writes record PhaseRecordIndex(n, b, ...), so
// graph replays, which repeat the same arguments, fill successive records; blocks at or past
// `max_blocks` record nothing.
struct PhaseTimestamps {
  PhaseTimestampRecord* records = nullptr;
  int samples = 0;
  int max_blocks = 0;
};

// Index of op `op`'s block `block` among the records of `timestamps`.
LTX_HOST_DEVICE constexpr int64_t PhaseRecordIndex(uint64_t op, int block, int samples,
                                                   int max_blocks) {
  return static_cast<int64_t>(op % static_cast<uint64_t>(samples)) * max_blocks + block;
}

}  // namespace ltx

#endif  // KERNELS_WIRE_PHASE_TIMESTAMPS_H_
