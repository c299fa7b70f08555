// The direct protocol shared by every collective kernel over peer stores: an entry barrier
// (each rank announces its output and arguments in every peer's mailbox, and waits for the
// announcement of each target before storing into it), the stores themselves (supplied by the
// collective), and the last-block-done exit barrier; around the stores, the store claims that
// keep a rank from storing into an output whose owner already gave the op up
// (kernels/PROTOCOL.md).
//
// Every collective advances the same op number (SignalRegion::last_op) and uses the same
// mailboxes and exit flags, so ops of different collectives interleave on one Runtime; what a
// rank announces (EntryAnnouncement) carries a digest of the op kind and shape, so ranks that
// call different ops at the same op number disagree at entry instead of pairing.
//
// `Params` is a collective's kernel parameters, with at least: `SignalRegion* signals[]`,
// `DeviceErrorRecord* error_record`, `int32_t rank`, `int32_t world_size`, `uint64_t
// timeout_ns`.
#ifndef KERNELS_PROTOCOLS_DIRECT_PROTOCOL_CUH_
#define KERNELS_PROTOCOLS_DIRECT_PROTOCOL_CUH_

#include <cstdint>

#include "kernels/device/barrier.cuh"
#include "kernels/device/memory_order.cuh"
#include "kernels/device/phase_clock.cuh"
#include "kernels/protocols/copy_plan.h"
#include "kernels/wire/entry_announcement.h"
#include "kernels/wire/phase_timestamps.h"
#include "kernels/wire/signal_layout.h"

