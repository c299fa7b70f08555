// The one-trip AllGather kernel for small shards (the idea of NCCL's LL protocol): each rank
// stores its shard, 8 payload bytes and two copies of the op's flag per 16-byte line, into a
// staging area on every peer; each receiver polls its own staging area and unpacks the lines
// into its output. One NVLink trip, no entry or exit barrier: why that is safe (double-buffered
// staging) is argued in kernels/PROTOCOL.md.
#include <cstdint>

#include "kernels/allgather_kernel.h"
#include "kernels/barrier.cuh"
#include "kernels/block_copy.cuh"
#include "kernels/copy_plan.h"
#include "kernels/memory_order.cuh"
#include "kernels/one_trip_layout.h"
#include "kernels/signal_layout.h"

namespace ltx {
namespace {

// A thread's lines never decrease from round to round (its loops stop at the first line past
// the end), and every header line is sent and checked by block 0 (OneTripTransferOf).
static_assert(kAllGatherThreads % kOneTripRunLines == 0, "whole runs per block");
static_assert(kOneTripRunLines * (kMaxWorldSize - 1) <= kAllGatherThreads,
              "the header lines of every peer are items of block 0");

// Stores the line that carries `payload` and `flag` (MakeOneTripLine) as two 8-byte elements,
// each single-copy atomic and carrying its own flag.
__device__ __forceinline__ void StoreLine(OneTripLine* address, uint64_t payload, uint32_t flag) {
  const OneTripLine line = MakeOneTripLine(payload, flag);
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(address), "l"(line.low),
               "l"(line.high)
               : "memory");
}

// True, with the payload, once both words of the line carry `flag` (ReadOneTripLine).
__device__ __forceinline__ bool LoadLine(const OneTripLine* address, uint32_t flag,
                                         uint64_t* payload, uint32_t* seen) {
  OneTripLine line;
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];"
               : "=l"(line.low), "=l"(line.high)
               : "l"(address)
               : "memory");
  return ReadOneTripLine(line, flag, payload, seen);
}

// Waits for `line` (from `peer`) to carry `flag`, and returns its payload. On timeout abandons
// the op and records it; returns false then, or when the op was already abandoned.
// On its slow checks it looks whether `peer` took another path for this op
// (PeerTookOtherPath): then it records the mismatch, abandons the op and returns false.
__device__ bool AwaitLine(const OpContext& op, uint32_t flag, const OneTripLine* line, int peer,
                          uint64_t* payload) {
  return AwaitOrAbandon(
      op, BarrierPhase::kData, peer,
      [line, flag, payload](WaitProgress* progress) {
        uint32_t seen = 0;
        const bool arrived = LoadLine(line, flag, payload, &seen);
        progress->seen = seen;
        return arrived;
      },
      [&op, peer] { return PeerTookOtherPath(op, peer, AnnouncedProtocol::kOneTrip); });
}

// Payload `index` of a shard of `bytes` bytes at `input`: 8 bytes, fewer at the end.
__device__ uint64_t LoadPayload(const uint8_t* input, int64_t index, int64_t bytes) {
  const int64_t offset = index * kOneTripPayloadBytes;
  const int64_t count =
      bytes - offset < kOneTripPayloadBytes ? bytes - offset : kOneTripPayloadBytes;
  const uint8_t* from = input + offset;
  if (count == kOneTripPayloadBytes && (reinterpret_cast<uint64_t>(from) & 7) == 0) {
    return __ldg(reinterpret_cast<const unsigned long long*>(from));
  }
  uint64_t payload = 0;
  for (int64_t k = 0; k < count; ++k) payload |= static_cast<uint64_t>(from[k]) << (8 * k);
  return payload;
}

