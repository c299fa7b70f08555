// What the GPU tests of both collectives share to check their timed kernels
// (CallOptions::phase_timestamps): a buffer of phase records on every rank's GPU, the per-rank
// call options that record into it, and the check that every block of every op recorded its
// phases between its start and its end.
#ifndef LTX_TESTS_PHASE_RECORD_BUFFERS_H_
#define LTX_TESTS_PHASE_RECORD_BUFFERS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/wire/phase_timestamps.h"
#include "ltx/runtime_options.h"

namespace ltx {

// How far a block's other warps may record phases after its end where ranks share a GPU: their
// warps are scheduled beside other ranks' spinning blocks (measured on H200 with 4 ranks on one
// GPU: up to 21 us).
inline constexpr uint64_t kSharedGpuPhaseSlackNs = 1000000;

class PhaseRecordBuffers {
 public:
  // What every byte of the records holds until a timed kernel writes them.
  static constexpr uint8_t kPoisonByte = 0xa7;

  // Allocates `ops * blocks` records on each of `devices` (rank order), every byte poisoned
  // (kPoisonByte), so that a record no block wrote cannot pass. The calling thread's current
  // device is left at the last one. Errors: as CUDA reports them; whatever was allocated is
  // freed.
  static absl::StatusOr<std::unique_ptr<PhaseRecordBuffers>> Create(
      const std::vector<int>& devices, int ops, int blocks);

  // Frees every buffer (no timed kernel may still be running).
  ~PhaseRecordBuffers();

  PhaseRecordBuffers(const PhaseRecordBuffers&) = delete;
  PhaseRecordBuffers& operator=(const PhaseRecordBuffers&) = delete;

  // Call options of rank `rank` for the timed kernel of `protocol` (kDirect or kOneTrip) with
  // the buffers' block count, recording into rank `rank`'s buffer. They point into this object.
  CallOptions TimedCall(int rank, Protocol protocol) const;

  // Copies every rank's records back and checks each with GoogleTest expectations: the op number
  // of its slot (PhaseRecordIndex), the `ops` records of a rank holding `ops` successive ops (so
  // none kept its poison or an older op), end >= start, and every phase of `reached` in
  // [start, end + kPhaseEndSlackNs] (a block's end may be read before its other warps' last
  // phases; kSharedGpuPhaseSlackNs where ranks share a GPU; no upper bound where the environment
  // sets LTX_TEST_UNDER_SANITIZER, as the bundle's sanitize.sh does). `Phase` is OneTripPhase or
  // DirectPhase. Not thread-safe with timed kernels still running.
  template <typename Phase>
  void ExpectEveryBlockRecorded(const std::vector<Phase>& reached) const {
    std::vector<int> slots;
    for (Phase phase : reached) slots.push_back(static_cast<int>(phase));
    ExpectSlotsRecorded(static_cast<int>(Phase::kStart), static_cast<int>(Phase::kEnd), slots);
  }

 private:
  PhaseRecordBuffers(std::vector<int> devices, int ops, int blocks);

  // ExpectEveryBlockRecorded over slot numbers.
  void ExpectSlotsRecorded(int start_slot, int end_slot, const std::vector<int>& reached) const;

  const std::vector<int> devices_;
  const int ops_;
  const int blocks_;
  std::vector<PhaseTimestamps> timestamps_;  // One per rank; records null until allocated.
};

}  // namespace ltx

#endif  // LTX_TESTS_PHASE_RECORD_BUFFERS_H_
