// Which path each rank's recent calls took, on the host: every rank numbers its calls through the
// Runtime alike (1 for the first after creation or Reset, as ranks issue the same ops in the
// same order), and records the number and the protocol of each call in a small ring of its own.
// Copy-engine ops meet on the host and kernel ops on the device, so ranks that took different
// kinds of path for the same op would never meet: each call, once recorded, looks up its number
// in the peers' rings (kernels/PROTOCOL.md, "Copy engines against a kernel").
#ifndef LTX_RUNTIME_CALL_LEDGER_H_
#define LTX_RUNTIME_CALL_LEDGER_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "ltx/runtime_options.h"

namespace ltx {

class CallLedger {
 public:
  // How many recent calls of each rank the ledger remembers: a peer more calls ahead than this
  // is no longer checked against.
  static constexpr int kHistory = 64;

  // A ledger of `ranks` ranks (>= 1), every ring empty.
  explicit CallLedger(int ranks);

  CallLedger(const CallLedger&) = delete;
  CallLedger& operator=(const CallLedger&) = delete;

  // Records rank `rank`'s next call, taken on `protocol` (kDirect, kOneTrip or kCopyEngine),
  // and returns its number. Lock-free: one store of the rank's own ring, sequentially
  // consistent, so that of two ranks that record and then Check the same call, at least one
  // sees the other's record. Calls for one rank must not overlap (the Runtime's contract);
  // calls for different ranks may.
  uint64_t Record(int rank, Protocol protocol);

  // For rank `rank`, whose call `number` took `protocol`: InvalidArgument, naming both ranks,
  // the call and both paths, when a peer recorded the same call on the other kind of path (the
  // copy engines against a kernel); else OK. A peer that has not recorded the call yet is not
  // a disagreement (it finds this rank's record when it does). Thread-safe.
  absl::Status Check(int rank, uint64_t number, Protocol protocol) const;

  // The number of the newest call rank `rank` recorded (0: none since creation or the last
  // Reset), as its ring shows it to any thread: for messages about a rank whose work never
  // reached its GPU. Thread-safe.
  uint64_t LatestCall(int rank) const;

  // Empties every ring. No call may be recording.
  void Reset();

 private:
  struct alignas(64) Ring {
    uint64_t calls = 0;  // Written and read by the rank's own calls only.
    // entries[n % kHistory] = n << 2 | protocol of call n.
    std::atomic<uint64_t> entries[kHistory];
  };

  const int ranks_;
  std::unique_ptr<Ring[]> rings_;
};

}  // namespace ltx

#endif  // LTX_RUNTIME_CALL_LEDGER_H_
