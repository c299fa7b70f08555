// The host side of copy-engine calls captured into CUDA graphs (kernels/PROTOCOL.md, "Copy
// engines in CUDA graphs"): a graph's copies are memcpy nodes whose target addresses are fixed
// when the graph is captured, so the ranks exchange their output addresses once, at capture
// time. Every rank numbers its captured copy-engine calls alike (1, 2, ... after construction
// or Reset; ranks capture their calls in the same order), publishes its announcement (output
// address and its view of the shape) under that number, and waits, bounded by the call's
// timeout, until every peer published the same number. Replays then meet on the devices only.
#ifndef LTX_TRANSPORT_COPY_ENGINE_CAPTURE_EXCHANGE_H_
#define LTX_TRANSPORT_COPY_ENGINE_CAPTURE_EXCHANGE_H_

#include <cstdint>
#include <map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "kernels/wire/entry_announcement.h"

namespace ltx {

class CaptureExchange {
 public:
  // A table for `ranks` ranks (>= 1), empty.
  explicit CaptureExchange(int ranks);

  CaptureExchange(const CaptureExchange&) = delete;
  CaptureExchange& operator=(const CaptureExchange&) = delete;

  // Publishes `mine` as rank `rank`'s announcement for its next captured call and waits, at most
  // `timeout`, until every rank published its announcement for the same call. Returns every
  // rank's output address (index: rank). Errors: DeadlineExceeded naming the ranks that did not
  // publish in time; InvalidArgument naming the first peer whose announcement disagrees
  // (FindMismatch: generation, protocol, shape) and both values; the error given to Fail, while
  // waiting or before (then nothing is published). Once published, the call's number is used
  // up and the announcement stays for the peers, on errors too. Thread-safe; the calls of one
  // rank must not overlap.
  absl::StatusOr<std::vector<uint64_t>> Exchange(int rank, const EntryAnnouncement& mine,
                                                 absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);

  // Ends every wait in Exchange, and fails every later Exchange, with `error` (not OK) until
  // Reset; the first failure stands. Thread-safe.
  void Fail(const absl::Status& error) ABSL_LOCKS_EXCLUDED(mu_);

  // Forgets every announcement and the failure; numbers restart at 1. No rank may be in
  // Exchange. Thread-safe.
  void Reset() ABSL_LOCKS_EXCLUDED(mu_);

  // Calls whose announcements are still held (for the tests: a call is forgotten once every
  // rank read it). Thread-safe.
  int HeldCalls() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // The announcements of one captured call, by rank, and the ranks yet to read them.
  struct Call {
    std::vector<absl::optional<EntryAnnouncement>> entries;
    int readers_left = 0;
  };

  // Every rank's output address once all published call `number`; the missing ranks otherwise.
  absl::Status CheckCall(int rank, uint64_t number, const Call& call, const EntryAnnouncement& mine,
                         std::vector<uint64_t>* outputs) const;
  // Counts rank's read of call `number`; forgets the call after the last read.
  void Read(uint64_t number) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int ranks_;
  mutable absl::Mutex mu_;
  std::vector<uint64_t> next_number_ ABSL_GUARDED_BY(mu_);  // Per rank.
  std::map<uint64_t, Call> calls_ ABSL_GUARDED_BY(mu_);
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ltx

#endif  // LTX_TRANSPORT_COPY_ENGINE_CAPTURE_EXCHANGE_H_
