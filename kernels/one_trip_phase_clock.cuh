// The two clocks the one-trip kernel is instantiated with: NoPhaseClock (production: every call
// compiles to nothing) and PhaseClock (kernels/one_trip_timestamps.h: %globaltimer at each
// phase of each block, written to a device buffer when the block ends).
#ifndef LTX_KERNELS_ONE_TRIP_PHASE_CLOCK_CUH_
#define LTX_KERNELS_ONE_TRIP_PHASE_CLOCK_CUH_

#include <cstdint>

#include "kernels/memory_order.cuh"
#include "kernels/one_trip_timestamps.h"

namespace ltx {

// Records nothing.
struct NoPhaseClock {
  __device__ __forceinline__ void BlockStart() const {}
  __device__ __forceinline__ void Mark(OneTripPhase) const {}
  __device__ __forceinline__ void Arrived() {}
  __device__ __forceinline__ void BlockEnd(uint64_t) const {}
};

// Records, per block, when the slowest thread of the block passed each phase. Every thread of
// the block must call BlockStart first, before the kernel's first __syncthreads(); Mark(phase)
// where the whole block passes the phase (it reduces over each warp: all 32 lanes call it);
// Arrived() after each line it waited for; and BlockEnd after a __syncthreads() that follows
// every Mark. Costs one warp reduction and one shared atomic per warp and phase.
class PhaseClock {
 public:
  __host__ __device__ explicit PhaseClock(const OneTripTimestamps& out) : out_(out) {}

  // Thread 0 takes the block's start time; threads clear the phase slots.
  __device__ void BlockStart() {
    const uint64_t now = GlobalTimerNs();
    if (threadIdx.x == 0) *Start() = now;
    if (threadIdx.x < kOneTripPhaseCount) Since()[threadIdx.x] = 0;
  }

  // This thread passed `phase` now (kLastArrived: when its last awaited line arrived).
  __device__ void Mark(OneTripPhase phase) {
    const uint32_t since = phase == OneTripPhase::kLastArrived
                               ? arrived_since_
                               : static_cast<uint32_t>(GlobalTimerNs() - *Start()) | 1u;
    const uint32_t slowest = __reduce_max_sync(0xFFFFFFFFu, since);
    if (threadIdx.x % 32 == 0) atomicMax(&Since()[static_cast<int>(phase)], slowest);
  }

  // A line this thread waited for has arrived.
  __device__ void Arrived() {
    arrived_since_ = static_cast<uint32_t>(GlobalTimerNs() - *Start()) | 1u;
  }

  // Thread 0 writes the block's record of op `op`.
  __device__ void BlockEnd(uint64_t op) {
    const uint64_t now = GlobalTimerNs();
    if (threadIdx.x != 0 || static_cast<int>(blockIdx.x) >= out_.max_blocks) return;
    OneTripTimestampRecord* record =
        out_.records + OneTripRecordIndex(op, blockIdx.x, out_.samples, out_.max_blocks);
    const uint64_t start = *Start();
    record->op = op;
    for (int phase = 0; phase < kOneTripPhaseCount; ++phase) {
      const uint32_t since = Since()[phase];
      record->ns[phase] = since == 0 ? 0 : start + since;
    }
    record->ns[static_cast<int>(OneTripPhase::kStart)] = start;
    record->ns[static_cast<int>(OneTripPhase::kEnd)] = now;
  }

 private:
  // The block's start time and the slowest thread's time per phase, in ns after the start (odd,
  // so that 0 means "not reached"), in shared memory.
  __device__ static uint64_t* Start() {
    __shared__ uint64_t start;
    return &start;
  }
  __device__ static uint32_t* Since() {
    __shared__ uint32_t since[kOneTripPhaseCount];
    return since;
  }

  OneTripTimestamps out_;
  uint32_t arrived_since_ = 0;
};

}  // namespace ltx

#endif  // LTX_KERNELS_ONE_TRIP_PHASE_CLOCK_CUH_
