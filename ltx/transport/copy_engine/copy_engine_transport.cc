// The copy-engine transport: per-pair copy streams ordered by ring-buffered entry events,
// completion flags in device or host-mapped memory, and an exit kernel with a deadline.
#include "ltx/transport/copy_engine/copy_engine_transport.h"

#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kernels/copy_engine/copy_engine_exit_kernel.h"
#include "kernels/wire/entry_announcement.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/cuda/driver_api.h"
#include "ltx/cuda/kept_blocks.h"
#include "ltx/runtime/device_error.h"
#include "ltx/status_macros.h"
#include "ltx/transport/copy_engine/strided_copy.h"

namespace ltx {
namespace {

// How long the destructor waits for the copy streams.
constexpr absl::Duration kDrainAtExit = absl::Seconds(5);
constexpr absl::Duration kDrainPoll = absl::Microseconds(50);
// How long Abandon waits for calls that are queueing a pair's copies (a few driver calls each).
constexpr absl::Duration kQueueingBound = absl::Seconds(1);

absl::Status Tagged(const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(status.message(), " (copy-engine transport)"));
}

}  // namespace

CopyEngineTransport::CopyEngineTransport(std::vector<int> devices,
                                         PFN_cuStreamBatchMemOp_v11070 batch_mem_op,
                                         PFN_cuStreamWriteValue32_v11070 write_value32)
    : devices_(std::move(devices)),
      batch_mem_op_(batch_mem_op),
      write_value32_(write_value32),
      streams_(devices_.size()),
      pairing_(static_cast<int>(devices_.size())) {}

absl::StatusOr<std::unique_ptr<CopyEngineTransport>> CopyEngineTransport::Create(
    const std::vector<int>& devices, bool peer_access) {
  LTX_ASSIGN_OR_RETURN(
      const PFN_cuStreamBatchMemOp_v11070 batch_mem_op,
      DriverFunction<PFN_cuStreamBatchMemOp_v11070>("cuStreamBatchMemOp"));
  LTX_ASSIGN_OR_RETURN(
      const PFN_cuStreamWriteValue32_v11070 write_value32,
      DriverFunction<PFN_cuStreamWriteValue32_v11070>("cuStreamWriteValue32"));
  std::unique_ptr<CopyEngineTransport> transport(
      new CopyEngineTransport(devices, batch_mem_op, write_value32));
  int previous = 0;
  LTX_RETURN_IF_ERROR(CudaStatus(cudaGetDevice(&previous), "cudaGetDevice"));
  absl::Status status;
  for (size_t rank = 0; rank < devices.size() && status.ok(); ++rank) {
    status = transport->CreateRank(static_cast<int>(rank));
  }
  if (status.ok()) status = transport->AllocateHostSignals();
  if (status.ok()) status = transport->AllocateDeviceSignals(peer_access);
  cudaSetDevice(previous);
  LTX_RETURN_IF_ERROR(status);
  LTX_ASSIGN_OR_RETURN(transport->max_pitch_, SmallestMaxPitch(devices));
  return transport;
}

absl::Status CopyEngineTransport::CreateRank(int rank) {
  const int device = devices_[rank];
  LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device), "cudaSetDevice"));
  RankStreams& streams = streams_[rank];
  for (size_t target = 0; target < devices_.size(); ++target) {
    if (static_cast<int>(target) == rank) continue;
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaStreamCreateWithFlags(&streams.to[target], cudaStreamNonBlocking), "cudaStreamCreate"));
  }
  LTX_RETURN_IF_ERROR(CudaStatus(
      cudaStreamCreateWithFlags(&streams.control, cudaStreamNonBlocking), "cudaStreamCreate"));
  for (cudaEvent_t& event : streams.entry) {
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate"));
  }
  return absl::OkStatus();
}