namespace ltx {

// What a rank tells every peer at the entry of a direct op: its announcement (tensor 0's output
// among its fields) and, for an op of `tensors` > 1 tensors (Q, K and V, in an all-to-all or an
// AllGather), the outputs of the others, published beside it (SignalRegion::more_outputs). The
// peers agree on the tensor count through the announcement's digest before they read those.
struct DirectEntry {
  EntryAnnouncement announcement;
  int32_t tensors = 1;
  MoreOutputs more_outputs = {};
};

// What the rank of `p` (kernel parameters with `tensors` and `more_outputs`, and an
// AnnouncementOf) announces at the entry of a direct op: its announcement and its other
// tensors' outputs.
template <typename Params>
__device__ DirectEntry DirectEntryOf(const Params& p) {
  DirectEntry entry{AnnouncementOf(p, AnnouncedProtocol::kDirect)};
  entry.tensors = p.tensors;
  entry.more_outputs = p.more_outputs;
  return entry;
}

// A thread of the block waits for `target`'s entry in this GPU's mailbox and checks it.
// Returns whether the block may access the buffer `target` announced, and stores its address
// (the target's output; for the reductions its input) into *address, which may be 0 for a
// rank with no bytes there. False when it must not (timeout, abandoned op, arguments that
// disagree, or a store claim that `target` revoked while this GPU waited, each already
// recorded). A target on another path (its op word shows this op on the one-trip path, which
// publishes no announcement) never reaches the exit barrier: the op is abandoned.
__device__ inline bool AwaitTargetEntry(const OpContext& op, int target,
                                        const EntryAnnouncement& mine, uint64_t* address) {
  const MailboxSlot& slot = op.local->mailbox[target];
  uint64_t word = 0;
  const bool entered = AwaitOrAbandon(
      op, BarrierPhase::kEntry, target,
      [&slot, &op, &word](WaitProgress* progress) {
        word = LoadAcquireSystem(&slot.op);
        progress->seen = MailboxOpNumber(word);
        return progress->seen >= op.number;
      },
      [&op, target](DeviceErrorRecord* error) {
        return PeerGaveUp(op, BarrierPhase::kEntry, target, error);
      });
  if (!entered) return false;
  const auto my_protocol = static_cast<AnnouncedProtocol>(mine.protocol);
  if (MailboxOpProtocol(word) != my_protocol) {
    AbandonOp(op, ProtocolMismatchRecord(op, target, my_protocol, MailboxOpProtocol(word)));
    return false;
  }
  // The claim was taken before the wait, which may have lasted: read it again before the stores
  // it guards, beside the announcement (relaxed loads, in flight together: no round trip more).
  const uint64_t claim = LoadRelaxedSystem(&op.local->store_claim[target]);
  const EntryAnnouncement theirs = LoadRelaxedSystemWords(&slot.announcement);
  if (!AgreesOrRecordMismatch(op, target, mine, theirs)) return false;
  if (!HoldsClaim(op, target, claim)) return false;
  *address = theirs.output_address;
  return true;
}

// The entry of this rank into `target`'s op: announces `mine` (and `more`, the outputs of a
// multi-tensor op's other tensors; null: none) in `target`'s mailbox and claims this GPU's
// stores into `target`'s output. Returns whether this GPU may store there; when not (`target`
// already gave the op up), the op is abandoned with PeerGaveUpRecord.
template <typename Params>
__device__ bool PublishAndClaim(const Params& p, const OpContext& op, int target,
                                const EntryAnnouncement& mine,
                                const MoreOutputs* more = nullptr) {
  PublishEntry(p.signals[target], p.rank, op.number, mine, more);
  const bool may_store = target == p.rank || ClaimStores(op, target);
  if (!may_store) {
    AbandonOp(op, PeerGaveUpRecord(BarrierPhase::kEntry, p.rank, target, op.number));
  }
  return may_store;
}

// Run by warp 0 of the last block after its exit waits, `waited` being the lane's result (true
// for lanes that wait for no peer). If the op was abandoned on this GPU, by then or before,
// revokes the store claims of every peer (RevokeStores), so that none stores from then on, and
// records in the error record which peers had claimed before and may still be storing. Peers can
// have claimed only if this GPU announced the op (`published`); an op abandoned before its entry
// revokes only to release peers that wait for it.
//
// Every lane takes part in the decision: a lane whose wait gave up abandoned the op (AbandonOp)
// after other lanes may have finished theirs, so no single lane's look at `abort` would do.
// __syncwarp orders every lane's AbandonOp, error record included, before the loads and the
// storing_peers update below.
// Returns whether the op was abandoned, the same for every lane.
template <typename Params>
__device__ bool RevokePeersIfAbandoned(const Params& p, const OpContext& op, bool published,
                                       bool waited) {
  const int lane = threadIdx.x;
  __syncwarp();
  const bool abandoned =
      __any_sync(0xffffffffu, !waited || LoadRelaxedSystem(&op.local->abort) != 0u);
  if (!abandoned) return false;
  const bool storing =
      lane < p.world_size && lane != p.rank && RevokeStores(op, lane, p.signals[lane]) && published;
  const uint32_t storing_peers = __ballot_sync(0xffffffffu, storing);
  if (lane == 0 && storing_peers != 0u) {
    volatile uint32_t* recorded = &op.record->storing_peers;
    *recorded = *recorded | storing_peers;
    __threadfence_system();
  }
  return true;
}

// Run by one block: the last of the grid to finish storing, or the exit kernel of a copy-engine
// call captured into a CUDA graph (kernels/copy_engine/copy_engine_graph_kernel.h). Tells every
// peer that this rank's data is in its output (unless the op was abandoned), then waits until every
// peer said the same for this rank's output; if the op was abandoned by then, revokes the peers'
// store claims. Thread t waits for peer t. `clock` notes the exit flags stored and seen
// (NoPhaseClock: nothing).
//
// Thread 0 issues one system fence, then reads `abort` and stores every flag. The fence is the
// flags' release (the stores after it are relaxed) and, on the direct path, the acquire of the
// other blocks' stores and of their abandons, which thread 0 observed through the blocks_done
// count it read before it: one fence for all, where a release store per flag would fence again
// (kernels/PROTOCOL.md, exit).
template <typename Params, typename Clock>
__device__ void ExitBarrier(const Params& p, const OpContext& op, Clock& clock) {
  const int peer = threadIdx.x;
  const bool published = op.local->entry_published != 0u;
  if (threadIdx.x == 0) {
    __threadfence_system();
    if (LoadRelaxedSystem(&op.local->abort) == 0u) {
      for (int target = 0; target < p.world_size; ++target) {
        StoreRelaxedSystem(&p.signals[target]->exit_flag[p.rank], op.number);
      }
    }
    clock.Note(DirectPhase::kExitFlagsStored);
  }
  bool waited = true;
  if (peer < p.world_size) {
    waited = AwaitFlag(op, BarrierPhase::kExit, peer, &op.local->exit_flag[peer]);
    clock.Note(DirectPhase::kExitFlagsSeen);
  }
  const bool abandoned = threadIdx.x < 32 && RevokePeersIfAbandoned(p, op, published, waited);
  __syncthreads();
  if (threadIdx.x == 0) {
    op.local->entry_published = 0u;
    if (!abandoned) op.local->last_done_op = op.number;
    op.local->last_op = op.number;
  }
}

// Whether the last op of the GPU whose region is `local` passed its exit barrier with nothing
// abandoned (SignalRegion::last_done_op), read by a kernel after that op's on the same stream:
// then every peer is done with this rank's part of it (its stores into this rank's output, its
// loads of this rank's slot), whatever abort flag was set since, and this rank may finish its
// own output.
__device__ inline bool LastOpDone(const SignalRegion* local) {
  return local->last_done_op == local->last_op;
}

// The end of every block of a direct-protocol kernel (the whole block calls it once its work is
// done): the block counts itself, and the last block to do so runs the exit barrier. The
// block's accesses (stores into peers' outputs, loads of peers' inputs) are ordered before
// thread 0's system fence by the barrier; the fence and the count are a release that the last
// block's thread 0 acquires (its count, then the fence in ExitBarrier).
template <typename Params, typename Clock>
__device__ void CountBlockAndExit(const Params& p, const OpContext& op, Clock& clock) {
  __shared__ bool last_block;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    clock.Note(DirectPhase::kFenced);
    last_block = atomicAdd(&op.local->blocks_done, 1u) == gridDim.x - 1;
    // The last block's acquire of the other blocks' accesses is the fence in ExitBarrier.
    if (last_block) op.local->blocks_done = 0;
    clock.Note(DirectPhase::kCounted);
  }
  __syncthreads();
  if (last_block) ExitBarrier(p, op, clock);
}