// Writes payload `index` of the shard with geometry `g` into `output`.
__device__ void StorePayload(uint64_t payload, int64_t index, const ShardGeometry& g,
                             uint8_t* output) {
  const int64_t bytes = FlatShardBytes(g);
  const int64_t offset = index * kOneTripPayloadBytes;
  const int64_t count =
      bytes - offset < kOneTripPayloadBytes ? bytes - offset : kOneTripPayloadBytes;
  const int64_t slice = offset / g.shard_bytes;
  const int64_t within = offset - slice * g.shard_bytes;
  uint8_t* to = output + slice * g.output_batch_stride + g.output_offset + within;
  if (count == kOneTripPayloadBytes && within + count <= g.shard_bytes &&
      (reinterpret_cast<uint64_t>(to) & 7) == 0) {
    *reinterpret_cast<uint64_t*>(to) = payload;
    return;
  }
  for (int64_t k = 0; k < count; ++k) {
    const int64_t flat = offset + k;
    const int64_t s = flat / g.shard_bytes;
    output[s * g.output_batch_stride + g.output_offset + (flat - s * g.shard_bytes)] =
        static_cast<uint8_t>(payload >> (8 * k));
  }
}

// Sends this rank's lines (header, then payload) to every peer (world >= 2): thread t of block b
// takes the items OneTripItem(round, b, ...) of every round, one line for one peer each.
__device__ void SendLines(const AllGatherKernelParams& p, const OpContext& op, uint32_t flag) {
  const int parity = static_cast<int>(op.number & 1);
  const int world = p.world_size;
  uint64_t header[kOneTripHeaderLines];
  PackHeader(AnnouncementOf(p, AnnouncedProtocol::kOneTrip), header);
  const int64_t my_bytes = FlatShardBytes(p.geometry);
  const int64_t my_lines = OneTripLines(my_bytes);
  for (int64_t round = 0;; ++round) {
    const OneTripTransfer transfer = OneTripTransferOf(
        OneTripItem(round, blockIdx.x, gridDim.x, threadIdx.x, blockDim.x), world);
    if (transfer.line >= my_lines) return;
    const uint64_t payload = transfer.line < kOneTripHeaderLines
                                 ? header[transfer.line]
                                 : LoadPayload(static_cast<const uint8_t*>(p.input),
                                               transfer.line - kOneTripHeaderLines, my_bytes);
    const int target = (p.rank + transfer.offset) % world;
    StoreLine(p.staging[target] + OneTripLineIndex(parity, p.rank, world, transfer.line), payload,
              flag);
  }
}

// Run by block 0: thread (k - 1) * kOneTripHeaderLines + i waits for header line i of the k-th
// peer, so every peer is waited for even when it has no data for this rank. On a disagreement
// the op is abandoned, which also releases threads waiting for data lines that the peer, with
// its other view of the shape, will never send.
__device__ void ReceiveHeaders(const AllGatherKernelParams& p, const OpContext& op, uint32_t flag) {
  __shared__ uint64_t values[kMaxWorldSize][kOneTripHeaderLines];
  __shared__ bool arrived[kMaxWorldSize][kOneTripHeaderLines];
  const int parity = static_cast<int>(op.number & 1);
  const int world = p.world_size;
  const int k = 1 + static_cast<int>(threadIdx.x) / kOneTripHeaderLines;
  const int i = static_cast<int>(threadIdx.x) % kOneTripHeaderLines;
  if (k < world) {
    const int source = (p.rank + world - k) % world;
    arrived[k][i] =
        AwaitLine(op, flag, p.staging[p.rank] + OneTripLineIndex(parity, source, world, i), source,
                  &values[k][i]);
  }
  __syncthreads();
  const int peer = 1 + static_cast<int>(threadIdx.x);
  if (peer >= world) return;
  bool all_arrived = true;
  for (int line = 0; line < kOneTripHeaderLines; ++line) all_arrived &= arrived[peer][line];
  const int source = (p.rank + world - peer) % world;
  if (all_arrived &&
      !AgreesOrRecordMismatch(op, source, AnnouncementOf(p, AnnouncedProtocol::kOneTrip),
                              UnpackHeader(values[peer]))) {
    StoreRelaxedSystem(&op.local->abort, 1u);
  }
}

