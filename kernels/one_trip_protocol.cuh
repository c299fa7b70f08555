// The one-trip protocol shared by every collective kernel over staging lines (the idea of
// NCCL's LL protocol): each rank stores, per peer, the bytes that peer needs as 16-byte lines
// that carry their op's flag, into a staging area on that peer; each receiver polls its own
// staging area and unpacks the lines into its output. One NVLink trip, no entry or exit
// barrier: why that is safe (double-buffered staging, header lines) is argued in
// kernels/PROTOCOL.md.
//
// What a collective adds is its plan: which bytes go to which peer and where they land. `Plan`
// is a type with these const device members:
//   int64_t SentBytes(int target)            payload bytes this rank sends to `target`;
//   uint64_t Payload(int target, int64_t k)  payload k (bytes 8k .. 8k + 7, fewer at the end);
//   int64_t ReceivedBytes(int source)        payload bytes `source` sends this rank, equal to
//                                            `source`'s SentBytes(this rank);
//   void Store(int source, int64_t k, uint64_t payload)  unpacks payload k from `source`;
//   void CopyOwn()                           the block's part of this rank's own data (the
//                                            whole block calls it);
// and a `static constexpr bool kOwnPartIsSent`: true when this rank's own data is exactly what
// it sends every peer (the AllGather), so that SendLines stores each payload into the own
// output as well (Store(rank, k, payload)) and CopyOwn has nothing left to do for world >= 2.
// `Params` is a collective's kernel parameters, with at least: `SignalRegion* signals[]`,
// `OneTripLine* staging[]`, `DeviceErrorRecord* error_record`, `int32_t rank`, `int32_t
// world_size`, `uint64_t timeout_ns`, and an `AnnouncementOf(params, protocol)` overload.
#ifndef LTX_KERNELS_ONE_TRIP_PROTOCOL_CUH_
#define LTX_KERNELS_ONE_TRIP_PROTOCOL_CUH_

#include <cstdint>

#include "kernels/barrier.cuh"
#include "kernels/grid_dependency.cuh"
#include "kernels/memory_order.cuh"
#include "kernels/one_trip_layout.h"
#include "kernels/phase_clock.cuh"
#include "kernels/signal_layout.h"

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
// takes the items OneTripItem(round, b, ...) of every round, one line for one peer each.
template <typename Params, typename Plan>
__device__ void SendLines(const Params& p, const Plan& plan, const OpContext& op, uint32_t flag) {
  const int parity = static_cast<int>(op.number & 1);
  const int world = p.world_size;
  uint64_t header[kOneTripHeaderLines];
  PackHeader(AnnouncementOf(p, AnnouncedProtocol::kOneTrip), header);
  const int64_t max_lines = MostPeerLines(plan, p.rank, world, /*sending=*/true);
  for (int64_t round = 0;; ++round) {
    const OneTripTransfer transfer = OneTripTransferOf(
        OneTripItem(round, blockIdx.x, gridDim.x, threadIdx.x, blockDim.x), world);
    if (transfer.line >= max_lines) return;
    const int target = (p.rank + transfer.offset) % world;
    if (transfer.line >= OneTripLines(plan.SentBytes(target))) continue;
    const uint64_t payload = transfer.line < kOneTripHeaderLines
                                 ? header[transfer.line]
                                 : plan.Payload(target, transfer.line - kOneTripHeaderLines);
    StoreLine(p.staging[target] + OneTripLineIndex(parity, p.rank, world, transfer.line), payload,
              flag);
    // A plan whose own part is what it sends (the AllGather) stores each payload into its own
    // output too, once (with the peer one place on): the input is read once, and the own copy
    // costs no second trip to memory before the receives.
    if constexpr (Plan::kOwnPartIsSent) {
      if (transfer.offset == 1 && transfer.line >= kOneTripHeaderLines) {
        plan.Store(p.rank, transfer.line - kOneTripHeaderLines, payload);
      }
    }
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

// The body of a one-trip kernel: sends this rank's lines to every peer, copies its own data,
// checks every peer's header (block 0) and unpacks every peer's lines; the last block to finish
// advances this GPU's op number. Every block of the grid runs it. `clock` is NoPhaseClock in
// production, PhaseClock<OneTripPhase> for the phase timestamps (kernels/phase_clock.cuh). Launched
// early (programmatic dependent launch), a block first waits for the previous kernel of the
// stream and then lets the next one be scheduled; for ordinary launches both are no-ops.
template <typename Params, typename Plan, typename Clock = NoPhaseClock>
__device__ void RunOneTripOp(const Params& p, const Plan& plan, Clock clock = Clock()) {
  AwaitPriorGrids();
  AllowDependentLaunch();
  clock.BlockStart();
  SignalRegion* local = p.signals[p.rank];
  const OpContext op = {local, p.error_record, p.rank, local->last_op + 1, p.timeout_ns};
  const uint32_t flag = OneTripFlag(op.number);

  // An op abandoned on this GPU (a timeout, or teardown) leaves it inert until Reset: it sends
  // nothing, so no peer can take a later op of this GPU for its own.
  __shared__ bool abandoned;
  if (threadIdx.x == 0) abandoned = LoadRelaxedSystem(&local->abort) != 0u;
  __syncthreads();
  if (!abandoned) {  // Block-uniform: ReceiveHeaders synchronises block 0.
    if (p.world_size > 1) SendLines(p, plan, op, flag);
    // After the sends, so that it delays no line: the op word that tells a peer on the direct
    // path that this rank took the one-trip path (kernels/PROTOCOL.md).
    if (threadIdx.x < p.world_size) {
      PublishOpWord(p.signals[threadIdx.x], p.rank, op.number, AnnouncedProtocol::kOneTrip);
    }
    clock.Mark(OneTripPhase::kSent);
    // This rank's own data goes straight from input to output.
    plan.CopyOwn();
    clock.Mark(OneTripPhase::kOwnCopied);
    if (blockIdx.x == 0) {
      ReceiveHeaders(p, op, flag);
      clock.Mark(OneTripPhase::kHeadersChecked);
    }
    if (p.world_size > 1) ReceiveData(p, plan, op, flag, clock);
    clock.MarkArrived(OneTripPhase::kLastArrived);
    clock.Mark(OneTripPhase::kUnpacked);
  }

  // The last block to finish advances this GPU's op number (a single block needs no count).
  __syncthreads();
  if (threadIdx.x == 0 && (gridDim.x == 1 || atomicAdd(&local->blocks_done, 1u) == gridDim.x - 1)) {
    local->blocks_done = 0;
    local->last_op = op.number;
  }
  clock.BlockEnd(op.number);
}

}  // namespace ltx

#endif  // LTX_KERNELS_ONE_TRIP_PROTOCOL_CUH_