absl::Status CopyEngineTransport::AllocateHostSignals() {
  // Kept for the next Runtime rather than freed: cudaFreeHost would wait for every kernel of
  // the GPU, the user's too (ltx/cuda/kept_blocks.h). One size for every world size, so that
  // Runtimes of any size share the kept blocks.
  const size_t bytes = sizeof(CopyEngineHostSignals) * kMaxWorldSize;
  LTX_RETURN_IF_ERROR(CudaStatus(cudaGetDevice(&signals_device_), "cudaGetDevice"));
  LTX_ASSIGN_OR_RETURN(signals_block_,
                       AcquireBlock(KeptMemory::kPinnedHost, signals_device_, bytes));
  void* host = signals_block_.address;
  std::memset(host, 0, bytes);
  signals_ = static_cast<CopyEngineHostSignals*>(host);
  // Unified addressing: the GPUs reach host-mapped memory at its host address.
  void* device = nullptr;
  LTX_RETURN_IF_ERROR(
      CudaStatus(cudaHostGetDevicePointer(&device, host, 0), "cudaHostGetDevicePointer"));
  if (device != host) {
    return absl::FailedPreconditionError(
        "host-mapped memory has another address on the GPU (unified addressing is needed)");
  }
  return absl::OkStatus();
}

absl::Status CopyEngineTransport::AllocateDeviceSignals(bool peer_access) {
  for (size_t rank = 0; rank < devices_.size(); ++rank) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(devices_[rank]), "cudaSetDevice"));
    LTX_ASSIGN_OR_RETURN(
        KeptBlock block,
        AcquireBlock(KeptMemory::kDevice, devices_[rank], sizeof(CopyEngineDeviceSignals)));
    device_blocks_.push_back(block);
    flags_.push_back(peer_access ? &DeviceSignals(rank)->flags : &signals_[rank].flags);
  }
  return ClearDeviceSignals();
}

absl::Status CopyEngineTransport::ClearDeviceSignals() {
  for (size_t rank = 0; rank < device_blocks_.size(); ++rank) {
    const cudaStream_t stream = streams_[rank].control;
    LTX_RETURN_IF_ERROR(RankCudaStatus(
        cudaMemsetAsync(DeviceSignals(rank), 0, sizeof(CopyEngineDeviceSignals), stream),
        static_cast<int>(rank), "cudaMemsetAsync(copy-engine signals)"));
    LTX_RETURN_IF_ERROR(RankCudaStatus(cudaStreamSynchronize(stream), static_cast<int>(rank),
                                       "cudaStreamSynchronize(copy-engine signals)"));
  }
  return absl::OkStatus();
}

CopyEngineTransport::~CopyEngineTransport() {
  Abandon(absl::CancelledError("the copy-engine transport is being destroyed"));
  if (!Drain(absl::Now() + kDrainAtExit).ok()) free_signals_ = false;
  for (const RankStreams& streams : streams_) {
    for (cudaStream_t stream : streams.to) {
      if (stream != nullptr) cudaStreamDestroy(stream);
    }
    if (streams.control != nullptr) cudaStreamDestroy(streams.control);
    for (cudaEvent_t event : streams.entry) {
      if (event != nullptr) cudaEventDestroy(event);
    }
  }
  if (free_signals_) {
    GiveBackBlock(signals_device_, signals_block_);
    for (size_t rank = 0; rank < device_blocks_.size(); ++rank) {
      GiveBackBlock(devices_[rank], device_blocks_[rank]);
    }
  }
  cudaGetLastError();
}

absl::optional<DeviceErrorRecord> CopyEngineTransport::ReadError(int rank) const {
  return ReadDeviceError(&signals_[rank].record);
}

void CopyEngineTransport::Abandon(const absl::Status& error) {
  // No pair is queued from here on; then wait for those being queued (best effort too: past the
  // bound, an exit kernel may miss a copy still being queued).
  pairing_.Fail(error);
  pairing_.AwaitPairsQueued(absl::Now() + kQueueingBound).IgnoreError();
  int previous = 0;
  if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
  for (size_t rank = 0; rank < device_blocks_.size(); ++rank) {
    // Best effort: a write that cannot be queued leaves the exit kernels to their deadlines.
    if (cudaSetDevice(devices_[rank]) != cudaSuccess) continue;
    write_value32_(reinterpret_cast<CUstream>(streams_[rank].control),
                   reinterpret_cast<CUdeviceptr>(&DeviceSignals(rank)->control.abort), 1u,
                   CU_STREAM_WRITE_VALUE_DEFAULT);
  }
  if (previous >= 0) cudaSetDevice(previous);
  cudaGetLastError();
}

