// The copy-engine path: cudaMemcpyPeerAsync copies ordered by events, with a host rendezvous
// per op.
#include "ltx/copy_engine_transport.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/strings/str_format.h"
#include "ltx/cuda_status.h"
#include "ltx/device_error.h"
#include "ltx/status_macros.h"

namespace ltx {

CopyEngineTransport::CopyEngineTransport(std::vector<int> devices, absl::Duration spin)
    : devices_(std::move(devices)), spin_(spin), local_copies_(devices_.size()) {}

absl::StatusOr<std::unique_ptr<CopyEngineTransport>> CopyEngineTransport::Create(
    const std::vector<int>& devices, absl::Duration spin) {
  std::unique_ptr<CopyEngineTransport> transport(new CopyEngineTransport(devices, spin));
  int previous = 0;
  LTX_RETURN_IF_ERROR(CudaStatus(cudaGetDevice(&previous), "cudaGetDevice"));
  absl::Status status;
  {
    absl::MutexLock lock(&transport->mu_);
    for (Slot& slot : transport->slots_) {
      for (size_t rank = 0; rank < devices.size() && status.ok(); ++rank) {
        status = CudaStatus(cudaSetDevice(devices[rank]), "cudaSetDevice");
        for (auto* events : {&slot.entry_events, &slot.copied_events}) {
          if (status.ok()) {
            status = CudaStatus(
                cudaEventCreateWithFlags(&(*events)[rank], cudaEventDisableTiming),
                "cudaEventCreate");
          }
        }
      }
    }
  }
  for (size_t rank = 0; rank < devices.size() && status.ok(); ++rank) {
    LocalCopy& local = transport->local_copies_[rank];
    status = CudaStatus(cudaSetDevice(devices[rank]), "cudaSetDevice");
    if (status.ok()) {
      status = CudaStatus(cudaStreamCreateWithFlags(&local.stream, cudaStreamNonBlocking),
                          "cudaStreamCreate");
    }
    for (cudaEvent_t* event : {&local.fork, &local.join}) {
      if (status.ok()) {
        status = CudaStatus(cudaEventCreateWithFlags(event, cudaEventDisableTiming),
                            "cudaEventCreate");
      }
    }
  }
  cudaSetDevice(previous);
  LTX_RETURN_IF_ERROR(status);
  return transport;
}

CopyEngineTransport::~CopyEngineTransport() {
  for (const LocalCopy& local : local_copies_) {
    if (local.stream != nullptr) cudaStreamDestroy(local.stream);
    if (local.fork != nullptr) cudaEventDestroy(local.fork);
    if (local.join != nullptr) cudaEventDestroy(local.join);
  }
  absl::MutexLock lock(&mu_);
  for (Slot& slot : slots_) {
    for (auto* events : {&slot.entry_events, &slot.copied_events}) {
      for (cudaEvent_t event : *events) {
        if (event != nullptr) cudaEventDestroy(event);
      }
    }
  }
}

void CopyEngineTransport::Reset() {
  absl::MutexLock lock(&mu_);
  next_op_ = {};
  for (Slot& slot : slots_) {
    slot.op = 0;
    slot.gave_up = absl::OkStatus();
    slot.arrivals = {};
  }
}

absl::Status CopyEngineTransport::AwaitAll(Slot& slot, uint64_t op, int rank,
                                           bool Arrival::*phase, absl::Duration timeout,
                                           const char* phase_name) {
  const int world = static_cast<int>(devices_.size());
  auto all_there = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (int t = 0; t < world; ++t) {
      if (!(slot.arrivals[t].*phase)) return false;
    }
    return true;
  };
  auto settled = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return slot.op == op && (!slot.gave_up.ok() || all_there());
  };
  // The ranks of an op usually call within microseconds of each other: poll for them before
  // sleeping, since a sleeping thread takes tens of microseconds to wake.
  const absl::Time start = absl::Now();
  const absl::Duration spin = std::min(spin_, timeout);
  while (!settled() && absl::Now() - start < spin) {
    mu_.Unlock();
    std::this_thread::yield();
    mu_.Lock();
  }
  const absl::Duration left = timeout - (absl::Now() - start);
  const bool in_time = settled() || mu_.AwaitWithTimeout(absl::Condition(&settled), left);
  if (slot.op != op) {
    return absl::AbortedError(absl::StrFormat(
        "all_gather #%d: the op was reset while rank %d waited (copy-engine transport)", op,
        rank));
  }
  if (!slot.gave_up.ok()) return slot.gave_up;
  if (in_time) return absl::OkStatus();
  int missing = 0;
  while (missing < world && slot.arrivals[missing].*phase) ++missing;
  slot.gave_up = absl::DeadlineExceededError(absl::StrFormat(
      "all_gather #%d: rank %d waited %s at %s for rank %d (copy-engine transport)", op, rank,
      absl::FormatDuration(timeout), phase_name, missing));
  return slot.gave_up;
}