// The body of a direct-protocol kernel: advances this GPU's op number, announces `mine` to every
// peer, and for each lane of this block (kernels/protocols/copy_plan.h: LaneCount, LaneTarget)
// whose target announced agreeing arguments calls `store_lane(lane, lanes, target, outputs)`
// with the target's outputs (`const uint64_t*`, one per tensor of the op, tensor 0's first),
// which the whole block must call and which stores this rank's data for that lane; then the
// exit barrier. `mine` is this rank's entry (its output addresses and the arguments the peers
// must agree on). `clock` is NoPhaseClock in production (it compiles to
// nothing), PhaseClock<DirectPhase> for the phase timestamps (kernels/device/phase_clock.cuh).
template <typename Params, typename StoreLane, typename Clock = NoPhaseClock>
__device__ void RunDirectOp(const Params& p, const DirectEntry& mine, StoreLane store_lane,
                            Clock clock = Clock()) {
  clock.BlockStart();
  // The outputs of the current lane's target, one per tensor.
  __shared__ uint64_t target_outputs[kMaxOpTensors];
  const OpContext op = NextOp(p);
  SignalRegion* local = op.local;

  // An op abandoned on this GPU (a timeout, or teardown) leaves it inert until Reset: it
  // publishes nothing, so no peer can pair a later op of this GPU with its own.
  __shared__ bool abandoned;
  if (threadIdx.x == 0) abandoned = LoadRelaxedSystem(&local->abort) != 0u;
  __syncthreads();
  // Per target: whether this GPU may store into its output (its store claim held).
  __shared__ bool may_store[kMaxWorldSize];
  if (!abandoned) {
    // Entry: every block announces this rank to every peer, so that no block depends on
    // another block of its own grid being resident, and claims its stores into the peers'
    // outputs; a peer that already gave the op up (revoked) gets nothing.
    // Two calls rather than one with a chosen pointer, so that `mine` stays in registers.
    if (threadIdx.x < p.world_size) {
      may_store[threadIdx.x] =
          mine.tensors > 1
              ? PublishAndClaim(p, op, threadIdx.x, mine.announcement, &mine.more_outputs)
              : PublishAndClaim(p, op, threadIdx.x, mine.announcement);
    }
    if (threadIdx.x == 0) local->entry_published = 1u;
    clock.Mark(DirectPhase::kEntryPublished);

    const int lanes = LaneCount(gridDim.x, p.world_size);
    for (int lane = blockIdx.x; lane < lanes; lane += gridDim.x) {
      const int target = LaneTarget(lane, p.rank, p.world_size);
      if (threadIdx.x == 0) {
        uint64_t announced = 0;
        const bool may_access = AwaitTargetEntry(op, target, mine.announcement, &announced);
        // 0 stores nothing: a refused target, or one whose output holds no bytes.
        target_outputs[0] = may_access ? announced : 0;
        // The announcement agreed, tensor count included: the other outputs were stored before
        // the op word this thread acquired (relaxed loads, as the announcement's).
        if (may_access && mine.tensors > 1) {
          const MoreOutputs more = LoadRelaxedSystemWords(&op.local->more_outputs[target]);
#pragma unroll
          for (int tensor = 1; tensor < kMaxOpTensors; ++tensor) {
            if (tensor < mine.tensors) target_outputs[tensor] = more.address[tensor - 1];
          }
        }
        if (lane == static_cast<int>(blockIdx.x)) clock.Note(DirectPhase::kTargetSeen);
      }
      // The barrier also makes may_store, written before it, visible to the whole block.
      __syncthreads();
      uint64_t outputs[kMaxOpTensors] = {};  // Constant indices only (TensorAddresses).
#pragma unroll
      for (int tensor = 0; tensor < kMaxOpTensors; ++tensor) {
        if (tensor < mine.tensors) outputs[tensor] = target_outputs[tensor];
      }
      if (!may_store[target]) outputs[0] = 0;
      __syncthreads();  // target_outputs is rewritten by the next lane.
      if (outputs[0] == 0) continue;
      if (lane == static_cast<int>(blockIdx.x)) clock.Mark(DirectPhase::kFirstStore);
      store_lane(lane, lanes, target, static_cast<const uint64_t*>(outputs));
    }
    clock.Mark(DirectPhase::kStoresDone);
  }

  CountBlockAndExit(p, op, clock);
  clock.BlockEnd(op.number);
}

}  // namespace ltx

#endif  // KERNELS_PROTOCOLS_DIRECT_PROTOCOL_CUH_
