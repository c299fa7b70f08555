// What a rank announces at the entry of an op, and how ranks compare announcements to detect
// that they disagree on the op's arguments. One definition for every transport: the direct
// kernel stores it into its peers' mailboxes (kernels/wire/signal_layout.h), the one-trip kernel
// sends it as header lines (kernels/wire/one_trip_layout.h), and the copy-engine transport compares
// it on the host (ltx/transport/copy_engine/copy_engine_transport.h). Protocol:
// kernels/PROTOCOL.md.
#ifndef KERNELS_WIRE_ENTRY_ANNOUNCEMENT_H_
#define KERNELS_WIRE_ENTRY_ANNOUNCEMENT_H_

#include <cstdint>

#include "kernels/wire/host_device.h"

namespace ltx {

// The path a rank took for an op, as it announces it; the values are those of ltx::Protocol
// (0 is "nothing announced", what cleared memory holds).
enum class AnnouncedProtocol : uint32_t {
  kNone = 0,
  kDirect = 1,
  kOneTrip = 2,
  kCopyEngine = 3,
};

// A rank's output, its view of the op's shape, the path it took and the Runtime's reset
// generation it was launched in (a CUDA graph keeps the generation it was captured in).
// Standard layout, 8-byte words only, so it can be stored into peer memory and loaded word by
// word; 56 bytes, so that a MailboxSlot (announcement and op word) is one 64-byte line.
struct EntryAnnouncement {
  // The buffer the peers access (valid on the rank's GPU and its peers): the rank's output,
  // which they store into; for the reductions its input, which they read.
  uint64_t output_address;
  uint64_t counts_digest;   // Digest of the token-count vector as the rank sees it.
  int64_t total_tokens;     // Sum of the token counts as the rank sees it.
  int64_t row_bytes;        // hidden * element size.
  int64_t batch;
  int32_t dtype;            // ltx::DataType as an integer.
  uint32_t protocol;        // AnnouncedProtocol.
  uint64_t generation;      // Successful Runtime::Reset calls before the op was launched.
};

// The announcement of a rank whose output is at `output_address`, from its view of the shape,
// its path and its reset generation. The one builder of announcements, for kernels and host
// alike. Thread-safe (pure).
LTX_HOST_DEVICE inline EntryAnnouncement MakeEntryAnnouncement(
    uint64_t output_address, int32_t dtype, int64_t row_bytes, int64_t batch, int64_t total_tokens,
    uint64_t counts_digest, AnnouncedProtocol protocol, uint64_t generation) {
  EntryAnnouncement announcement = {};
  announcement.output_address = output_address;
  announcement.counts_digest = counts_digest;
  announcement.total_tokens = total_tokens;
  announcement.row_bytes = row_bytes;
  announcement.batch = batch;
  announcement.dtype = dtype;
  announcement.protocol = static_cast<uint32_t>(protocol);
  announcement.generation = generation;
  return announcement;
}

// The argument two ranks disagreed on.
enum class MismatchField : uint32_t {
  kNone = 0,
  kDtype = 1,
  kRowBytes = 2,
  kBatch = 3,
  kTotalTokens = 4,
  kCounts = 5,
  kGeneration = 6,
  kProtocol = 7,
  // Not in an announcement's comparison: a copy-engine call captured into a CUDA graph stores
  // into the output addresses exchanged at capture, and checks them against the announced ones.
  kOutputAddress = 8,
};

// Compares a peer's announcement with this rank's; returns the first field that differs (and
// both values), or MismatchField::kNone (values untouched). The reset generation comes first
// (a rank of an earlier generation disagrees for that reason, whatever else differs), then the
// protocol, then the shape. Output addresses are not compared: every rank has its own.
// Thread-safe (pure).
LTX_HOST_DEVICE inline MismatchField FindMismatch(const EntryAnnouncement& mine,
                                                  const EntryAnnouncement& theirs,
                                                  uint64_t* my_value, uint64_t* their_value) {
  struct Check {
    MismatchField field;
    uint64_t mine;
    uint64_t theirs;
  };
  const Check checks[] = {
      {MismatchField::kGeneration, mine.generation, theirs.generation},
      {MismatchField::kProtocol, mine.protocol, theirs.protocol},
      {MismatchField::kDtype, static_cast<uint64_t>(mine.dtype),
       static_cast<uint64_t>(theirs.dtype)},
      {MismatchField::kRowBytes, static_cast<uint64_t>(mine.row_bytes),
       static_cast<uint64_t>(theirs.row_bytes)},
      {MismatchField::kBatch, static_cast<uint64_t>(mine.batch),
       static_cast<uint64_t>(theirs.batch)},
      {MismatchField::kTotalTokens, static_cast<uint64_t>(mine.total_tokens),
       static_cast<uint64_t>(theirs.total_tokens)},
      {MismatchField::kCounts, mine.counts_digest, theirs.counts_digest},
  };
  for (const Check& check : checks) {
    if (check.mine != check.theirs) {
      *my_value = check.mine;
      *their_value = check.theirs;
      return check.field;
    }
  }
  return MismatchField::kNone;
}

}  // namespace ltx

#endif  // KERNELS_WIRE_ENTRY_ANNOUNCEMENT_H_
