// The per-rank ledger of recent calls and their paths.
#include "ltx/runtime/call_ledger.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace ltx {
namespace {

constexpr int kProtocolBits = 2;
constexpr uint64_t kProtocolMask = (uint64_t{1} << kProtocolBits) - 1;
static_assert(static_cast<uint64_t>(Protocol::kCopyEngine) <= kProtocolMask,
              "a protocol fits the low bits of an entry");

bool OnCopyEngines(Protocol protocol) { return protocol == Protocol::kCopyEngine; }

}  // namespace

CallLedger::CallLedger(int ranks) : ranks_(ranks), rings_(new Ring[ranks > 0 ? ranks : 1]) {
  Reset();
}

uint64_t CallLedger::Record(int rank, Protocol protocol) {
  Ring& ring = rings_[rank];
  const uint64_t number = ++ring.calls;
  ring.entries[number % kHistory].store(
      (number << kProtocolBits) | static_cast<uint64_t>(protocol), std::memory_order_seq_cst);
  return number;
}

absl::Status CallLedger::Check(int rank, uint64_t number, Protocol protocol) const {
  for (int peer = 0; peer < ranks_; ++peer) {
    if (peer == rank) continue;
    const uint64_t entry =
        rings_[peer].entries[number % kHistory].load(std::memory_order_seq_cst);
    const auto theirs = static_cast<Protocol>(entry & kProtocolMask);
    if ((entry >> kProtocolBits) != number || OnCopyEngines(theirs) == OnCopyEngines(protocol)) {
      continue;
    }
    return absl::InvalidArgumentError(absl::StrFormat(
        "call #%d: rank %d took the %s path, rank %d the %s path: ranks disagree on the "
        "protocol of this op (their shapes lie on two sides of "
        "RuntimeOptions::copy_engine_min_bytes, or they passed different CallOptions::protocol)",
        number, rank, ProtocolName(protocol), peer, ProtocolName(theirs)));
  }
  return absl::OkStatus();
}

uint64_t CallLedger::LatestCall(int rank) const {
  uint64_t latest = 0;
  for (const std::atomic<uint64_t>& entry : rings_[rank].entries) {
    latest = std::max(latest, entry.load(std::memory_order_seq_cst) >> kProtocolBits);
  }
  return latest;
}

void CallLedger::Reset() {
  for (int rank = 0; rank < ranks_; ++rank) {
    rings_[rank].calls = 0;
    for (std::atomic<uint64_t>& entry : rings_[rank].entries) {
      entry.store(0, std::memory_order_relaxed);
    }
  }
}

}  // namespace ltx
