// The one-trip AllGather kernel for small shards (the idea of NCCL's LL protocol): each rank
// stores its shard, 8 payload bytes and two copies of the op's flag per 16-byte line, into a
// staging area on every peer; each receiver polls its own staging area and unpacks the lines
// into its output. One NVLink trip, no entry or exit barrier.
//
// Why no entry barrier is needed. Staging is double-buffered by epoch parity. Rank r writes op
// e's lines into parity e % 2 of t's staging only while running op e, so r has finished op e-1
// (stream order). Whatever path op e-1 took, r could finish it only after t had started op e-1
// (one-trip: r waited for t's header lines of op e-1; direct: r waited for t's entry and exit),
// and t starts op e-1 only after its op e-2 kernel, the last reader of parity e % 2, finished.
// Every sender sends its header lines even with no tokens, so every receiver waits for every
// peer and the argument holds for all pairs. The receiver writes only its own output, so no
// exit barrier is needed either: when the kernel ends, every line has arrived and been
// unpacked. Flags are compared for equality with OneTripFlag(e); cleared staging holds 0.
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

__device__ __forceinline__ void StoreLine(OneTripLine* address, uint64_t payload,
                                          uint32_t flag) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(address),
               "r"(static_cast<uint32_t>(payload)), "r"(flag),
               "r"(static_cast<uint32_t>(payload >> 32)), "r"(flag)
               : "memory");
}

// True, with the payload, once both halves of the line carry `flag`.
__device__ __forceinline__ bool LoadLine(const OneTripLine* address, uint32_t flag,
                                         uint64_t* payload, uint32_t* seen) {
  uint32_t low, flag_low, high, flag_high;
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(low), "=r"(flag_low), "=r"(high), "=r"(flag_high)
               : "l"(address)
               : "memory");
  *payload = (static_cast<uint64_t>(high) << 32) | low;
  *seen = flag_low;
  return flag_low == flag && flag_high == flag;
}

// What a receiver waits with.
struct Receiver {
  const AllGatherKernelParams* p;
  SignalRegion* local;
  uint64_t epoch;
  uint32_t flag;
};

// Waits for `line` (from `peer`) to carry this op's flag. On timeout abandons the op and records
// it; returns false then, or when the op was already abandoned.
__device__ bool AwaitLine(const Receiver& r, const OneTripLine* line, int peer,
                          uint64_t* payload) {
  // Polls mostly the line itself: the abort flag and the clock are read every 32nd poll.
  constexpr uint32_t kPollsPerCheck = 32;
  uint32_t seen = 0;
  if (LoadLine(line, r.flag, payload, &seen)) return true;
  const uint64_t start_ns = GlobalTimerNs();
  for (uint32_t polls = 1;; ++polls) {
    if (LoadLine(line, r.flag, payload, &seen)) return true;
    if (polls % kPollsPerCheck != 0) continue;
    if (LoadRelaxedSystem(&r.local->abort) != 0u) return false;
    if (GlobalTimerNs() - start_ns > r.p->timeout_ns) {
      AbandonAfterTimeout(r.local, r.p->error_record, BarrierPhase::kData, r.p->rank, peer,
                          r.epoch, seen, start_ns);
      return false;
    }
  }
}

