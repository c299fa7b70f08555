// The memory that GPUs of one Runtime share to coordinate the direct path: each GPU's signal
// region (entry mailboxes and exit flags that peers store into, plus this GPU's own op number,
// block counter and abort flag). Both the host runtime (allocation, clearing) and the kernels
// use these definitions, so they are plain standard-layout structs with fixed-width fields.
// Protocol: kernels/PROTOCOL.md.
#ifndef KERNELS_WIRE_SIGNAL_LAYOUT_H_
#define KERNELS_WIRE_SIGNAL_LAYOUT_H_

#include <cstdint>

#include "kernels/wire/entry_announcement.h"
#include "kernels/wire/host_device.h"

namespace ltx {

// Largest number of GPUs one Runtime spans (one NVLink/NVSwitch node).
inline constexpr int kMaxWorldSize = 8;

// Most tensors one op moves (ltx::kMaxTensors of the public surface, which equals it).
inline constexpr int kMaxOpTensors = 4;

// The outputs of tensors 1, 2, ... of a rank's op that moves several tensors (tensor 0's is the
// announcement's output_address). Stored by rank `s` into more_outputs[s] of every peer before
// its op word, like the announcement, and read with it; an op of one tensor leaves them alone.
struct MoreOutputs {
  uint64_t address[kMaxOpTensors - 1];
};

// What rank `s` tells rank `t` at the entry of an op: stored by `s` into slot [s] of `t`'s
// mailbox. The direct path stores the announcement first and `op` last with release semantics
// at system scope, so a reader that acquires an op word of op `n` sees the announcement of op
// `n`. The one-trip path stores only `op` (relaxed): its protocol is all a peer reads of it.
struct alignas(64) MailboxSlot {
  EntryAnnouncement announcement;
  uint64_t op;  // MailboxOpWord: the op number and the path; stored last.
};

// The op word of op `number` (< 2^56) taken on `protocol`: the protocol rides in the top byte,
// so that one single-copy-atomic load tells which op a peer announced and on which path.
LTX_HOST_DEVICE constexpr uint64_t MailboxOpWord(uint64_t number, AnnouncedProtocol protocol) {
  return (static_cast<uint64_t>(protocol) << 56) | number;
}

// The op number and the protocol of an op word.
LTX_HOST_DEVICE constexpr uint64_t MailboxOpNumber(uint64_t word) {
  return word & ((uint64_t{1} << 56) - 1);
}
LTX_HOST_DEVICE constexpr AnnouncedProtocol MailboxOpProtocol(uint64_t word) {
  return static_cast<AnnouncedProtocol>(word >> 56);
}

// One per GPU, in that GPU's device memory. Peers store into `mailbox` and `exit_flag` over
// NVLink; the other fields are touched only by this GPU's own kernels and by Runtime::Reset.
struct SignalRegion {
  MailboxSlot mailbox[kMaxWorldSize];
  // more_outputs[s]: rank s's outputs of tensors 1, 2, ... of a multi-tensor op (MoreOutputs).
  alignas(64) MoreOutputs more_outputs[kMaxWorldSize];
  // exit_flag[s] >= n once rank s finished storing op n's data into this GPU's output.
  alignas(64) uint64_t exit_flag[kMaxWorldSize];
  // store_claim[t]: this GPU's right to store into rank t's output, one word per target that
  // this GPU (the sender) and rank t (the owner of the output) both change with atomic max at
  // system scope: StoreClaim(n) once this GPU may store op n's data there, StoreRevoke(n) once
  // rank t gave up op n. Whoever comes second knows who came first (kernels/PROTOCOL.md).
  alignas(64) uint64_t store_claim[kMaxWorldSize];
  // Op number of the last op this GPU's kernel ran; the kernel of the next op uses it + 1.
  alignas(64) uint64_t last_op;
  // Op number of the last op whose exit barrier this GPU passed with nothing abandoned: every
  // peer had said its part was done. Equal to last_op while the last op was such an op; the
  // kernels that finish an op after its exchange (the FP8 decode) run only then (LastOpDone),
  // whatever stopped the Runtime since. Only the exit barrier advances it (not the one-trip
  // path).
  uint64_t last_done_op;
  // Blocks of the running op that have finished (last-block-done counter).
  uint32_t blocks_done;
  // Non-zero once a block of the running direct op announced it to the peers.
  uint32_t entry_published;
  // Non-zero once an error was claimed for this GPU's record (first error wins).
  uint32_t error_claimed;
  // Non-zero once a wait timed out: the op is abandoned and other waits stop early.
  uint32_t abort;
  // Non-zero when every pair of GPUs of the Runtime has native peer atomics (NVLink), which
  // store claims need; set by the host with the rest of the region.
  uint32_t peer_atomics;
};

// The values of a store_claim word for op `n`: claimed by the sender, revoked by the owner of
// the output. Ordered so that an atomic max keeps the later op, and for one op the revocation.
LTX_HOST_DEVICE inline constexpr uint64_t StoreClaim(uint64_t op) { return 2 * op; }
LTX_HOST_DEVICE inline constexpr uint64_t StoreRevoke(uint64_t op) { return 2 * op + 1; }

}  // namespace ltx

#endif  // KERNELS_WIRE_SIGNAL_LAYOUT_H_
