// The per-rank ledger of calls and their paths.
#include "ltx/call_ledger.h"

#include "absl/strings/str_format.h"

namespace ltx {
namespace {

constexpr int kProtocolBits = 2;
constexpr uint64_t kProtocolMask = (uint64_t{1} << kProtocolBits) - 1;
static_assert(static_cast<uint64_t>(Protocol::kCopyEngine) <= kProtocolMask,
              "a protocol fits the low bits of a slot");

constexpr const char* kDisagreement =
    "ranks disagree on the protocol of this op (their shapes lie on two sides of "
    "RuntimeOptions::copy_engine_min_bytes, or they passed different CallOptions::protocol)";

}  // namespace

CallLedger::CallLedger(int ranks) : ranks_(ranks), slots_(new Slot[ranks > 0 ? ranks : 1]) {}

uint64_t CallLedger::Record(int rank, Protocol protocol) {
  std::atomic<uint64_t>& word = slots_[rank].word;
  const uint64_t number = (word.load(std::memory_order_relaxed) >> kProtocolBits) + 1;
  word.store((number << kProtocolBits) | static_cast<uint64_t>(protocol),
             std::memory_order_release);
  return number;
}

CallLedger::Entry CallLedger::Latest(int rank) const {
  const uint64_t word = slots_[rank].word.load(std::memory_order_acquire);
  return Entry{word >> kProtocolBits, static_cast<Protocol>(word & kProtocolMask)};
}

absl::Status CallLedger::CheckCopyEnginePeers(int rank, uint64_t number) const {
  for (int peer = 0; peer < ranks_; ++peer) {
    if (peer == rank) continue;
    const Entry latest = Latest(peer);
    if (latest.number == number && latest.protocol != Protocol::kCopyEngine) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "rank %d issued call #%d on the copy engines, rank %d on the %s kernel: %s", rank,
          number, peer, ProtocolName(latest.protocol), kDisagreement));
    }
    if (latest.number > number) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "rank %d issued call #%d on the copy engines, but rank %d went on to call #%d without "
          "joining it, so it took a kernel path for call #%d: %s",
          rank, number, peer, latest.number, number, kDisagreement));
    }
  }
  return absl::OkStatus();
}

void CallLedger::Reset() {
  for (int rank = 0; rank < ranks_; ++rank) slots_[rank].word.store(0, std::memory_order_relaxed);
}

}  // namespace ltx
