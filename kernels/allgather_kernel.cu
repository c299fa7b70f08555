// The AllGather kernel of the direct path: entry barrier, direct stores of this rank's shard
// into every rank's output over NVLink, and the last-block-done exit barrier
// (kernels/PROTOCOL.md). The copy plan (kernels/copy_plan.h) decides which block stores which
// bytes.
#include "kernels/allgather_kernel.h"

#include <cstdint>

#include "kernels/barrier.cuh"
#include "kernels/block_copy.cuh"
#include "kernels/copy_plan.h"
#include "kernels/entry_announcement.h"
#include "kernels/memory_order.cuh"
#include "kernels/signal_layout.h"

namespace ltx {
namespace {

// Thread 0 of the block waits for `target`'s entry in this GPU's mailbox and checks it.
// Returns the target's output address, or 0 when the block must not store into it (timeout,
// abandoned op, or arguments that disagree, each already recorded).
__device__ uint64_t AwaitTargetEntry(const OpContext& op, int target,
                                     const EntryAnnouncement& mine) {
  const MailboxSlot& slot = op.local->mailbox[target];
  if (!AwaitFlag(op, BarrierPhase::kEntry, target, &slot.op)) return 0;
  const EntryAnnouncement theirs = LoadRelaxedSystemWords(&slot.announcement);
  if (!AgreesOrRecordMismatch(op, target, mine, theirs)) return 0;
  return theirs.output_address;
}

// Run by the last block of the grid to finish storing: tells every peer that this rank's data
// is in its output (unless the op was abandoned), then waits until every peer said the same
// for this rank's output. Thread t handles peer t.
__device__ void ExitBarrier(const AllGatherKernelParams& p, const OpContext& op) {
  const int peer = threadIdx.x;
  const bool abandoned = LoadRelaxedSystem(&op.local->abort) != 0u;
  if (peer < p.world_size) {
    if (!abandoned) StoreReleaseSystem(&p.signals[peer]->exit_flag[p.rank], op.number);
    AwaitFlag(op, BarrierPhase::kExit, peer, &op.local->exit_flag[peer]);
  }
  __syncthreads();
  if (threadIdx.x == 0) op.local->last_op = op.number;
}

__global__ void __launch_bounds__(kAllGatherThreads) AllGatherKernel(
    const AllGatherKernelParams p) {
  SignalRegion* local = p.signals[p.rank];
  __shared__ uint64_t target_output;
  __shared__ bool last_block;
  // The previous op on this GPU finished before this kernel started (stream order), so
  // last_op is stable for the whole grid until the last block advances it.
  const OpContext op = {local, p.error_record, p.rank, local->last_op + 1, p.timeout_ns};
  const EntryAnnouncement mine = AnnouncementOf(p);

  // An op abandoned on this GPU (a timeout, or teardown) leaves it inert until Reset: it
  // publishes nothing, so no peer can pair a later op of this GPU with its own.
  __shared__ bool abandoned;
  if (threadIdx.x == 0) abandoned = LoadRelaxedSystem(&local->abort) != 0u;
  __syncthreads();
  if (!abandoned) {
    // Entry: every block announces this rank to every peer, so that no block depends on
    // another block of its own grid being resident.
    if (threadIdx.x < p.world_size) {
      PublishEntry(p.signals[threadIdx.x], p.rank, op.number, mine);
    }

    const int lanes = LaneCount(gridDim.x, p.world_size);
    for (int lane = blockIdx.x; lane < lanes; lane += gridDim.x) {
      const int target = LaneTarget(lane, p.rank, p.world_size);
      if (threadIdx.x == 0) target_output = AwaitTargetEntry(op, target, mine);
      __syncthreads();
      const uint64_t output = target_output;
      __syncthreads();  // target_output is rewritten by the next lane.
      if (output == 0) continue;
      CopyRange(p.geometry, LaneRange(p.geometry, lane, lanes, p.world_size),
                static_cast<const uint8_t*>(p.input), reinterpret_cast<uint8_t*>(output));
    }
  }

  // Exit: the block's stores are ordered before thread 0's system fence by the barrier; the
  // fence and the counter form a release/acquire pair with the last block.
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    last_block = atomicAdd(&local->blocks_done, 1u) == gridDim.x - 1;
    if (last_block) {
      __threadfence_system();
      local->blocks_done = 0;
    }
  }
  __syncthreads();
  if (last_block) ExitBarrier(p, op);
}

}  // namespace

cudaError_t LaunchAllGatherKernel(const AllGatherKernelParams& params, int blocks,
                                  cudaStream_t stream) {
  AllGatherKernel<<<blocks, kAllGatherThreads, 0, stream>>>(params);
  return cudaGetLastError();
}

cudaError_t LoadAllGatherKernel() {
  cudaFuncAttributes attributes;
  return cudaFuncGetAttributes(&attributes, AllGatherKernel);
}

}  // namespace ltx