absl::Status CopyEngineTransport::Drain(absl::Time deadline) {
  for (size_t rank = 0; rank < streams_.size(); ++rank) {
    // The control stream too: an abort write still queued there must not land in signals that
    // the next Runtime has taken over.
    for (size_t target = 0; target <= streams_.size(); ++target) {
      const bool control = target == streams_.size();
      const cudaStream_t stream = control ? streams_[rank].control : streams_[rank].to[target];
      if (stream == nullptr) continue;
      for (;;) {
        const cudaError_t state = cudaStreamQuery(stream);
        if (state == cudaSuccess) break;
        if (state != cudaErrorNotReady) return CudaStatus(state, "cudaStreamQuery(copy stream)");
        if (absl::Now() >= deadline) {
          return absl::DeadlineExceededError(
              control ? absl::StrFormat("the control stream of rank %d is still busy", rank)
                      : absl::StrFormat("the copy stream from rank %d to rank %d is still busy",
                                        rank, target));
        }
        absl::SleepFor(kDrainPoll);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CopyEngineTransport::Reset(absl::Time deadline) {
  LTX_RETURN_IF_ERROR(Drain(deadline));
  std::memset(signals_, 0, sizeof(CopyEngineHostSignals) * devices_.size());
  LTX_RETURN_IF_ERROR(ClearDeviceSignals());
  pairing_.Reset();
  return absl::OkStatus();
}

absl::Status CopyEngineTransport::Enqueue(int rank, const CopyEngineCall& call,
                                          const RankBuffers& buffers, absl::Duration timeout,
                                          cudaEvent_t done) {
  // Reserve, first in EnqueueOp, returns an earlier failure.
  absl::Status status = EnqueueOp(rank, call, buffers, timeout);
  // Later calls fail, until Reset; the caller makes the error visible, then calls Abandon.
  if (!status.ok()) pairing_.Fail(status);
  if (done != nullptr) {
    const absl::Status recorded =
        RankCudaStatus(cudaEventRecord(done, buffers.stream), rank, "cudaEventRecord(done)");
    if (status.ok()) status = recorded;
  }
  return status;
}

absl::Status CopyEngineTransport::EnqueueOp(int rank, const CopyEngineCall& call,
                                            const RankBuffers& buffers, absl::Duration timeout) {
  LTX_ASSIGN_OR_RETURN(const uint64_t op, pairing_.Reserve(rank, timeout));
  const cudaEvent_t entry = streams_[rank].entry[CopyEnginePairing::SlotOf(op)];
  LTX_RETURN_IF_ERROR(
      RankCudaStatus(cudaEventRecord(entry, buffers.stream), rank, "cudaEventRecord(entry)"));
  const int device = devices_[rank];
  LTX_RETURN_IF_ERROR(RankCudaStatus(
      QueueStridedCopy(call.plan(rank, rank, buffers.input, buffers.output), device, device,
                       max_pitch_, buffers.stream),
      rank, "copy into its own output"));
  CopyEngineArrival mine;
  mine.announced = call.announcement;
  mine.input = reinterpret_cast<uint64_t>(buffers.input);
  LTX_ASSIGN_OR_RETURN(const std::vector<CopyEnginePartner> partners,
                       pairing_.Publish(rank, op, mine));
  absl::Status status;
  for (const CopyEnginePartner& peer : partners) {
    if (status.ok()) status = QueuePair(rank, mine, peer, op, call);
    pairing_.Paired(rank, peer.rank, op);
  }
  // The exit kernel follows even a failed pairing: copies of an earlier pair of this op may be
  // queued, and the stream must not go on before they landed (the abort that follows the
  // failure makes the kernel wait for those only).
  CopyEngineExitParams exit;
  exit.signals = DeviceSignals(rank);
  exit.flags = flags_[rank];
  exit.queued = &signals_[rank].queued;
  exit.record = &signals_[rank].record;
  exit.rank = rank;
  exit.world_size = static_cast<int32_t>(devices_.size());
  exit.op = op;
  exit.timeout_ns = static_cast<uint64_t>(absl::ToInt64Nanoseconds(timeout));
  exit.collective = call.collective;
  const absl::Status launched =
      RankCudaStatus(LaunchCopyEngineExit(exit, buffers.stream), rank, "exit kernel launch");
  return status.ok() ? launched : status;
}

absl::Status CopyEngineTransport::QueuePair(int rank, const CopyEngineArrival& mine,
                                            const CopyEnginePartner& peer, uint64_t op,
                                            const CopyEngineCall& call) {
  DeviceErrorRecord mismatch;
  if (MismatchRecord(mine.announced, peer.arrival.announced, rank, peer.rank, op, &mismatch)) {
    mismatch.collective = static_cast<uint32_t>(call.collective);
    return Tagged(DeviceErrorToStatus(mismatch));
  }
  // A device that gave up on an earlier op gets no more copies.
  for (int t : {rank, peer.rank}) {
    const absl::optional<DeviceErrorRecord> record = ReadError(t);
    if (record.has_value()) return Tagged(DeviceErrorToStatus(*record));
  }
  void* my_output = reinterpret_cast<void*>(mine.announced.output_address);
  void* their_output = reinterpret_cast<void*>(peer.arrival.announced.output_address);
  LTX_RETURN_IF_ERROR(QueueDirection(
      rank, {rank, peer.rank, reinterpret_cast<const void*>(mine.input), their_output}, op,
      call.plan));
  return QueueDirection(
      rank, {peer.rank, rank, reinterpret_cast<const void*>(peer.arrival.input), my_output}, op,
      call.plan);
}

absl::Status CopyEngineTransport::QueueDirection(int rank, const Direction& direction,
                                                 uint64_t op, CopyPlanner plan) {
  const int source_device = devices_[direction.source];
  const int slot = CopyEnginePairing::SlotOf(op);
  const cudaStream_t stream = streams_[direction.source].to[direction.target];
  const bool switch_device = direction.source != rank;
  cudaError_t error = switch_device ? cudaSetDevice(source_device) : cudaSuccess;
  if (error == cudaSuccess) {
    error = cudaStreamWaitEvent(stream, streams_[direction.source].entry[slot], 0);
  }
  if (error == cudaSuccess) {
    error = cudaStreamWaitEvent(stream, streams_[direction.target].entry[slot], 0);
  }
  if (error == cudaSuccess) {
    error = QueueStridedCopy(
        plan(direction.source, direction.target, direction.input, direction.output),
        source_device, devices_[direction.target], max_pitch_, stream);
  }
  // Messages are formatted on errors only: this runs on every call.
  absl::Status status;
  if (error != cudaSuccess) {
    status = RankCudaStatus(
        error, rank,
        absl::StrFormat("copy from rank %d to rank %d", direction.source, direction.target));
  } else {
    status = WriteFlags(rank, stream, &flags_[direction.target]->received[direction.source],
                        &flags_[direction.source]->sent[direction.target], op);
  }
  if (status.ok()) {
    // Before Paired, so before any abort flag that a failure sets (Abandon).
    __atomic_store_n(&signals_[direction.target].queued.received[direction.source], op,
                     __ATOMIC_RELEASE);
    __atomic_store_n(&signals_[direction.source].queued.sent[direction.target], op,
                     __ATOMIC_RELEASE);
  }
  if (switch_device) cudaSetDevice(devices_[rank]);
  return status;
}

absl::Status CopyEngineTransport::WriteFlags(int rank, cudaStream_t stream, uint64_t* received,
                                             uint64_t* sent, uint64_t op) {
  CUstreamBatchMemOpParams writes[2] = {};
  for (int i = 0; i < 2; ++i) {
    writes[i].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
    writes[i].writeValue.address = reinterpret_cast<CUdeviceptr>(i == 0 ? received : sent);
    writes[i].writeValue.value64 = op;
    writes[i].writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
  }
  const CUresult written = batch_mem_op_(stream, 2, writes, 0);
  if (written == CUDA_SUCCESS) return absl::OkStatus();
  return DriverStatus(written, absl::StrFormat("rank %d: cuStreamBatchMemOp", rank));
}

}  // namespace ltx
