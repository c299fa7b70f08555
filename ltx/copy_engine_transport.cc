// The copy-engine transport: per-pair copy streams ordered by ring-buffered entry events,
// completion flags in host-mapped memory, and an exit kernel with a deadline.
#include "ltx/copy_engine_transport.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kernels/copy_engine_exit_kernel.h"
#include "kernels/entry_announcement.h"
#include "ltx/cuda_status.h"
#include "ltx/kept_pinned_blocks.h"
#include "ltx/device_error.h"
#include "ltx/driver_api.h"
#include "ltx/strided_copy.h"
#include "ltx/status_macros.h"

namespace ltx {
namespace {

// How long the destructor waits for the copy streams.
constexpr absl::Duration kDrainAtExit = absl::Seconds(5);
constexpr absl::Duration kDrainPoll = absl::Microseconds(50);

absl::Status Tagged(const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(status.message(), " (copy-engine transport)"));
}

}  // namespace

CopyEngineTransport::CopyEngineTransport(std::vector<int> devices,
                                         PFN_cuStreamWriteValue64_v11070 write_value)
    : devices_(std::move(devices)),
      write_value_(write_value),
      streams_(devices_.size()),
      pairing_(static_cast<int>(devices_.size())) {}

absl::StatusOr<std::unique_ptr<CopyEngineTransport>> CopyEngineTransport::Create(
    const std::vector<int>& devices) {
  LTX_ASSIGN_OR_RETURN(
      const PFN_cuStreamWriteValue64_v11070 write_value,
      DriverFunction<PFN_cuStreamWriteValue64_v11070>("cuStreamWriteValue64"));
  std::unique_ptr<CopyEngineTransport> transport(new CopyEngineTransport(devices, write_value));
  int previous = 0;
  LTX_RETURN_IF_ERROR(CudaStatus(cudaGetDevice(&previous), "cudaGetDevice"));
  absl::Status status;
  for (size_t rank = 0; rank < devices.size() && status.ok(); ++rank) {
    status = transport->CreateRank(static_cast<int>(rank));
  }
  if (status.ok()) status = transport->AllocateSignals();
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
  for (cudaEvent_t& event : streams.entry) {
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate"));
  }
  return absl::OkStatus();
}

absl::Status CopyEngineTransport::AllocateSignals() {
  // Kept for the next Runtime rather than freed: cudaFreeHost would wait for every kernel of
  // the GPU, the user's too (ltx/kept_pinned_blocks.h). One size for every world size, so that
  // Runtimes of any size share the kept blocks.
  const size_t bytes = sizeof(CopyEngineSignals) * kMaxWorldSize;
  LTX_RETURN_IF_ERROR(CudaStatus(cudaGetDevice(&signals_device_), "cudaGetDevice"));
  LTX_ASSIGN_OR_RETURN(signals_block_, AcquirePinnedBlock(signals_device_, bytes));
  void* host = signals_block_.host;
  std::memset(host, 0, bytes);
  signals_ = static_cast<CopyEngineSignals*>(host);
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

CopyEngineTransport::~CopyEngineTransport() {
  if (signals_ != nullptr) Abandon();
  if (!Drain(absl::Now() + kDrainAtExit).ok()) free_signals_ = false;
  for (const RankStreams& streams : streams_) {
    for (cudaStream_t stream : streams.to) {
      if (stream != nullptr) cudaStreamDestroy(stream);
    }
    for (cudaEvent_t event : streams.entry) {
      if (event != nullptr) cudaEventDestroy(event);
    }
  }
  if (signals_ != nullptr && free_signals_) GiveBackPinnedBlock(signals_device_, signals_block_);
  cudaGetLastError();
}

absl::optional<DeviceErrorRecord> CopyEngineTransport::ReadError(int rank) const {
  return ReadDeviceError(&signals_[rank].record);
}

void CopyEngineTransport::Abandon() {
  for (size_t rank = 0; rank < devices_.size(); ++rank) {
    __atomic_store_n(&signals_[rank].control.abort, 1u, __ATOMIC_SEQ_CST);
  }
}

absl::Status CopyEngineTransport::Drain(absl::Time deadline) {
  for (size_t rank = 0; rank < streams_.size(); ++rank) {
    for (size_t target = 0; target < streams_.size(); ++target) {
      const cudaStream_t stream = streams_[rank].to[target];
      if (stream == nullptr) continue;
      for (;;) {
        const cudaError_t state = cudaStreamQuery(stream);
        if (state == cudaSuccess) break;
        if (state != cudaErrorNotReady) return CudaStatus(state, "cudaStreamQuery(copy stream)");
        if (absl::Now() >= deadline) {
          return absl::DeadlineExceededError(absl::StrFormat(
              "the copy stream from rank %d to rank %d is still busy", rank, target));
        }
        absl::SleepFor(kDrainPoll);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CopyEngineTransport::Reset(absl::Time deadline) {
  LTX_RETURN_IF_ERROR(Drain(deadline));
  std::memset(signals_, 0, sizeof(CopyEngineSignals) * devices_.size());
  pairing_.Reset();
  return absl::OkStatus();
}

absl::Status CopyEngineTransport::Enqueue(int rank, const CopyEngineCall& call,
                                          const RankBuffers& buffers, absl::Duration timeout,
                                          cudaEvent_t done) {
  absl::Status status = pairing_.failure();
  if (status.ok()) status = EnqueueOp(rank, call, buffers, timeout);
  if (!status.ok()) {
    // The peers' exit kernels stop waiting, and later calls fail, until Reset.
    pairing_.Fail(status);
    Abandon();
  }
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
  absl::Status status;
  for (const CopyEnginePartner& peer : pairing_.Publish(rank, op, mine)) {
    if (status.ok()) status = QueuePair(rank, mine, peer, op, call.plan);
    pairing_.Paired(rank, peer.rank, op);
  }
  LTX_RETURN_IF_ERROR(status);
  CopyEngineExitParams exit;
  exit.signals = signals_;
  exit.rank = rank;
  exit.world_size = static_cast<int32_t>(devices_.size());
  exit.op = op;
  exit.timeout_ns = static_cast<uint64_t>(absl::ToInt64Nanoseconds(timeout));
  return RankCudaStatus(LaunchCopyEngineExit(exit, buffers.stream), rank, "exit kernel launch");
}

absl::Status CopyEngineTransport::QueuePair(int rank, const CopyEngineArrival& mine,
                                            const CopyEnginePartner& peer, uint64_t op,
                                            CopyPlanner plan) {
  DeviceErrorRecord mismatch;
  if (MismatchRecord(mine.announced, peer.arrival.announced, rank, peer.rank, op, &mismatch)) {
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
      plan));
  return QueueDirection(
      rank, {peer.rank, rank, reinterpret_cast<const void*>(peer.arrival.input), my_output}, op,
      plan);
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
  absl::Status status = RankCudaStatus(
      error, rank,
      absl::StrFormat("copy from rank %d to rank %d", direction.source, direction.target));
  if (status.ok()) {
    // The write's default memory barrier orders the copy before the flag.
    uint64_t* flag = &signals_[direction.target].received[direction.source];
    const CUresult written = write_value_(stream, reinterpret_cast<CUdeviceptr>(flag), op,
                                          CU_STREAM_WRITE_VALUE_DEFAULT);
    status = DriverStatus(written, absl::StrFormat("rank %d: cuStreamWriteValue64", rank));
  }
  if (switch_device) cudaSetDevice(devices_[rank]);
  return status;
}

}  // namespace ltx
