// The copy-engine transport: strided copy-engine copies ordered by events, with a host
// rendezvous at the entry and the exit of each op.
#include "ltx/copy_engine_transport.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "kernels/entry_announcement.h"
#include "kernels/error_record.h"
#include "ltx/cuda_status.h"
#include "ltx/device_error.h"
#include "ltx/shard_copy.h"
#include "ltx/status_macros.h"

namespace ltx {
namespace {

// The phases of an op at the rendezvous.
constexpr int kEntry = 0;
constexpr int kExit = 1;

// What rank `buffers`' owner announces at the entry of an op. The copy engines do not see the
// reset generation: ranks of different generations cannot meet at the rendezvous, which Reset
// restarts (and Runtime::Reset refuses while a call is in it).
EntryAnnouncement Announce(const AllGatherLayout& layout, const RankBuffers& buffers) {
  return MakeEntryAnnouncement(reinterpret_cast<uint64_t>(buffers.output),
                               static_cast<int32_t>(layout.dtype), layout.row_bytes, layout.batch,
                               layout.total_tokens, layout.counts_digest,
                               AnnouncedProtocol::kCopyEngine, /*generation=*/0);
}

// InvalidArgument when rank `rank`, whose call `arrivals[rank].call` met the others at op `op`,
// finds a rank that met it with another call number.
template <typename Arrival>
absl::Status CheckCallNumbers(int rank, uint64_t op, absl::Span<const Arrival> arrivals) {
  for (size_t t = 0; t < arrivals.size(); ++t) {
    if (arrivals[t].call == arrivals[rank].call) continue;
    return absl::InvalidArgumentError(absl::StrFormat(
        "all_gather op %d (copy-engine transport): rank %d met it with its call #%d, rank %d "
        "with its call #%d: ranks disagree on the protocol of some op (one took a kernel path "
        "where another took the copy engines)",
        op, rank, arrivals[rank].call, t, arrivals[t].call));
  }
  return absl::OkStatus();
}

// The error of a miss at the rendezvous; it reads as the kernels' timeouts do.
absl::Status MissToStatus(const RendezvousMiss& miss) {
  const BarrierPhase phase = miss.phase == kEntry ? BarrierPhase::kEntry : BarrierPhase::kExit;
  const absl::Status status = DeviceErrorToStatus(
      TimeoutRecord(phase, miss.rank, miss.missing, miss.op, miss.missing_last_op,
                    static_cast<uint64_t>(absl::ToInt64Nanoseconds(miss.timeout))));
  return absl::Status(status.code(), absl::StrCat(status.message(), " (copy-engine transport)"));
}

}  // namespace

CopyEngineTransport::CopyEngineTransport(std::vector<int> devices, absl::Duration spin)
    : devices_(std::move(devices)),
      rank_events_(devices_.size()),
      rendezvous_(static_cast<int>(devices_.size()), {"entry", "exit"}, spin, MissToStatus) {}

absl::StatusOr<std::unique_ptr<CopyEngineTransport>> CopyEngineTransport::Create(
    const std::vector<int>& devices, absl::Duration spin) {
  std::unique_ptr<CopyEngineTransport> transport(new CopyEngineTransport(devices, spin));
  int previous = 0;
  LTX_RETURN_IF_ERROR(CudaStatus(cudaGetDevice(&previous), "cudaGetDevice"));
  absl::Status status;
  for (size_t rank = 0; rank < devices.size() && status.ok(); ++rank) {
    status = transport->CreateRankEvents(static_cast<int>(rank));
  }
  cudaSetDevice(previous);
  LTX_RETURN_IF_ERROR(status);
  return transport;
}

absl::Status CopyEngineTransport::CreateRankEvents(int rank) {
  const int device = devices_[rank];
  LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device), "cudaSetDevice"));
  int max_pitch = 0;
  LTX_RETURN_IF_ERROR(CudaStatus(cudaDeviceGetAttribute(&max_pitch, cudaDevAttrMaxPitch, device),
                                 "cudaDeviceGetAttribute(MaxPitch)"));
  max_pitch_ = std::min<int64_t>(max_pitch_, max_pitch);
  RankEvents& events = rank_events_[rank];
  LTX_RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&events.side, cudaStreamNonBlocking),
                                 "cudaStreamCreate"));
  for (cudaEvent_t* event : {&events.fork, &events.join, &events.entry, &events.copied}) {
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaEventCreateWithFlags(event, cudaEventDisableTiming), "cudaEventCreate"));
  }
  return absl::OkStatus();
}

CopyEngineTransport::~CopyEngineTransport() {
  for (const RankEvents& events : rank_events_) {
    if (events.side != nullptr) cudaStreamDestroy(events.side);
    for (cudaEvent_t event : {events.fork, events.join, events.entry, events.copied}) {
      if (event != nullptr) cudaEventDestroy(event);
    }
  }
}

void CopyEngineTransport::Reset() { rendezvous_.Reset(); }

absl::Status CopyEngineTransport::Enqueue(int rank, const CallOrder& order,
                                          const AllGatherLayout& layout,
                                          const RankBuffers& buffers, absl::Duration timeout,
                                          cudaEvent_t done) {
  const uint64_t op = rendezvous_.NextOp(rank);
  const absl::StatusOr<Outputs> outputs = Enter(rank, op, order, layout, buffers, timeout);
  absl::Status status = outputs.status();
  if (status.ok()) {
    const CopyFailure failed_copy = QueueCopies(rank, layout, buffers, *outputs);
    status = Leave(rank, op, order, buffers, failed_copy, timeout);
  }
  if (done != nullptr) {
    const absl::Status recorded =
        RankCudaStatus(cudaEventRecord(done, buffers.stream), rank, "cudaEventRecord(done)");
    if (status.ok()) status = recorded;
  }
  // The ranks still waiting for this one stop, and later calls fail, until Reset.
  if (!status.ok()) rendezvous_.Fail(status);
  return status;
}

