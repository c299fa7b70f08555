// The pull protocol of the reductions: the direct protocol's entry and exit barriers
// (kernels/protocols/direct_protocol.cuh) around loads instead of stores. Each rank announces
// its input; every block waits for every rank's announcement, reads through peer pointers what
// it reduces from every rank's input, and stores only into its own rank's output. The store
// claims become read claims: a rank claims its right to read a peer's input at entry, and reads
// its claims again once its block's loads are done, so that a rank whose peer gave the op up
// (and may have overwritten its input since) never reports the op as done
// (kernels/PROTOCOL.md, "The pull protocol").
//
// `Params` is as for the direct protocol (signals, error_record, rank, world_size, timeout_ns).
#ifndef KERNELS_PROTOCOLS_PULL_PROTOCOL_CUH_
#define KERNELS_PROTOCOLS_PULL_PROTOCOL_CUH_

#include <cstdint>

#include "kernels/device/barrier.cuh"
#include "kernels/device/memory_order.cuh"
#include "kernels/device/phase_clock.cuh"
#include "kernels/protocols/direct_protocol.cuh"
#include "kernels/wire/entry_announcement.h"
#include "kernels/wire/error_record.h"
#include "kernels/wire/signal_layout.h"

namespace ltx {

// Run by thread `peer` of a block once the block's loads of `peer`'s input are done (ordered
// before it by the block barrier the caller ran): whether this GPU still holds its read claim on
// `peer`'s input. When `peer` revoked it (it gave the op up, and its stream may since have
// overwritten its input), the op is abandoned with PeerGaveUpRecord at exit, so this rank never
// reports what it read as a result. The system fence orders the loads before the claim's load:
// a claim read before the revocation (in the word's order) means every load read the input as
// it was before `peer`'s kernel ended (kernels/PROTOCOL.md, "The pull protocol").
__device__ inline void CheckReadClaim(const OpContext& op, int peer) {
  __threadfence_system();
  const uint64_t claim = LoadRelaxedSystem(&op.local->store_claim[peer]);
  if (ShowsRevocation(op, peer, claim)) {
    AbandonOp(op, PeerGaveUpRecord(BarrierPhase::kExit, op.rank, peer, op.number));
  }
}

// The body of a pull-protocol kernel: advances this GPU's op number, announces `mine` (whose
// address field is this rank's input) to every peer and claims the right to read every peer's
// input; waits, thread t for rank t, for every rank's announcement and checks it; then, if
// every rank agreed and every claim holds, calls `reduce(inputs)`, which the whole block must
// call and which reads `inputs[s]` (rank s's input, a peer pointer) and stores into this rank's
// output; then reads its claims again (CheckReadClaim) and takes part in the exit barrier. An op
// where some rank's input is missing (a timeout, a disagreement, a revoked claim) is abandoned:
// this rank cannot produce its output without it.
template <typename Params, typename Reduce>
__device__ void RunPullOp(const Params& p, const EntryAnnouncement& mine, Reduce reduce) {
  NoPhaseClock clock;
  const OpContext op = NextOp(p);
  __shared__ bool abandoned;
  __shared__ uint64_t inputs[kMaxWorldSize];
  if (threadIdx.x == 0) abandoned = LoadRelaxedSystem(&op.local->abort) != 0u;
  __syncthreads();
  if (!abandoned) {
    // Every block announces and claims for itself, so that no block depends on another block
    // of its grid being resident; the repeated stores are harmless.
    // An input address may be 0: a rank with nothing to read (a zero count) may pass null.
    const bool in_world = threadIdx.x < p.world_size;
    const bool entered = !in_world || (PublishAndClaim(p, op, threadIdx.x, mine) &&
                                       AwaitTargetEntry(op, threadIdx.x, mine,
                                                        &inputs[threadIdx.x]));
    if (threadIdx.x == 0) op.local->entry_published = 1u;
    // The barrier also makes inputs[], written before it, visible to the whole block.
    const bool every_input = __syncthreads_and(entered) != 0;
    if (every_input) {
      reduce(inputs);
      __syncthreads();
      if (in_world && threadIdx.x != p.rank) CheckReadClaim(op, threadIdx.x);
    } else if (threadIdx.x == 0) {
      // Each missing input's error is recorded already (a disagreement without abandoning).
      AbandonRecordedOp(op);
    }
  }
  CountBlockAndExit(p, op, clock);
}

}  // namespace ltx

#endif  // KERNELS_PROTOCOLS_PULL_PROTOCOL_CUH_