// Receives every peer's data lines into this rank's output (world >= 2). Thread t of block b
// takes the same items as in SendLines, so it waits for exactly the lines that thread t of block
// b of each peer sends it: with equal grids, no block depends on another block of a peer's grid.
// Header lines are left to ReceiveHeaders.
__device__ void ReceiveData(const AllGatherKernelParams& p, const OpContext& op, uint32_t flag) {
  const int parity = static_cast<int>(op.number & 1);
  const int world = p.world_size;
  int64_t max_lines = 0;
  for (int source = 0; source < world; ++source) {
    const int64_t lines = OneTripLines(p.geometry.batch * p.token_counts[source] * p.row_bytes);
    if (source != p.rank && lines > max_lines) max_lines = lines;
  }
  for (int64_t round = 0;; ++round) {
    const OneTripTransfer transfer = OneTripTransferOf(
        OneTripItem(round, blockIdx.x, gridDim.x, threadIdx.x, blockDim.x), world);
    if (transfer.line >= max_lines) return;
    const int source = (p.rank + world - transfer.offset) % world;
    const ShardGeometry g = ShardGeometryOf(p.geometry.batch, p.row_bytes, p.total_tokens,
                                            p.token_counts[source], p.prefix_tokens[source]);
    if (transfer.line < kOneTripHeaderLines || transfer.line >= OneTripLines(FlatShardBytes(g))) {
      continue;
    }
    const OneTripLine* line =
        p.staging[p.rank] + OneTripLineIndex(parity, source, world, transfer.line);
    uint64_t payload = 0;
    if (!AwaitLine(op, flag, line, source, &payload)) return;
    StorePayload(payload, transfer.line - kOneTripHeaderLines, g, static_cast<uint8_t*>(p.output));
  }
}

__global__ void __launch_bounds__(kAllGatherThreads) OneTripKernel(const AllGatherKernelParams p) {
  SignalRegion* local = p.signals[p.rank];
  const OpContext op = {local, p.error_record, p.rank, local->last_op + 1, p.timeout_ns};
  const uint32_t flag = OneTripFlag(op.number);

  // An op abandoned on this GPU (a timeout, or teardown) leaves it inert until Reset: it sends
  // nothing, so no peer can take a later op of this GPU for its own.
  __shared__ bool abandoned;
  if (threadIdx.x == 0) abandoned = LoadRelaxedSystem(&local->abort) != 0u;
  __syncthreads();
  if (!abandoned) {  // Block-uniform: ReceiveHeaders synchronises block 0.
    if (p.world_size > 1) SendLines(p, op, flag);
    // After the sends, so that it delays no line: the op word that tells a peer on the direct
    // path that this rank took the one-trip path (kernels/PROTOCOL.md).
    if (threadIdx.x < p.world_size) {
      PublishOpWord(p.signals[threadIdx.x], p.rank, op.number, AnnouncedProtocol::kOneTrip);
    }
    // This rank's own shard goes straight from input to output.
    CopyRange(p.geometry, PartRange(FlatShardBytes(p.geometry), blockIdx.x, gridDim.x),
              static_cast<const uint8_t*>(p.input), static_cast<uint8_t*>(p.output));
    if (blockIdx.x == 0) ReceiveHeaders(p, op, flag);
    if (p.world_size > 1) ReceiveData(p, op, flag);
  }

  // The last block to finish advances this GPU's op number.
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(&local->blocks_done, 1u) == gridDim.x - 1) {
    local->blocks_done = 0;
    local->last_op = op.number;
  }
}

}  // namespace

cudaError_t LaunchOneTripKernel(const AllGatherKernelParams& params, int blocks,
                                cudaStream_t stream) {
  OneTripKernel<<<blocks, kAllGatherThreads, 0, stream>>>(params);
  return cudaGetLastError();
}

cudaError_t LoadOneTripKernel() {
  cudaFuncAttributes attributes;
  return cudaFuncGetAttributes(&attributes, OneTripKernel);
}

}  // namespace ltx
