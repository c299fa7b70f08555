// The two clocks the protocol kernels are instantiated with: NoPhaseClock (production: every
// call compiles to nothing) and PhaseClock<Phase> (kernels/wire/phase_timestamps.h: %globaltimer at
// each phase of each block, written to a device buffer when the block ends). `Phase` is the
// protocol's phase enum (OneTripPhase, DirectPhase).
#ifndef KERNELS_DEVICE_PHASE_CLOCK_CUH_
#define KERNELS_DEVICE_PHASE_CLOCK_CUH_

#include <cstdint>

#include "kernels/device/memory_order.cuh"
#include "kernels/wire/phase_timestamps.h"

namespace ltx {

// Records nothing.
struct NoPhaseClock {
  __device__ __forceinline__ void BlockStart() const {}
  template <typename Phase>
  __device__ __forceinline__ void Mark(Phase) const {}
  template <typename Phase>
  __device__ __forceinline__ void MarkArrived(Phase) const {}
  template <typename Phase>
  __device__ __forceinline__ void Note(Phase) const {}
  __device__ __forceinline__ void Arrived() {}
  __device__ __forceinline__ void BlockEnd(uint64_t) const {}
};

// Records, per block, when the slowest thread of the block passed each phase. Every thread of
// the block must call BlockStart first, before the kernel's first __syncthreads(); then
//   Mark(phase)         where the whole block passes the phase (it reduces over each warp: all
//                       32 lanes call it);
//   Note(phase)         where some threads pass it (any subset, each alone);
//   Arrived()           after each line a thread waited for, and MarkArrived(phase) where the
//                       whole block passes the point by which its last awaited line arrived;
// and BlockEnd after a __syncthreads() that follows every Mark, Note and MarkArrived (thread 0's
// own Notes may come after it). Costs one warp reduction and one shared atomic per warp and
// Mark, one shared atomic per thread and Note.
template <typename Phase>
class PhaseClock {
 public:
  static constexpr int kPhases = kPhaseCount<Phase>;

  __host__ __device__ explicit PhaseClock(const PhaseTimestamps& out) : out_(out) {}

  // Thread 0 takes the block's start time; threads clear the phase slots.
  __device__ void BlockStart() {
    const uint64_t now = GlobalTimerNs();
    if (threadIdx.x == 0) *Start() = now;
    if (threadIdx.x < kPhases) Since()[threadIdx.x] = 0;
  }

  // This warp passed `phase` now.
  __device__ void Mark(Phase phase) { MarkSince(phase, SinceStart()); }

  // This warp passed `phase`; its threads' last awaited lines arrived at the latest Arrived().
  __device__ void MarkArrived(Phase phase) { MarkSince(phase, arrived_since_); }

  // This thread passed `phase` now.
  __device__ void Note(Phase phase) { atomicMax(&Since()[static_cast<int>(phase)], SinceStart()); }

  // A line this thread waited for has arrived.
  __device__ void Arrived() { arrived_since_ = SinceStart(); }

  // Thread 0 writes the block's record of op `op`.
  __device__ void BlockEnd(uint64_t op) {
    const uint64_t now = GlobalTimerNs();
    if (threadIdx.x != 0 || static_cast<int>(blockIdx.x) >= out_.max_blocks) return;
    PhaseTimestampRecord* record =
        out_.records + PhaseRecordIndex(op, blockIdx.x, out_.samples, out_.max_blocks);
    const uint64_t start = *Start();
    record->op = op;
    for (int phase = 0; phase < kMaxPhaseCount; ++phase) {
      const uint32_t since = phase < kPhases ? Since()[phase] : 0;
      record->ns[phase] = since == 0 ? 0 : start + since;
    }
    record->ns[static_cast<int>(Phase::kStart)] = start;
    record->ns[static_cast<int>(Phase::kEnd)] = now;
  }

 private:
  // The block's start time and the slowest thread's time per phase, in ns after the start (odd,
  // so that 0 means "not reached"), in shared memory.
  __device__ static uint64_t* Start() {
    __shared__ uint64_t start;
    return &start;
  }
  __device__ static uint32_t* Since() {
    __shared__ uint32_t since[kPhases];
    return since;
  }
  __device__ static uint32_t SinceStart() {
    return static_cast<uint32_t>(GlobalTimerNs() - *Start()) | 1u;
  }

  // The warp's slowest `since` for `phase`.
  __device__ void MarkSince(Phase phase, uint32_t since) {
    const uint32_t slowest = __reduce_max_sync(0xFFFFFFFFu, since);
    if (threadIdx.x % 32 == 0) atomicMax(&Since()[static_cast<int>(phase)], slowest);
  }

  PhaseTimestamps out_;
  uint32_t arrived_since_ = 0;
};

}  // namespace ltx

#endif  // KERNELS_DEVICE_PHASE_CLOCK_CUH_
