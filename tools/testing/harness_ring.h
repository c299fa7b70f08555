// Several harnesses of one collective (AllGatherHarness or AllToAllHarness) over the same ranks,
// each holding one op's buffers, so that ops in flight together without host synchronisation
// each keep their own random input and poisoned output until they are checked. Every op runs on
// the streams of slot 0, which the other slots borrow: one stream per rank keeps each rank's ops
// in order, and few streams that carry work keep ranks that share a GPU off each other's
// hardware queues (kernels/PROTOCOL.md, "Ranks that share a GPU").
#ifndef LTX_TOOLS_TESTING_HARNESS_RING_H_
#define LTX_TOOLS_TESTING_HARNESS_RING_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ltx/rank_buffers.h"
#include "ltx/status_macros.h"

namespace ltx {

template <typename Harness>
class HarnessRing {
 public:
  // `slots` harnesses over `devices`, each as Harness::Create makes it (seeds seed, seed + 1,
  // ...), slot 0 with a stream per rank that the others borrow. Errors: those of
  // Harness::Create.
  static absl::StatusOr<HarnessRing> Create(const std::vector<int>& devices, int slots,
                                            int64_t input_capacity, int64_t output_capacity,
                                            uint64_t seed) {
    HarnessRing ring;
    std::vector<cudaStream_t> streams;  // Slot 0's, once it exists.
    for (int slot = 0; slot < slots; ++slot) {
      LTX_ASSIGN_OR_RETURN(
          std::unique_ptr<Harness> harness,
          Harness::Create(devices, input_capacity, output_capacity, seed + slot, streams));
      if (slot == 0) {
        for (int rank = 0; rank < harness->world_size(); ++rank) {
          streams.push_back(harness->Buffers(rank).stream);
        }
      }
      ring.slots_.push_back(std::move(harness));
    }
    return ring;
  }

  HarnessRing(HarnessRing&&) = default;
  HarnessRing& operator=(HarnessRing&&) = delete;  // Would destroy the old slot 0 first.
  // Slot 0, whose streams the others borrow, goes last.
  ~HarnessRing() {
    while (!slots_.empty()) slots_.pop_back();
  }

  int size() const { return static_cast<int>(slots_.size()); }

  // Slot `slot`'s harness: Prepare it (fresh data, poisoned areas) only while no op uses it.
  // Its Prepare and RefreshInputs wait for the shared streams, so for every op queued on them
  // too: call them before launching, not between one rank's op and a peer's.
  Harness& slot(int slot) { return *slots_[slot]; }

  // Rank `rank`'s buffers of slot `slot`'s current case, on slot 0's stream of that rank.
  RankBuffers Buffers(int slot, int rank) const {
    RankBuffers buffers = slots_[slot]->Buffers(rank);
    buffers.stream = slots_[0]->Buffers(rank).stream;
    return buffers;
  }
  std::vector<RankBuffers> AllBuffers(int slot) const {
    std::vector<RankBuffers> all;
    for (int rank = 0; rank < slots_[slot]->world_size(); ++rank) {
      all.push_back(Buffers(slot, rank));
    }
    return all;
  }

  // Waits for slot 0's streams, where every op ran, then verifies slot `slot` (its Verify).
  absl::Status Verify(int slot) {
    LTX_RETURN_IF_ERROR(slots_[0]->SynchronizeStreams());
    return slots_[slot]->Verify();
  }

 private:
  HarnessRing() = default;

  std::vector<std::unique_ptr<Harness>> slots_;
};

}  // namespace ltx

#endif  // LTX_TOOLS_TESTING_HARNESS_RING_H_
