// The one-trip protocol shared by every collective kernel over staging lines (the idea of
// NCCL's LL protocol): each rank stores, per peer, the bytes that peer needs as 16-byte lines
// that carry their op's flag, into a staging area on that peer; each receiver polls its own
// staging area and unpacks the lines into its output. One NVLink trip, no entry or exit
// barrier: why that is safe (double-buffered staging, header lines) is argued in
// kernels/PROTOCOL.md.
//
// What a collective adds is its plan: which bytes go to which peer and where they land. `Plan`
// is a type with these const device members:
//   int64_t SentBytes(int target)            payload bytes this rank sends to `target`; for
//                                            target == rank, the bytes of its own part (what
//                                            it keeps: stored into its own output);
//   uint64_t Payload(int target, int64_t k)  payload k (bytes 8k .. 8k + 7, fewer at the end),
//                                            target == rank included;
//   int64_t ReceivedBytes(int source)        payload bytes `source` sends this rank, equal to
//                                            `source`'s SentBytes(this rank);
//   void Store(int source, int64_t k, uint64_t payload)  unpacks payload k from `source`
//                                            (source == rank: of the own part);
// and a `static constexpr bool kOwnPartIsSent`: true when this rank's own part is exactly what
// it sends every peer (the AllGather), so that the own payload is the one just loaded for a
// peer; false when it is a part of its own (the all-to-all's own piece), loaded apart. Either
// way SendLines stores the own part beside the lines, spread over the same threads.
// `Params` is a collective's kernel parameters, with at least: `SignalRegion* signals[]`,
// `OneTripLine* staging[]`, `DeviceErrorRecord* error_record`, `int32_t rank`, `int32_t
// world_size`, `uint64_t timeout_ns`, and an `AnnouncementOf(params, protocol)` overload.
#ifndef KERNELS_PROTOCOLS_ONE_TRIP_PROTOCOL_CUH_
#define KERNELS_PROTOCOLS_ONE_TRIP_PROTOCOL_CUH_

#include <cstdint>

#include "kernels/device/barrier.cuh"
#include "kernels/device/grid_dependency.cuh"
#include "kernels/device/memory_order.cuh"
#include "kernels/device/select_by_index.h"
#include "kernels/device/phase_clock.cuh"
#include "kernels/wire/one_trip_layout.h"
#include "kernels/wire/signal_layout.h"