absl::Status CopyEngineTransport::Enqueue(int rank, const AllGatherLayout& layout,
                                          const RankBuffers& buffers, absl::Duration timeout) {
  const int world = static_cast<int>(devices_.size());
  uint64_t op = 0;
  Slot* slot = nullptr;
  std::array<void*, kMaxWorldSize> outputs = {};
  {
    // Entry: announce this rank (its stream has reached the op), meet every other rank.
    absl::MutexLock lock(&mu_);
    op = ++next_op_[rank];
    slot = &slots_[op % kSlots];
    if (slot->op != op) {
      // First rank of this op here. A slot is reused only kSlots ops later, when every rank
      // has left the op that used it (a rank enters op n + 1 only after all ranks copied op n).
      slot->op = op;
      slot->gave_up = absl::OkStatus();
      slot->arrivals = {};
    }
    LTX_RETURN_IF_ERROR(CudaStatus(cudaEventRecord(slot->entry_events[rank], buffers.stream),
                                   "cudaEventRecord(entry)"));
    Arrival& mine = slot->arrivals[rank];
    mine.announced = MakeEntryAnnouncement(
        reinterpret_cast<uint64_t>(buffers.output), static_cast<int32_t>(layout.dtype),
        layout.row_bytes, layout.batch, layout.total_tokens, layout.counts_digest);
    mine.entered = true;
    LTX_RETURN_IF_ERROR(AwaitAll(*slot, op, rank, &Arrival::entered, timeout, "entry"));
    // Every rank compares every pair, so all of them find a disagreement and none waits at
    // the exit for a rank that gave up. The error reads as the kernels' does.
    for (int t = 0; t < world; ++t) {
      const EntryAnnouncement& theirs = slot->arrivals[t].announced;
      DeviceErrorRecord mismatch;
      if (MismatchRecord(mine.announced, theirs, rank, t, op, &mismatch)) {
        return DeviceErrorToStatus(mismatch);
      }
      outputs[t] = reinterpret_cast<void*>(theirs.output_address);
    }
  }

  // Copy this rank's shard into every output once its owner's earlier work is done: its own
  // on the side stream, the peers' in turn on the rank's stream.
  const ShardGeometry g = layout.GeometryOf(rank);
  const uint8_t* input = static_cast<const uint8_t*>(buffers.input);
  auto copy_shard = [&](int to_rank, cudaStream_t stream) {
    for (int64_t b = 0; b < g.batch && g.shard_bytes > 0; ++b) {
      uint8_t* to = static_cast<uint8_t*>(outputs[to_rank]) + b * g.output_batch_stride +
                    g.output_offset;
      const cudaError_t error = cudaMemcpyPeerAsync(
          to, devices_[to_rank], input + b * g.shard_bytes, devices_[rank], g.shard_bytes, stream);
      if (error != cudaSuccess) {
        return CudaStatus(error, absl::StrFormat("rank %d: cudaMemcpyPeerAsync to rank %d",
                                                 rank, to_rank));
      }
    }
    return absl::OkStatus();
  };
  const LocalCopy& local = local_copies_[rank];
  LTX_RETURN_IF_ERROR(
      CudaStatus(cudaEventRecord(local.fork, buffers.stream), "cudaEventRecord(fork)"));
  LTX_RETURN_IF_ERROR(
      CudaStatus(cudaStreamWaitEvent(local.stream, local.fork, 0), "cudaStreamWaitEvent(fork)"));
  LTX_RETURN_IF_ERROR(copy_shard(rank, local.stream));
  LTX_RETURN_IF_ERROR(
      CudaStatus(cudaEventRecord(local.join, local.stream), "cudaEventRecord(join)"));
  for (int step = 1; step < world; ++step) {
    const int peer = (rank + step) % world;
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaStreamWaitEvent(buffers.stream, slot->entry_events[peer], 0),
        "cudaStreamWaitEvent(entry)"));
    LTX_RETURN_IF_ERROR(copy_shard(peer, buffers.stream));
  }
  LTX_RETURN_IF_ERROR(
      CudaStatus(cudaStreamWaitEvent(buffers.stream, local.join, 0), "cudaStreamWaitEvent(join)"));

  // Exit: this rank's copies are enqueued; its stream then waits for everyone's.
  {
    absl::MutexLock lock(&mu_);
    LTX_RETURN_IF_ERROR(CudaStatus(cudaEventRecord(slot->copied_events[rank], buffers.stream),
                                   "cudaEventRecord(copied)"));
    slot->arrivals[rank].copied = true;
    LTX_RETURN_IF_ERROR(AwaitAll(*slot, op, rank, &Arrival::copied, timeout, "exit"));
  }
  for (int t = 0; t < world; ++t) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaStreamWaitEvent(buffers.stream, slot->copied_events[t], 0),
                                   "cudaStreamWaitEvent(copied)"));
  }
  return absl::OkStatus();
}

}  // namespace ltx
