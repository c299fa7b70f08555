// Several harnesses of one collective (AllGatherHarness or AllToAllHarness) over the same ranks,
// each holding one op's buffers, so that ops in flight together without host synchronisation
// each keep their own random input and poisoned output until they are checked. Every op runs on
// the streams of slot 0, which the other slots borrow: one stream per rank keeps each rank's ops
// in order, and few streams that carry work keep ranks that share a GPU off each other's
// hardware queues (kernels/PROTOCOL.md, "Ranks that share a GPU").
#ifndef LTX_TOOLS_TESTING_HARNESS_RING_H_
#define LTX_TOOLS_TESTING_HARNESS_RING_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ltx/rank_buffers.h"
#include "ltx/status_macros.h"
#include "tools/testing/harness_set.h"

namespace ltx {

template <typename Harness>
class HarnessRing {
 public:
  // `slots` harnesses over `devices`, each as Harness::Create makes it (seeds seed, seed + 1,
  // ...), on slot 0's streams (HarnessSet). Errors: those of Harness::Create.
  static absl::StatusOr<HarnessRing> Create(const std::vector<int>& devices, int slots,
                                            int64_t input_capacity, int64_t output_capacity,
                                            uint64_t seed) {
    HarnessRing ring;
    LTX_ASSIGN_OR_RETURN(ring.slots_,
                         HarnessSet<Harness>::Create(devices, slots, input_capacity,
                                                     output_capacity,
                                                     [seed](int slot) { return seed + slot; }));
    return ring;
  }

  int size() const { return static_cast<int>(slots_.size()); }

  // Slot `slot`'s harness: Prepare it (fresh data, poisoned areas) only while no op uses it.
  // Its Prepare and RefreshInputs wait for the shared streams, so for every op queued on them
  // too: call them before launching, not between one rank's op and a peer's.
  Harness& slot(int slot) { return slots_[slot]; }

  // Rank `rank`'s buffers of slot `slot`'s current case (on the shared stream of that rank).
  RankBuffers Buffers(int slot, int rank) const { return slots_[slot].Buffers(rank); }
  std::vector<RankBuffers> AllBuffers(int slot) const { return slots_[slot].AllBuffers(); }

  // Waits for the shared streams, where every op ran, then verifies slot `slot` (its Verify).
  absl::Status Verify(int slot) { return slots_[slot].Verify(); }

 private:
  HarnessRing() = default;

  HarnessSet<Harness> slots_;
};

}  // namespace ltx

#endif  // LTX_TOOLS_TESTING_HARNESS_RING_H_