namespace ltx {

// Threads per block of every one-trip kernel.
inline constexpr int kOneTripThreads = 512;

// A thread's lines never decrease from round to round (its loops stop at the first line past
// the end), and every header line is sent and checked by block 0 (OneTripTransferOf).
static_assert(kOneTripThreads % kOneTripRunLines == 0, "whole runs per block");
static_assert(kOneTripRunLines * (kMaxWorldSize - 1) <= kOneTripThreads,
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
// the op and records it; returns false then, or when the op was already abandoned. On its slow
// checks it looks whether `peer` took another path for this op (PeerTookOtherPath): then it
// records the mismatch, abandons the op and returns false.
__device__ inline bool AwaitLine(const OpContext& op, uint32_t flag, const OneTripLine* line,
                                 int peer, uint64_t* payload) {
  return AwaitOrAbandon(
      op, BarrierPhase::kData, peer,
      [line, flag, payload](WaitProgress* progress) {
        uint32_t seen = 0;
        const bool arrived = LoadLine(line, flag, payload, &seen);
        progress->seen = seen;
        return arrived;
      },
      [&op, peer](DeviceErrorRecord* error) {
        return PeerTookOtherPath(op, peer, AnnouncedProtocol::kOneTrip, error);
      });
}

// The most lines that one rank sends to (`sending`) or receives from one peer, by the plan.
template <typename Plan>
__device__ int64_t MostPeerLines(const Plan& plan, int rank, int world, bool sending) {
  int64_t most = 0;
  for (int offset = 1; offset < world; ++offset) {
    const int64_t lines =
        OneTripLines(sending ? plan.SentBytes((rank + offset) % world)
                             : plan.ReceivedBytes((rank + world - offset) % world));
    if (lines > most) most = lines;
  }
  return most;
}

// Sends this rank's lines (header, then payload) to every peer (world >= 2): thread t of block b
// takes the items OneTripItem(round, b, ...) of every round, one line for one peer each. The
// item of line k + kOneTripHeaderLines for the peer one place on also stores payload k of this
// rank's own part into its own output (own payloads past that peer's lines are items of it as
// well): the own part costs no pass of its own, and the AllGather reads its input once.
template <typename Params, typename Plan>
__device__ void SendLines(const Params& p, const Plan& plan, const OpContext& op, uint32_t flag) {
  const int parity = static_cast<int>(op.number & 1);
  const int world = p.world_size;
  uint64_t header[kOneTripHeaderLines];
  PackHeader(AnnouncementOf(p, AnnouncedProtocol::kOneTrip), header);
  const int64_t own_lines = OneTripLines(plan.SentBytes(p.rank));
  const int64_t peer_lines = MostPeerLines(plan, p.rank, world, /*sending=*/true);
  const int64_t max_lines = own_lines > peer_lines ? own_lines : peer_lines;
  for (int64_t round = 0;; ++round) {
    const OneTripTransfer transfer = OneTripTransferOf(
        OneTripItem(round, blockIdx.x, gridDim.x, threadIdx.x, blockDim.x), world);
    if (transfer.line >= max_lines) return;
    const int target = (p.rank + transfer.offset) % world;
    const int64_t index = transfer.line - kOneTripHeaderLines;
    const bool send = transfer.line < OneTripLines(plan.SentBytes(target));
    // For the AllGather, own implies send (its own part is what every peer gets).
    const bool own = transfer.offset == 1 && index >= 0 && transfer.line < own_lines;
    // Both loads before either store, so that they are in flight together.
    uint64_t payload = 0;
    if (send) {
      payload = index < 0 ? SelectByIndex(header, transfer.line) : plan.Payload(target, index);
    }
    uint64_t own_payload = payload;
    if constexpr (!Plan::kOwnPartIsSent) {
      if (own) own_payload = plan.Payload(p.rank, index);
    }
    if (send) {
      StoreLine(p.staging[target] + OneTripLineIndex(parity, p.rank, world, transfer.line),
                payload, flag);
    }
    if (own) plan.Store(p.rank, index, own_payload);
  }
}

// A rank without peers (world 1) sends no lines: the grid stores its own part payload by
// payload, one per thread and round.
template <typename Plan>
__device__ void StoreOwnPartAlone(const Plan& plan, int rank) {
  const int64_t payloads = OneTripLines(plan.SentBytes(rank)) - kOneTripHeaderLines;
  const int64_t threads = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < payloads;
       k += threads) {
    plan.Store(rank, k, plan.Payload(rank, k));
  }
}

// Run by block 0: thread (k - 1) * kOneTripHeaderLines + i waits for header line i of the k-th
// peer, so every peer is waited for even when it has no data for this rank. On a disagreement
// the op is abandoned, which also releases threads waiting for data lines that the peer, with
// its other view of the shape, will never send.
template <typename Params>
__device__ void ReceiveHeaders(const Params& p, const OpContext& op, uint32_t flag) {
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
template <typename Params, typename Plan, typename Clock>
__device__ void ReceiveData(const Params& p, const Plan& plan, const OpContext& op, uint32_t flag,
                            Clock& clock) {
  const int parity = static_cast<int>(op.number & 1);
  const int world = p.world_size;
  const int64_t max_lines = MostPeerLines(plan, p.rank, world, /*sending=*/false);
  for (int64_t round = 0;; ++round) {
    const OneTripTransfer transfer = OneTripTransferOf(
        OneTripItem(round, blockIdx.x, gridDim.x, threadIdx.x, blockDim.x), world);
    if (transfer.line >= max_lines) return;
    const int source = (p.rank + world - transfer.offset) % world;
    if (transfer.line < kOneTripHeaderLines ||
        transfer.line >= OneTripLines(plan.ReceivedBytes(source))) {
      continue;
    }
    const OneTripLine* line =
        p.staging[p.rank] + OneTripLineIndex(parity, source, world, transfer.line);
    uint64_t payload = 0;
    if (!AwaitLine(op, flag, line, source, &payload)) return;
    clock.Arrived();
    plan.Store(source, transfer.line - kOneTripHeaderLines, payload);
  }
}

// The body of a one-trip kernel: sends this rank's lines to every peer and stores its own part,
// checks every peer's header (block 0) and unpacks every peer's lines. Every block of the grid
// runs it. `clock` is NoPhaseClock in production, PhaseClock<OneTripPhase> for the phase
// timestamps (kernels/device/phase_clock.cuh). Launched early (programmatic dependent launch), a
// block first waits for the previous kernel of the stream and then lets the next one be scheduled;
// for ordinary launches both are no-ops.
//
// The op number: every thread reads last_op when its block starts; thread 0 counts the block in
// blocks_done after the block's first barrier (so after every thread of the block has read it)
// and its sends, and the block that counts last advances last_op when it ends. The next op on
// this GPU starts after this grid has finished (stream order), so no thread of this op can read
// the advanced value. The count's result is needed only at the end, so the atomic's round trip
// overlaps the receives instead of ending the op.
template <typename Params, typename Plan, typename Clock = NoPhaseClock>
__device__ void RunOneTripOp(const Params& p, const Plan& plan, Clock clock = Clock()) {
  AwaitPriorGrids();
  AllowDependentLaunch();
  clock.BlockStart();
  const OpContext op = NextOp(p);
  SignalRegion* local = op.local;
  const uint32_t flag = OneTripFlag(op.number);

  // An op abandoned on this GPU (a timeout, or teardown) leaves it inert until Reset: it sends
  // nothing, so no peer can take a later op of this GPU for its own.
  __shared__ bool abandoned;
  if (threadIdx.x == 0) abandoned = LoadRelaxedSystem(&local->abort) != 0u;
  __syncthreads();
  // With peers, the own part is stored beside the lines.
  if (!abandoned && p.world_size > 1) SendLines(p, plan, op, flag);
  // Blocks counted before this one (thread 0 only), taken after the sends so that it delays no
  // line; read at the end.
  const uint32_t counted_before =
      threadIdx.x == 0 && gridDim.x > 1 ? atomicAdd(&local->blocks_done, 1u) : 0u;
  if (!abandoned) {  // Block-uniform: ReceiveHeaders synchronises block 0.
    // After the sends, so that it delays no line: the op word that tells a peer on the direct
    // path that this rank took the one-trip path (kernels/PROTOCOL.md).
    if (threadIdx.x < p.world_size) {
      PublishOpWord(p.signals[threadIdx.x], p.rank, op.number, AnnouncedProtocol::kOneTrip);
    }
    clock.Mark(OneTripPhase::kSent);
    if (p.world_size == 1) StoreOwnPartAlone(plan, p.rank);
    clock.Mark(OneTripPhase::kOwnCopied);
    if (blockIdx.x == 0) {
      ReceiveHeaders(p, op, flag);
      clock.Mark(OneTripPhase::kHeadersChecked);
    }
    if (p.world_size > 1) ReceiveData(p, plan, op, flag, clock);
    clock.MarkArrived(OneTripPhase::kLastArrived);
    clock.Mark(OneTripPhase::kUnpacked);
  }
  if (threadIdx.x == 0 && counted_before == gridDim.x - 1) {
    local->blocks_done = 0;
    local->last_op = op.number;
  }
  __syncthreads();  // Every Mark before BlockEnd.
  clock.BlockEnd(op.number);
}

}  // namespace ltx

#endif  // KERNELS_PROTOCOLS_ONE_TRIP_PROTOCOL_CUH_