// Payload `index` of a shard of `bytes` bytes at `input`: 8 bytes, fewer at the end.
__device__ uint64_t LoadPayload(const uint8_t* input, int64_t index, int64_t bytes) {
  const int64_t offset = index * kOneTripPayloadBytes;
  const int64_t count = bytes - offset < kOneTripPayloadBytes ? bytes - offset
                                                                : kOneTripPayloadBytes;
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
  const int64_t count = bytes - offset < kOneTripPayloadBytes ? bytes - offset
                                                                : kOneTripPayloadBytes;
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

// Sends this rank's lines to every peer, copies its own shard, and receives every peer's lines.
__device__ void Exchange(const AllGatherKernelParams& p, const Receiver& receiver,
                         const uint64_t (&header)[kOneTripHeaderLines]) {
  SignalRegion* local = receiver.local;
  const uint64_t epoch = receiver.epoch;
  const int parity = static_cast<int>(epoch & 1);
  const int world = p.world_size;
  const int64_t thread = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t threads = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const uint8_t* input = static_cast<const uint8_t*>(p.input);
  uint8_t* output = static_cast<uint8_t*>(p.output);

  // Send: header and payload lines to every peer.
  const int64_t my_bytes = FlatShardBytes(p.geometry);
  const int64_t my_lines = OneTripLines(my_bytes);
  for (int64_t line = thread; line < my_lines; line += threads) {
    const uint64_t payload = line < kOneTripHeaderLines
                                 ? header[line]
                                 : LoadPayload(input, line - kOneTripHeaderLines, my_bytes);
    for (int k = 1; k < world; ++k) {
      const int target = (p.rank + k) % world;
      StoreLine(p.staging[target] + OneTripLineIndex(parity, p.rank, world, line), payload,
                receiver.flag);
    }
  }

  // This rank's own shard goes straight from input to output.
  CopyRange(p.geometry, PartRange(my_bytes, blockIdx.x, gridDim.x), input, output);

  // Receive. Every wait is for one line, and the waits of different lines run in different
  // threads, so the latency of polling staging memory is paid about once, not once per peer.
  //
  // Block 0 checks the headers: thread (k - 1) * kOneTripHeaderLines + i waits for line i of
  // the k-th peer. Every peer is thus waited for even when it has no data for this rank. On a
  // disagreement the op is abandoned, which also releases threads waiting for data lines that
  // the peer, with its other view of the shape, will never send.
  if (blockIdx.x == 0) {
    __shared__ uint64_t values[kMaxWorldSize][kOneTripHeaderLines];
    __shared__ bool arrived[kMaxWorldSize][kOneTripHeaderLines];
    const int k = 1 + static_cast<int>(threadIdx.x) / kOneTripHeaderLines;
    const int i = static_cast<int>(threadIdx.x) % kOneTripHeaderLines;
    if (k < world) {
      const int source = (p.rank + world - k) % world;
      arrived[k][i] = AwaitLine(
          receiver, p.staging[p.rank] + OneTripLineIndex(parity, source, world, i), source,
          &values[k][i]);
    }
    __syncthreads();
    const int peer = 1 + static_cast<int>(threadIdx.x);
    if (peer < world) {
      bool all_arrived = true;
      for (int line = 0; line < kOneTripHeaderLines; ++line) all_arrived &= arrived[peer][line];
      const int source = (p.rank + world - peer) % world;
      const EntryAnnouncement mine = {0, p.counts_digest, p.total_tokens, p.row_bytes,
                                      p.geometry.batch, p.dtype};
      const EntryAnnouncement theirs = {0,
                                        values[peer][4],
                                        static_cast<int64_t>(values[peer][3]),
                                        static_cast<int64_t>(values[peer][1]),
                                        static_cast<int64_t>(values[peer][2]),
                                        static_cast<int32_t>(values[peer][0])};
      if (all_arrived &&
          !AgreesOrRecordMismatch(mine, theirs, p.rank, source, epoch, local, p.error_record)) {
        StoreRelaxedSystem(&local->abort, 1u);
      }
    }
  }

  // Data: one index space over every peer's data lines, spread over all threads.
  int64_t data_lines[kMaxWorldSize] = {};
  int64_t items = 0;
  for (int k = 1; k < world; ++k) {
    const int source = (p.rank + world - k) % world;
    data_lines[k] = OneTripLines(p.geometry.batch * p.token_counts[source] * p.row_bytes) -
                    kOneTripHeaderLines;
    items += data_lines[k];
  }
  for (int64_t item = thread; item < items; item += threads) {
    int k = 1;
    int64_t index = item;
    while (index >= data_lines[k]) index -= data_lines[k++];
    const int source = (p.rank + world - k) % world;
    ShardGeometry g = p.geometry;
    g.shard_bytes = p.token_counts[source] * p.row_bytes;
    g.output_offset = p.prefix_tokens[source] * p.row_bytes;
    uint64_t payload = 0;
    const OneTripLine* line =
        p.staging[p.rank] + OneTripLineIndex(parity, source, world, kOneTripHeaderLines + index);
    if (!AwaitLine(receiver, line, source, &payload)) break;
    StorePayload(payload, index, g, output);
  }
}

__global__ void __launch_bounds__(kAllGatherThreads) OneTripKernel(
    const AllGatherKernelParams p) {
  SignalRegion* local = p.signals[p.rank];
  const uint64_t epoch = local->last_epoch + 1;
  const Receiver receiver = {&p, local, epoch, OneTripFlag(epoch)};

  const uint64_t header[kOneTripHeaderLines] = {static_cast<uint64_t>(p.dtype),
                                                static_cast<uint64_t>(p.row_bytes),
                                                static_cast<uint64_t>(p.geometry.batch),
                                                static_cast<uint64_t>(p.total_tokens),
                                                p.counts_digest};

  // An op abandoned on this GPU (a timeout, or teardown) leaves it inert until Reset: it sends
  // nothing, so no peer can take a later op of this GPU for its own.
  __shared__ bool abandoned;  // Block-uniform: Exchange synchronises block 0.
  if (threadIdx.x == 0) abandoned = LoadRelaxedSystem(&local->abort) != 0u;
  __syncthreads();
  if (!abandoned) Exchange(p, receiver, header);

  // The last block to finish advances this GPU's op number.
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(&local->blocks_done, 1u) == gridDim.x - 1) {
    local->blocks_done = 0;
    local->last_epoch = epoch;
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