absl::StatusOr<CopyEngineTransport::Outputs> CopyEngineTransport::Enter(
    int rank, uint64_t op, const CallOrder& order, const AllGatherLayout& layout,
    const RankBuffers& buffers, absl::Duration timeout) {
  // After a failure the peers may still wait for this rank's events of the failed op: leave
  // them alone.
  LTX_RETURN_IF_ERROR(rendezvous_.failure());
  LTX_RETURN_IF_ERROR(RankCudaStatus(cudaEventRecord(rank_events_[rank].entry, buffers.stream),
                                     rank, "cudaEventRecord(entry)"));
  const int world = rendezvous_.ranks();
  Arrival mine;
  mine.call = order.number;
  mine.announced = Announce(layout, buffers);
  std::array<Arrival, kMaxWorldSize> all;
  LTX_RETURN_IF_ERROR(rendezvous_.Meet(rank, op, kEntry, mine, absl::MakeSpan(all.data(), world),
                                       timeout, order.watch));
  LTX_RETURN_IF_ERROR(CheckCallNumbers(rank, op, absl::MakeConstSpan(all.data(), world)));
  // Every rank compares every pair, so all of them find a disagreement and none copies.
  Outputs outputs = {};
  for (int t = 0; t < world; ++t) {
    DeviceErrorRecord mismatch;
    if (MismatchRecord(mine.announced, all[t].announced, rank, t, op, &mismatch)) {
      return DeviceErrorToStatus(mismatch);
    }
    outputs[t] = reinterpret_cast<void*>(all[t].announced.output_address);
  }
  return outputs;
}

CopyEngineTransport::CopyFailure CopyEngineTransport::QueueCopies(int rank,
                                                                  const AllGatherLayout& layout,
                                                                  const RankBuffers& buffers,
                                                                  const Outputs& outputs) {
  const RankEvents& own = rank_events_[rank];
  const ShardGeometry geometry = layout.GeometryOf(rank);
  const int world = rendezvous_.ranks();
  // Its own output on the side stream, forked from the rank's stream.
  cudaError_t error = cudaEventRecord(own.fork, buffers.stream);
  if (error == cudaSuccess) error = cudaStreamWaitEvent(own.side, own.fork, 0);
  if (error == cudaSuccess) {
    error = QueueShardCopy(PlanShardCopy(geometry, buffers.input, outputs[rank]), devices_[rank],
                           devices_[rank], max_pitch_, own.side);
  }
  CopyFailure failed = {error, rank};
  // The peers' outputs in turn, each after its owner's entry event; none once the op is given
  // up.
  for (int step = 1; step < world && failed.error == cudaSuccess && rendezvous_.failure().ok();
       ++step) {
    const int peer = (rank + step) % world;
    error = cudaStreamWaitEvent(buffers.stream, rank_events_[peer].entry, 0);
    if (error == cudaSuccess) {
      error = QueueShardCopy(PlanShardCopy(geometry, buffers.input, outputs[peer]), devices_[rank],
                             devices_[peer], max_pitch_, buffers.stream);
    }
    failed = {error, peer};
  }
  // The join, after a failure too: the side stream's copy may be queued.
  error = cudaEventRecord(own.join, own.side);
  if (error == cudaSuccess) error = cudaStreamWaitEvent(buffers.stream, own.join, 0);
  if (failed.error == cudaSuccess) failed = {error, rank};
  return failed;
}

absl::Status CopyEngineTransport::Leave(int rank, uint64_t op, const CallOrder& order,
                                        const RankBuffers& buffers, CopyFailure mine,
                                        absl::Duration timeout) {
  const int world = rendezvous_.ranks();
  const cudaError_t recorded = cudaEventRecord(rank_events_[rank].copied, buffers.stream);
  if (mine.error == cudaSuccess) mine = {recorded, rank};
  Arrival arrival;
  arrival.failed_copy = mine;
  std::array<Arrival, kMaxWorldSize> all;
  const absl::Status met =
      rendezvous_.Meet(rank, op, kExit, arrival, absl::MakeSpan(all.data(), world), timeout,
                       order.watch);
  // Every rank's copies, into this rank's output among others, go before what follows on the
  // stream; after a miss too, as far as the ranks have recorded them.
  absl::Status waited;
  for (int t = 0; t < world; ++t) {
    const absl::Status status =
        RankCudaStatus(cudaStreamWaitEvent(buffers.stream, rank_events_[t].copied, 0), rank,
                       "cudaStreamWaitEvent(copied)");
    if (waited.ok()) waited = status;
  }
  LTX_RETURN_IF_ERROR(met);
  for (int t = 0; t < world; ++t) {
    const CopyFailure& failed = all[t].failed_copy;
    if (failed.error != cudaSuccess) {
      return CudaStatus(static_cast<cudaError_t>(failed.error),
                        absl::StrFormat("all_gather op %d: rank %d could not queue its copy to "
                                        "rank %d (copy-engine transport)",
                                        op, t, failed.target));
    }
  }
  return waited;
}

}  // namespace ltx
