// The AllGather kernel: entry barrier, direct stores of this rank's shard into every rank's
// output over NVLink, and the last-block-done exit barrier (DESIGN.md §5). The copy plan
// (kernels/copy_plan.h) decides which block stores which bytes.
#include "kernels/allgather_kernel.h"

#include <cstdint>

#include "kernels/barrier.cuh"
#include "kernels/copy_plan.h"
#include "kernels/memory_order.cuh"
#include "kernels/signal_layout.h"

namespace ltx {
namespace {

// Vectors in flight per thread in the body of a copy.
constexpr int kUnroll = 4;

template <typename Vector>
__device__ __forceinline__ Vector LoadUnit(const Vector* address) {
  return __ldg(address);
}
template <>
__device__ __forceinline__ int4 LoadUnit<int4>(const int4* address) {
  return LoadVectorStreaming(address);
}

template <typename Vector>
__device__ __forceinline__ void StoreUnit(Vector* address, const Vector& value) {
  *address = value;
}
template <>
__device__ __forceinline__ void StoreUnit<int4>(int4* address, const int4& value) {
  StoreVectorStreaming(address, value);
}

// The block copies `units` vectors; thread t takes units t, t + blockDim.x, ... (the same set
// the copy plan tests simulate), kUnroll of them loaded before any is stored.
template <typename Vector>
__device__ void CopyBody(Vector* dst, const Vector* src, int64_t units) {
  const int64_t stride = blockDim.x;
  int64_t unit = threadIdx.x;
  for (; unit + (kUnroll - 1) * stride < units; unit += kUnroll * stride) {
    Vector values[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) values[k] = LoadUnit(src + unit + k * stride);
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) StoreUnit(dst + unit + k * stride, values[k]);
  }
  for (; unit < units; unit += stride) StoreUnit(dst + unit, LoadUnit(src + unit));
}

__device__ void CopyBytes(uint8_t* dst, const uint8_t* src, int64_t bytes) {
  for (int64_t i = threadIdx.x; i < bytes; i += blockDim.x) dst[i] = src[i];
}

// The block copies one contiguous segment: single-byte head, widest co-aligned body, tail.
__device__ void CopySegment(uint8_t* dst, const uint8_t* src, int64_t bytes) {
  const CopySplit split =
      SplitForCopy(reinterpret_cast<uint64_t>(dst), reinterpret_cast<uint64_t>(src), bytes);
  CopyBytes(dst, src, split.head_bytes);
  uint8_t* body_dst = dst + split.head_bytes;
  const uint8_t* body_src = src + split.head_bytes;
  switch (split.width) {
    case 16:
      CopyBody(reinterpret_cast<int4*>(body_dst), reinterpret_cast<const int4*>(body_src),
               split.body_units);
      break;
    case 8:
      CopyBody(reinterpret_cast<uint64_t*>(body_dst),
               reinterpret_cast<const uint64_t*>(body_src), split.body_units);
      break;
    case 4:
      CopyBody(reinterpret_cast<uint32_t*>(body_dst),
               reinterpret_cast<const uint32_t*>(body_src), split.body_units);
      break;
    case 2:
      CopyBody(reinterpret_cast<uint16_t*>(body_dst),
               reinterpret_cast<const uint16_t*>(body_src), split.body_units);
      break;
    default:
      CopyBytes(body_dst, body_src, split.body_units);
      break;
  }
  const int64_t body_bytes = split.body_units * split.width;
  CopyBytes(body_dst + body_bytes, body_src + body_bytes, split.tail_bytes);
}

// Copies the lane's byte range of this rank's shard into `output` (the target's buffer).
__device__ void CopyLane(const AllGatherKernelParams& p, const ByteRange& range,
                         uint8_t* output) {
  const uint8_t* input = static_cast<const uint8_t*>(p.input);
  const int64_t end_slice = EndSlice(p.geometry, range);
  for (int64_t slice = FirstSlice(p.geometry, range); slice < end_slice; ++slice) {
    const Segment segment = SliceSegment(p.geometry, range, slice);
    CopySegment(output + segment.dst_offset, input + segment.src_offset, segment.bytes);
  }
}

// Thread 0 of the block waits for `target`'s entry in this GPU's mailbox and checks it.
// Returns the target's output address, or 0 when the block must not store into it (timeout,
// abandoned op, or arguments that disagree, each already recorded).
__device__ uint64_t AwaitTargetEntry(const AllGatherKernelParams& p, SignalRegion* local,
                                     int target, uint64_t epoch,
                                     const EntryAnnouncement& mine) {
  const MailboxSlot& slot = local->mailbox[target];
  if (!WaitOrRecordTimeout(&slot.epoch, epoch, BarrierPhase::kEntry, p.rank, target,
                           p.timeout_ns, local, p.error_record)) {
    return 0;
  }
  const volatile MailboxSlot& theirs = slot;
  uint64_t my_value = 0;
  uint64_t their_value = 0;
  const MismatchField field = FindMismatch(mine, theirs, &my_value, &their_value);
  if (field != MismatchField::kNone) {
    DeviceErrorRecord error = {};
    error.kind = static_cast<uint32_t>(DeviceErrorKind::kMismatch);
    error.field = static_cast<uint32_t>(field);
    error.rank = p.rank;
    error.peer = target;
    error.epoch = epoch;
    error.expected = my_value;
    error.seen = their_value;
    RecordDeviceError(local, p.error_record, error);
    return 0;
  }
  return theirs.output_address;
}

// Run by the last block of the grid to finish storing: tells every peer that this rank's data
// is in its output (unless the op was abandoned), then waits until every peer said the same
// for this rank's output. Thread t handles peer t.
__device__ void ExitBarrier(const AllGatherKernelParams& p, SignalRegion* local,
                            uint64_t epoch) {
  const int peer = threadIdx.x;
  const bool abandoned = LoadRelaxedSystem(&local->abort) != 0u;
  if (peer < p.world_size) {
    if (!abandoned) StoreReleaseSystem(&p.signals[peer]->exit_flag[p.rank], epoch);
    WaitOrRecordTimeout(&local->exit_flag[peer], epoch, BarrierPhase::kExit, p.rank, peer,
                        p.timeout_ns, local, p.error_record);
  }
  __syncthreads();
  if (threadIdx.x == 0) local->last_epoch = epoch;
}

__global__ void __launch_bounds__(kAllGatherThreads) AllGatherKernel(
    const AllGatherKernelParams p) {
  SignalRegion* local = p.signals[p.rank];
  __shared__ uint64_t target_output;
  __shared__ bool last_block;
  // The previous op on this GPU finished before this kernel started (stream order), so
  // last_epoch is stable for the whole grid until the last block advances it.
  const uint64_t epoch = local->last_epoch + 1;
  const EntryAnnouncement mine = {reinterpret_cast<uint64_t>(p.output),
                                  p.counts_digest,
                                  p.total_tokens,
                                  p.row_bytes,
                                  p.geometry.batch,
                                  p.dtype};

  // Entry: every block announces this rank to every peer, so that no block depends on another
  // block of its own grid being resident.
  if (threadIdx.x < p.world_size) PublishEntry(p.signals[threadIdx.x], p.rank, epoch, mine);

  const int lanes = LaneCount(gridDim.x, p.world_size);
  for (int lane = blockIdx.x; lane < lanes; lane += gridDim.x) {
    const int target = LaneTarget(lane, p.rank, p.world_size);
    if (threadIdx.x == 0) target_output = AwaitTargetEntry(p, local, target, epoch, mine);
    __syncthreads();
    const uint64_t output = target_output;
    __syncthreads();  // target_output is rewritten by the next lane.
    if (output == 0) continue;
    CopyLane(p, LaneRange(p.geometry, lane, lanes, p.world_size),
             reinterpret_cast<uint8_t*>(output));
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
  if (last_block) ExitBarrier(p, local, epoch);
}

}  // namespace

cudaError_t LaunchAllGatherKernel(const AllGatherKernelParams& params, int blocks,
                                  cudaStream_t stream) {
  AllGatherKernel<<<blocks, kAllGatherThreads, 0, stream>>>(params);
  return cudaGetLastError();
}

}  // namespace ltx
