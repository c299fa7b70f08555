// Which path each rank's calls took, on the host: every rank numbers its calls through the
// Runtime alike (1 for the first after creation or Reset, as ranks issue the same ops in the
// same order), and records the number and the protocol of its latest call in a slot of its own.
// Copy-engine ops meet on the host and kernel ops on the device, so ranks that took different
// paths for the same op never meet; a copy-engine rank waiting for its peers reads their slots
// to notice a peer that issued the op on a kernel path (kernels/PROTOCOL.md).
#ifndef LTX_CALL_LEDGER_H_
#define LTX_CALL_LEDGER_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "ltx/runtime_options.h"

namespace ltx {

class CallLedger {
 public:
  // A ledger of `ranks` ranks (>= 1), every slot empty.
  explicit CallLedger(int ranks);

  CallLedger(const CallLedger&) = delete;
  CallLedger& operator=(const CallLedger&) = delete;

  // Records rank `rank`'s next call, taken on `protocol` (kDirect, kOneTrip or kCopyEngine),
  // and returns its number. Lock-free: one relaxed load and one release store of the rank's own
  // slot (a cache line of its own). Calls for one rank must not overlap (the Runtime's
  // contract); calls for different ranks may.
  uint64_t Record(int rank, Protocol protocol);

  // The latest call of a rank: its number (0: none since creation or Reset) and protocol.
  struct Entry {
    uint64_t number = 0;
    Protocol protocol = Protocol::kAuto;
  };
  // Rank `rank`'s latest call (acquire). Thread-safe.
  Entry Latest(int rank) const;

  // For rank `rank`, whose call `number` takes the copy engines: InvalidArgument when some peer
  // issued that call on a kernel path (its latest call is `number` on a kernel path, or a later
  // one: a copy-engine call `number` could not have returned without `rank`), naming both ranks,
  // the call and the paths; else OK. Thread-safe.
  absl::Status CheckCopyEnginePeers(int rank, uint64_t number) const;

  // Empties every slot. No call may be recording.
  void Reset();

 private:
  struct alignas(64) Slot {
    // number << 2 | protocol.
    std::atomic<uint64_t> word{0};
  };

  const int ranks_;
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace ltx

#endif  // LTX_CALL_LEDGER_H_
