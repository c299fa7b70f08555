// The peer-store transport: kernels on each GPU store straight into the peers' memory over
// NVLink (peer access enabled for every pair). It owns what those kernels share, per GPU: the
// signal region and the one-trip staging that peers store into (from a memory pool of its own,
// open to the peers), and the error record in host-mapped pinned memory where the device reports
// timeouts and disagreements. None of it is freed in a way that synchronises a device, so
// destroying a transport never waits for other work on its GPUs. Collectives launch their
// kernels with a PeerStoreView of one rank and never manage this memory themselves. The protocol
// is described in kernels/PROTOCOL.md.
#ifndef LTX_TRANSPORT_PEER_STORE_PEER_STORE_TRANSPORT_H_
#define LTX_TRANSPORT_PEER_STORE_PEER_STORE_TRANSPORT_H_

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/optional.h"
#include "kernels/wire/error_record.h"
#include "kernels/wire/one_trip_layout.h"
#include "kernels/wire/signal_layout.h"
#include "ltx/runtime/rank_placement.h"

namespace ltx {

// What one rank's kernel needs of the transport, whatever the collective.
struct PeerStoreView {
  int rank = 0;
  int world_size = 0;
  // Most thread blocks a kernel of this rank may use.
  int max_blocks = 1;
  // Every rank's signal region and one-trip staging, indexed by rank (peer pointers).
  std::array<SignalRegion*, kMaxWorldSize> signals = {};
  std::array<OneTripLine*, kMaxWorldSize> staging = {};
  // This rank's error record: the device's pointer to host-mapped pinned memory.
  DeviceErrorRecord* error_record = nullptr;
};

class PeerStoreTransport {
 public:
  // Enables peer access between the distinct GPUs of `placement` (once per pair, tolerating
  // "already enabled"), and allocates each rank's signal region, staging and error record,
  // cleared (ranks that share a GPU each have their own). `max_blocks` (>= 1) caps the blocks of
  // every rank's kernel. The calling thread's current device is restored. Errors: as CUDA
  // reports them; whatever was allocated is freed, as by the destructor.
  static absl::StatusOr<std::unique_ptr<PeerStoreTransport>> Create(
      const RankPlacement& placement, int max_blocks);

  // Frees the memory unless KeepMemoryAtExit was called. Waits for nothing but its own control
  // streams: kernels of others on the same GPUs may run on. No kernel of this transport may be
  // running or queued unless KeepMemoryAtExit was called.
  ~PeerStoreTransport();

  PeerStoreTransport(const PeerStoreTransport&) = delete;
  PeerStoreTransport& operator=(const PeerStoreTransport&) = delete;

  int world_size() const { return static_cast<int>(ranks_.size()); }

  // Rank `rank`'s view, for its kernel launches. Thread-safe.
  const PeerStoreView& view(int rank) const { return ranks_[rank].view; }

  // The error rank `rank`'s device has published since the last Clear, if any. Safe while
  // kernels run (reads host-mapped memory with acquire ordering). Thread-safe.
  absl::optional<DeviceErrorRecord> ReadError(int rank) const;

  // The ranks (bit per rank) that had begun storing into rank `rank`'s output when its GPU gave
  // an op up, and that it could not stop (DeviceErrorRecord::storing_peers). Thread-safe.
  uint32_t StoringPeers(int rank) const;

  // Zeroes every GPU's signal region, staging and error record, and so restarts the op numbers
  // (the region's peer_atomics field is set again). No kernel of this transport may be running
  // or queued. Not thread-safe with launches.
  absl::Status Clear();

  // Sets every GPU's abort flag, so that running and queued kernels stop waiting and skip their
  // work (their ops end with the error already recorded, or none); a GPU that fails keeps no
  // other from getting its flag. Returns the first error. Thread-safe.
  absl::Status Abandon();

  // Leaves the device memory allocated at destruction: for when kernels may still run.
  void KeepMemoryAtExit() { free_memory_ = false; }

 private:
  struct Rank {
    int device = -1;
    PeerStoreView view;
    DeviceErrorRecord* record = nullptr;  // Host address of the error record.
    uint64_t record_context = 0;          // The primary context it was acquired under.
    cudaMemPool_t pool = nullptr;         // Holds the signal region and the staging.
    int64_t staging_bytes = 0;
    cudaStream_t control_stream = nullptr;  // For clearing and aborting, never for ops.
  };

  explicit PeerStoreTransport(const std::vector<int>& devices);
  // Allocates rank `rank`'s memory on its GPU, the current device.
  absl::Status Allocate(int rank, const RankPlacement& placement, int max_blocks);
  // Frees rank `rank`'s memory on its GPU, the current device, without synchronising it.
  void FreeMemory(int rank);
  // What ForRanks does after an error.
  enum class AfterError {
    kStop,      // Runs no later rank's step.
    kContinue,  // Runs every rank's step all the same (what must reach every GPU: the abort
                // flags, the frees).
  };
  // Runs `step` for the ranks in order with the rank's GPU current; returns the first error;
  // restores the current device.
  template <typename Step>
  absl::Status ForRanks(AfterError after_error, Step step);

  std::vector<Rank> ranks_;
  // Whether every pair has native peer atomics (SignalRegion::peer_atomics).
  bool peer_atomics_ = false;
  bool free_memory_ = true;
};

}  // namespace ltx

#endif  // LTX_TRANSPORT_PEER_STORE_PEER_STORE_TRANSPORT_H_
