// The host runtime: it validates each call, resolves it once, dispatches it to a transport on
// every rank, and keeps the per-GPU threads, waits, sticky errors and Reset. The transports own
// their device memory.
#include "ltx/runtime.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "kernels/copy_engine/copy_engine_exit_kernel.h"
#include "kernels/copy_engine/copy_engine_graph_kernel.h"
#include "ltx/collectives/allgather_layout.h"
#include "ltx/collectives/allgather_op.h"
#include "ltx/collectives/alltoall_layout.h"
#include "ltx/collectives/alltoall_op.h"
#include "ltx/collectives/collective_op.h"
#include "ltx/collectives/reduce_layout.h"
#include "ltx/collectives/reduce_op.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/cuda/driver_api.h"
#include "ltx/cuda/peer_access.h"
#include "ltx/cuda/peer_memory.h"
#include "ltx/cuda/relaxed_capture_mode.h"
#include "ltx/runtime/buffer_checks.h"
#include "ltx/runtime/call_ledger.h"
#include "ltx/runtime/debug_log.h"
#include "ltx/runtime/device_error.h"
#include "ltx/runtime/device_worker.h"
#include "ltx/runtime/rank_placement.h"
#include "ltx/runtime/rank_streams.h"
#include "ltx/runtime/resolved_call.h"
#include "ltx/status_macros.h"
#include "ltx/transport/copy_engine/capture_exchange.h"
#include "ltx/transport/copy_engine/copy_engine_call.h"
#include "ltx/transport/copy_engine/copy_engine_graph.h"
#include "ltx/transport/copy_engine/copy_engine_transport.h"
#include "ltx/transport/copy_engine/strided_copy.h"
#include "ltx/transport/peer_store/peer_store_transport.h"

namespace ltx {
namespace {

// How long a host wait spins on event queries before it starts sleeping between them.
constexpr absl::Duration kSpinBeforeSleep = absl::Microseconds(200);
constexpr absl::Duration kPollSleep = absl::Microseconds(20);
// Extra time the destructor grants in-flight kernels beyond their own device timeout.
constexpr absl::Duration kTeardownMargin = absl::Seconds(2);

absl::StatusOr<RankPlacement> ResolvePlacement(const RuntimeOptions& options) {
  int visible = 0;
  const cudaError_t error = cudaGetDeviceCount(&visible);
  if (error != cudaSuccess || visible == 0) {
    cudaGetLastError();
    std::string why;
    if (error == cudaErrorInsufficientDriver && !CudaDriverInstalled()) {
      why = " (no CUDA driver is installed: libcuda.so.1 cannot be loaded)";
    } else if (error != cudaSuccess) {
      why = absl::StrCat(" (cudaGetDeviceCount: ", cudaGetErrorName(error), ": ",
                         cudaGetErrorString(error), ")");
    }
    return absl::FailedPreconditionError(
        absl::StrCat("no CUDA GPU is visible to this process", why));
  }
  return RankPlacement::Resolve(options.devices, visible);
}

// InvalidArgument unless `pointer` is memory of GPU `device` (managed memory too if
// `allow_managed`).
absl::Status CheckPointerDevice(const void* pointer, int device, int rank, const char* name,
                                bool allow_managed) {
  cudaPointerAttributes attributes;
  const cudaError_t error = cudaPointerGetAttributes(&attributes, pointer);
  if (error != cudaSuccess) {
    cudaGetLastError();
    return absl::InvalidArgumentError(absl::StrFormat("rank %d: %s %p is not CUDA memory (%s)",
                                                      rank, name, pointer,
                                                      cudaGetErrorString(error)));
  }
  const bool device_memory = attributes.type == cudaMemoryTypeDevice;
  const bool managed = attributes.type == cudaMemoryTypeManaged;
  if (!device_memory && !(allow_managed && managed)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "rank %d: %s %p is not device memory (a cudaMalloc pointer of GPU %d is needed)", rank,
        name, pointer, device));
  }
  if (device_memory && attributes.device != device) {
    return absl::InvalidArgumentError(
        absl::StrFormat("rank %d: %s %p is memory of GPU %d, but rank %d runs on GPU %d", rank,
                        name, pointer, attributes.device, rank, device));
  }
  return absl::OkStatus();
}

bool IsLegacyStream(cudaStream_t stream) {
  return stream == nullptr || stream == cudaStreamLegacy;
}

bool IsLegacyOrPerThreadStream(cudaStream_t stream) {
  return IsLegacyStream(stream) || stream == cudaStreamPerThread;
}

// InvalidArgument when rank `rank`, which shares its GPU with other ranks, passes the legacy
// default stream: it serialises with the other ranks' streams, so their kernels, which wait for
// each other, could not run at the same time.
absl::Status CheckSharedGpuStream(int rank, int device, cudaStream_t stream) {
  if (!IsLegacyStream(stream)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "rank %d shares GPU %d with other ranks: the legacy default stream would serialise their "
      "kernels, which wait for each other; pass a stream of the rank's own "
      "(cudaStreamNonBlocking)",
      rank, device));
}

// What a timeout most often means where ranks share a GPU, for its message: the GPU itself held
// a rank's kernel back (kernels/PROTOCOL.md, "Ranks that share a GPU"); how many calls each of
// the `world` ranks had launched (`ledger`), which tells a rank whose thread never reached its
// launch from one whose launched kernel never started; and how many streams each rank of a
// shared GPU has called on (`streams`), of which one each is best.
std::string SharedGpuTimeoutNote(const CallLedger& ledger, const RankStreams& streams,
                                 int world) {
  std::vector<std::string> launched;
  std::vector<std::string> used;
  for (int rank = 0; rank < world; ++rank) {
    launched.push_back(absl::StrCat("rank ", rank, ": ", ledger.LatestCall(rank)));
    const int count = streams.StreamsUsed(rank);
    if (count > 0) {
      used.push_back(absl::StrCat("rank ", rank, ": ", count,
                                  count == RankStreams::kMostCounted ? " or more" : ""));
    }
  }
  const char* loading = std::getenv("CUDA_MODULE_LOADING");
  const char* connections = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  return absl::StrFormat(
      "; ranks share GPUs, where the GPU itself can hold a rank's kernel back: a kernel loaded "
      "lazily while a co-located rank waits, or streams that share a hardware queue (this "
      "process has CUDA_MODULE_LOADING=%s and CUDA_DEVICE_MAX_CONNECTIONS=%s; set EAGER and 32 "
      "before CUDA starts, and keep the streams that carry work on a GPU few, one per rank: "
      "kernels/PROTOCOL.md, \"Ranks that share a GPU\"); calls launched on the host so far (%s); "
      "streams called on by the ranks that share a GPU (%s)",
      loading != nullptr ? loading : "unset", connections != nullptr ? connections : "unset",
      absl::StrJoin(launched, ", "), absl::StrJoin(used, ", "));
}

// "all_gather rank 0: shard 8192 B (largest 8192 B), protocol one_trip (why), 4 blocks,
// timeout 10s, eager": a call as the debug log describes it.
std::string DescribeCall(Collective collective, int rank, int64_t shard_bytes,
                         int64_t max_shard_bytes, const ResolvedCall& call) {
  return absl::StrFormat(
      "%s rank %d: shard %d B (largest %d B), protocol %s (%s), %d blocks%s, timeout %s, %s",
      CollectiveName(collective), rank, shard_bytes,
      max_shard_bytes, ProtocolName(call.protocol), call.protocol_reason, call.blocks,
      call.early_start ? " started early" : "", absl::FormatDuration(call.timeout),
      call.capturing ? "captured" : "eager");
}

// Blocks until every non-null event has completed or `deadline` passes. Returns the ranks whose
// events are still pending (empty: all done), or a CUDA error.
absl::StatusOr<std::vector<int>> AwaitEvents(absl::Span<const cudaEvent_t> events,
                                             absl::Time deadline) {
  const absl::Time spin_until = absl::Now() + kSpinBeforeSleep;
  for (;;) {
    std::vector<int> busy;
    for (size_t rank = 0; rank < events.size(); ++rank) {
      if (events[rank] == nullptr) continue;
      const cudaError_t state = cudaEventQuery(events[rank]);
      if (state == cudaErrorNotReady) {
        busy.push_back(static_cast<int>(rank));
      } else if (state != cudaSuccess) {
        return CudaStatus(state, absl::StrFormat("rank %d: cudaEventQuery", rank));
      }
    }
    const absl::Time now = absl::Now();
    if (busy.empty() || now >= deadline) return busy;
    if (now >= spin_until) absl::SleepFor(kPollSleep);
  }
}

// The error rank `rank`'s device published on either transport, if any.
absl::optional<DeviceErrorRecord> ReadRankError(const PeerStoreTransport* peer_stores,
                                                const CopyEngineTransport& copy_engines,
                                                int rank) {
  if (peer_stores != nullptr) {
    absl::optional<DeviceErrorRecord> record = peer_stores->ReadError(rank);
    if (record.has_value()) return record;
  }
  return copy_engines.ReadError(rank);
}

}  // namespace

struct Runtime::CheckedBuffer {
  const void* pointer = nullptr;
  int64_t bytes = 0;
  bool peers_access = false;
  // What the peers' access belongs to (with peers_access on the peer-store transport).
  PeerGrant grant;
};

struct Runtime::Rank {
  int device = -1;
  // The other ranks on this rank's GPU.
  std::vector<int> co_located;
  // The calls of this rank the debug log has described (LTX_DEBUG=INFO: once each); touched only
  // by this rank's calls.
  std::set<std::string> logged_calls;
  std::unique_ptr<DeviceWorker> worker;
  cudaEvent_t last_done = nullptr;  // Recorded after each call outside capture.
  // The last input and output of each tensor, and the last stream, of this rank that passed the
  // CUDA checks; touched only by this rank's calls.
  std::array<CheckedBuffer, kMaxTensors> checked_inputs;
  std::array<CheckedBuffer, kMaxTensors> checked_outputs;
  CheckedBuffer checked_local_input;  // CollectiveOp::local_inputs (the RMSNorm weight).
  cudaStream_t checked_stream = nullptr;
};

// --------------------------------------------------------------------------- CollectiveHandle

CollectiveHandle::CollectiveHandle(Runtime* runtime, std::vector<cudaEvent_t> done)
    : runtime_(runtime), done_(std::move(done)) {}

CollectiveHandle::CollectiveHandle(CollectiveHandle&& other) noexcept
    : runtime_(std::exchange(other.runtime_, nullptr)), done_(std::move(other.done_)) {
  other.done_.clear();
}

CollectiveHandle& CollectiveHandle::operator=(CollectiveHandle&& other) noexcept {
  if (this != &other) {
    Release();
    runtime_ = std::exchange(other.runtime_, nullptr);
    done_ = std::move(other.done_);
    other.done_.clear();
  }
  return *this;
}

CollectiveHandle::~CollectiveHandle() { Release(); }

void CollectiveHandle::Release() {
  for (cudaEvent_t event : done_) {
    if (event != nullptr) cudaEventDestroy(event);
  }
  done_.clear();
}

absl::Status CollectiveHandle::Wait(absl::Duration timeout) {
  if (runtime_ == nullptr) return absl::FailedPreconditionError("Wait on a moved-from handle");
  return runtime_->WaitForEvents(done_, timeout, "collective wait");
}

// ------------------------------------------------------------------------------------ Runtime

Runtime::Runtime(RuntimeOptions options, std::unique_ptr<const RankPlacement> placement,
                 Transport transport, std::string copy_engines_refused)
    : options_(std::move(options)),
      placement_(std::move(placement)),
      transport_(transport),
      copy_engines_refused_(std::move(copy_engines_refused)),
      ledger_(std::make_unique<CallLedger>(placement_->world_size())),
      rank_streams_(std::make_unique<RankStreams>(placement_->devices())),
      capture_exchange_(std::make_unique<CaptureExchange>(placement_->world_size())) {}

const std::vector<int>& Runtime::devices() const { return placement_->devices(); }

absl::StatusOr<std::unique_ptr<Runtime>> Runtime::Create(const RuntimeOptions& options) {
  if (options.timeout <= absl::ZeroDuration() || options.timeout == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "timeout must be positive and finite, got ", absl::FormatDuration(options.timeout)));
  }
  if (options.max_blocks < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_blocks must be >= 0 (0 = automatic), got ", options.max_blocks));
  }
  if (options.worker_spin < absl::ZeroDuration() ||
      options.worker_spin == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker_spin must be >= 0 and finite, got ", absl::FormatDuration(options.worker_spin)));
  }
  if (options.one_trip_max_bytes != kOneTripLimitByWorldSize &&
      (options.one_trip_max_bytes < 0 || options.one_trip_max_bytes > kOneTripMaxShardBytes)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "one_trip_max_bytes must be in [0, %d] or kOneTripLimitByWorldSize, got %d",
        kOneTripMaxShardBytes, options.one_trip_max_bytes));
  }
  if (options.copy_engine_min_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "copy_engine_min_bytes must be >= 0 (0 = never), got %d", options.copy_engine_min_bytes));
  }
  if (options.two_shot_min_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "two_shot_min_bytes must be >= 0 (0 = always two-shot), got %d",
        options.two_shot_min_bytes));
  }
  if (std::find(std::begin(kAllTransports), std::end(kAllTransports), options.transport) ==
      std::end(kAllTransports)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "transport: unknown value %d", static_cast<int>(options.transport)));
  }
  // What needs no GPU is refused before CUDA is asked for the GPUs.
  LTX_RETURN_IF_ERROR(RankPlacement::CheckListed(options.devices));
  LTX_ASSIGN_OR_RETURN(RankPlacement placement, ResolvePlacement(options));
  Transport transport = options.transport;
  if (transport != Transport::kCopyEngine) {
    const absl::Status peer_access = CheckPeerAccess(placement.distinct_devices());
    if (!peer_access.ok() &&
        (transport == Transport::kPeerStores || !absl::IsFailedPrecondition(peer_access))) {
      return peer_access;
    }
    transport = peer_access.ok() ? Transport::kPeerStores : Transport::kCopyEngine;
  }
  // Whether the copy engines fit the GPUs' hardware queues (CUDA_DEVICE_MAX_CONNECTIONS): the
  // copy-engine transport needs them; on the peer-store transport a refusal holds for calls.
  const absl::Status copy_engines_fit = CopyEnginesFitQueues(
      placement, HardwareQueuesOf(std::getenv("CUDA_DEVICE_MAX_CONNECTIONS")));
  if (transport == Transport::kCopyEngine) LTX_RETURN_IF_ERROR(copy_engines_fit);
  std::unique_ptr<Runtime> runtime(new Runtime(
      options, std::make_unique<const RankPlacement>(std::move(placement)), transport,
      std::string(copy_engines_fit.message())));
  LTX_RETURN_IF_ERROR(runtime->Initialize());
  return runtime;
}

absl::Status Runtime::Initialize() {
  for (int rank = 0; rank < placement_->world_size(); ++rank) {
    auto r = std::make_unique<Rank>();
    r->device = placement_->device(rank);
    r->co_located = placement_->CoLocatedRanks(rank);
    r->worker = std::make_unique<DeviceWorker>(r->device, options_.worker_spin);
    ranks_.push_back(std::move(r));
  }
  // Every rank's kernels get the same block budget: the one-trip protocol pairs block b of each
  // rank with block b of its peers (kernels/PROTOCOL.md).
  int max_blocks = std::numeric_limits<int>::max();
  for (int rank = 0; rank < world_size(); ++rank) {
    Rank* r = ranks_[rank].get();
    const bool kernels = transport_ == Transport::kPeerStores;
    GpuBlockCapacity capacity;
    capacity.resident_blocks_per_sm = std::numeric_limits<int>::max();
    LTX_RETURN_IF_ERROR(r->worker->Run([r, kernels, &capacity] {
      LTX_RETURN_IF_ERROR(CudaStatus(
          cudaEventCreateWithFlags(&r->last_done, cudaEventDisableTiming), "cudaEventCreate"));
      int* resident = &capacity.resident_blocks_per_sm;
      LTX_RETURN_IF_ERROR(CudaStatus(LoadCopyEngineExitKernel(resident),
                                     "loading the copy-engine exit kernel"));
      if (!kernels) return absl::OkStatus();
      LTX_RETURN_IF_ERROR(CudaStatus(
          cudaDeviceGetAttribute(&capacity.sm_count, cudaDevAttrMultiProcessorCount, r->device),
          "cudaDeviceGetAttribute(MultiProcessorCount)"));
      LTX_RETURN_IF_ERROR(LoadAllGatherKernels(resident));
      LTX_RETURN_IF_ERROR(CudaStatus(LoadCopyEngineGraphKernels(resident),
                                     "loading the copy-engine graph kernels"));
      LTX_RETURN_IF_ERROR(LoadReduceKernels(resident));
      return LoadAllToAllKernels(resident);
    }));
    max_blocks = std::min(
        max_blocks, RankBlockBudget(options_.max_blocks, capacity, placement_->RanksOnGpuOf(rank)));
  }
  if (transport_ == Transport::kPeerStores) {
    LTX_ASSIGN_OR_RETURN(peer_stores_, PeerStoreTransport::Create(*placement_, max_blocks));
  }
  if (DebugEnabled(DebugLevel::kInfo)) {
    const char* loading = std::getenv("CUDA_MODULE_LOADING");
    const char* connections = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    DebugLine(DebugLevel::kInfo,
              absl::StrFormat(
                  "Runtime: %d ranks on GPUs %s%s, transport %s, %s, timeout %s; "
                  "CUDA_MODULE_LOADING=%s CUDA_DEVICE_MAX_CONNECTIONS=%s",
                  world_size(), placement_->Describe(),
                  placement_->ranks_share_gpus() ? " (ranks share GPUs)" : "",
                  TransportName(transport_),
                  transport_ == Transport::kPeerStores
                      ? absl::StrCat("at most ", max_blocks, " blocks per rank's kernel")
                      : std::string("no kernels but the copy engines' exit kernels"),
                  absl::FormatDuration(options_.timeout), loading != nullptr ? loading : "unset",
                  connections != nullptr ? connections : "unset"));
  }
  const bool peer_access = peer_stores_ != nullptr;
  LTX_ASSIGN_OR_RETURN(copy_engines_,
                       CopyEngineTransport::Create(placement_->devices(), peer_access));
  return absl::OkStatus();
}

Runtime::~Runtime() {
  std::vector<cudaEvent_t> events;
  for (auto& rank : ranks_) events.push_back(rank->last_done);
  absl::StatusOr<std::vector<int>> busy =
      AwaitEvents(events, absl::Now() + options_.timeout + kTeardownMargin);
  if (busy.ok() && !busy->empty()) {
    // Kernels still run (a longer per-call timeout, or a stream that started them late): tell
    // them to give up, then wait once more.
    AbandonDevices(absl::CancelledError("the Runtime is being destroyed"));
    busy = AwaitEvents(events, absl::Now() + kTeardownMargin);
  }
  // Memory that a running kernel may still touch is leaked rather than freed under it.
  if (!(busy.ok() && busy->empty())) {
    if (peer_stores_ != nullptr) peer_stores_->KeepMemoryAtExit();
    if (copy_engines_ != nullptr) copy_engines_->KeepMemoryAtExit();
  }
  peer_stores_.reset();
  copy_engines_.reset();
  for (auto& rank : ranks_) {
    Rank* r = rank.get();
    r->worker->Run([r] {
           if (r->last_done != nullptr) cudaEventDestroy(r->last_done);
           cudaGetLastError();
           return absl::OkStatus();
         })
        .IgnoreError();
  }
}

absl::Status Runtime::status() {
  const absl::Status error = CollectDeviceErrors();
  if (error.ok()) return error;
  return absl::Status(error.code(), absl::StrCat(error.message(), StoringPeersNote({})));
}

absl::Status Runtime::CollectDeviceErrors() {
  absl::MutexLock lock(&mu_);
  if (!failure_.ok()) return failure_;
  // The error to report is the first rank's whose record is a cause (a timeout, a
  // disagreement), not a consequence (a rank that stopped because a peer gave the op up).
  int reporter = -1;
  absl::optional<DeviceErrorRecord> reported;
  std::vector<int> others;
  for (int rank = 0; rank < world_size(); ++rank) {
    absl::optional<DeviceErrorRecord> record =
        ReadRankError(peer_stores_.get(), *copy_engines_, rank);
    if (!record.has_value()) continue;
    others.push_back(rank);
    DebugLine(DebugLevel::kInfo, absl::StrCat("rank ", rank, "'s error record: ",
                                              DeviceErrorToStatus(*record).ToString()));
    const bool cause = record->kind != static_cast<uint32_t>(DeviceErrorKind::kPeerGaveUp);
    if (!reported.has_value() ||
        (cause && reported->kind == static_cast<uint32_t>(DeviceErrorKind::kPeerGaveUp))) {
      reporter = rank;
      reported = record;
    }
  }
  if (!reported.has_value()) return absl::OkStatus();
  others.erase(std::find(others.begin(), others.end(), reporter));
  absl::Status first = DeviceErrorToStatus(*reported);
  if (!others.empty()) {
    first = absl::Status(first.code(), absl::StrCat(first.message(), " (rank(s) ",
                                                    absl::StrJoin(others, ", "),
                                                    " also reported errors)"));
  }
  if (placement_->ranks_share_gpus() &&
      reported->kind == static_cast<uint32_t>(DeviceErrorKind::kTimeout)) {
    const std::string note = SharedGpuTimeoutNote(*ledger_, *rank_streams_, world_size());
    first = absl::Status(first.code(), absl::StrCat(first.message(), note));
  }
  failure_ = first;
  failed_.store(true, std::memory_order_release);
  DebugLine(DebugLevel::kInfo, absl::StrCat("stopped: ", first.ToString()));
  return first;
}

void Runtime::StopWith(const absl::Status& error) {
  absl::MutexLock lock(&mu_);
  if (failure_.ok()) {
    failure_ = error;
    DebugLine(DebugLevel::kInfo, absl::StrCat("stopped: ", error.ToString()));
  }
  failed_.store(true, std::memory_order_release);
}

absl::Status Runtime::CheckUsable() {
  if (failed_.load(std::memory_order_acquire)) {
    absl::MutexLock lock(&mu_);
    return absl::FailedPreconditionError(absl::StrCat(
        "the runtime stopped after an error; call Reset() first. The error: ",
        failure_.ToString(), StoringPeersNote({})));
  }
  // The common case takes no lock: one read of each rank's host-mapped records.
  for (int rank = 0; rank < world_size(); ++rank) {
    if (ReadRankError(peer_stores_.get(), *copy_engines_, rank).has_value()) return status();
  }
  return absl::OkStatus();
}

absl::Status Runtime::ValidateCall(const CollectiveOp& op, int rank, const RankBuffers& buffers,
                                   const ResolvedCall& resolved) {
  LTX_RETURN_IF_ERROR(CheckOpBuffers(op, world_size(), rank, buffers));
  Rank& r = *ranks_[rank];
  // The buffer the peers access (the output they store into, or the input they read; both for
  // a two-shot AllReduce, whose second op stores into the peers' outputs) must be device memory
  // of the rank's GPU open to them; the other one may be managed memory.
  for (int tensor = 0; tensor < op.tensors; ++tensor) {
    const RankBuffers one = TensorBuffers(buffers, tensor);
    LTX_RETURN_IF_ERROR(CheckRankMemory(rank, one.input, op.input_bytes[rank],
                                        op.tensor_names.inputs[tensor],
                                        op.peers_read_input && tensor < op.peer_read_inputs,
                                        &r.checked_inputs[tensor]));
    LTX_RETURN_IF_ERROR(CheckRankMemory(rank, one.output, op.output_bytes[rank],
                                        op.tensor_names.outputs[tensor],
                                        !op.peers_read_input || resolved.two_shot,
                                        &r.checked_outputs[tensor]));
  }
  if (op.local_input_name != nullptr) {
    LTX_RETURN_IF_ERROR(CheckRankMemory(rank, op.local_inputs[rank], op.local_input_bytes,
                                        op.local_input_name, /*peers_access=*/false,
                                        &r.checked_local_input));
  }
  if (!r.co_located.empty()) {
    LTX_RETURN_IF_ERROR(CheckSharedGpuStream(rank, r.device, buffers.stream));
  }
  if (!IsLegacyOrPerThreadStream(buffers.stream) && buffers.stream != r.checked_stream) {
    // CUDA cannot name a stream's device while the stream captures; the launch itself then
    // rejects a stream of another GPU.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    LTX_RETURN_IF_ERROR(CudaStatus(cudaStreamIsCapturing(buffers.stream, &capture),
                                   absl::StrFormat("rank %d: stream", rank)));
    if (capture == cudaStreamCaptureStatusNone) {
      int stream_device = -1;
      LTX_RETURN_IF_ERROR(CudaStatus(cudaStreamGetDevice(buffers.stream, &stream_device),
                                     absl::StrFormat("rank %d: stream", rank)));
      if (stream_device != r.device) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "rank %d: stream belongs to GPU %d, but rank %d runs on GPU %d", rank,
            stream_device, rank, r.device));
      }
      r.checked_stream = buffers.stream;
    }
  }
  return absl::OkStatus();
}

absl::Status Runtime::CheckRankMemory(int rank, const void* pointer, int64_t bytes,
                                      const char* name, bool peers_access,
                                      CheckedBuffer* checked) {
  // A pointer is checked in full when a call of this rank first uses it (again for more bytes,
  // or for the peers' access). Where the peers store into it, it is asked again on every call:
  // the memory at an address can be freed and the address handed out again, by a pool or a
  // mapping that the peers may not write (PyTorch's expandable segments release and map their
  // pages again), and a peer's store there would end the CUDA context. One query of the driver
  // while the same cudaMalloc or pool allocation is there (PeerGrantHolds); mappings and other
  // memory are checked in full.
  if (bytes == 0) return absl::OkStatus();
  const int device = ranks_[rank]->device;
  // Ranks of one GPU only store into its own memory: nothing to grant.
  const bool grants = peers_access && transport_ == Transport::kPeerStores &&
                      placement_->distinct_devices().size() > 1;
  if (pointer == checked->pointer && bytes <= checked->bytes &&
      (checked->peers_access || !peers_access) &&
      (!grants || PeerGrantHolds(pointer, device, checked->grant))) {
    return absl::OkStatus();
  }
  LTX_RETURN_IF_ERROR(
      CheckPointerDevice(pointer, device, rank, name, /*allow_managed=*/!peers_access));
  PeerGrant grant;
  // Pool and virtual-memory mappings need the peers' access granted.
  if (grants) {
    absl::StatusOr<PeerGrant> open =
        EnsurePeerWritable(pointer, bytes, device, placement_->PeersOf(device));
    if (!open.ok()) {
      return absl::Status(
          open.status().code(),
          absl::StrFormat("rank %d: %s: %s", rank, name, open.status().message()));
    }
    grant = *open;
  }
  *checked = {pointer, bytes, peers_access, grant};
  return absl::OkStatus();
}

absl::StatusOr<ResolvedCall> Runtime::Resolve(int rank, const CollectiveOp& op,
                                              const RankBuffers& buffers, const CallOptions& call,
                                              bool capturing) const {
  CallContext context;
  context.collective = op.collective;
  context.tensors = op.tensors;
  context.wire = op.wire;
  context.transport = transport_;
  context.world_size = world_size();
  context.max_shard_bytes = *std::max_element(op.shard_bytes.begin(), op.shard_bytes.end());
  context.shard_bytes = op.shard_bytes[rank];
  context.max_blocks = peer_stores_ != nullptr ? peer_stores_->view(rank).max_blocks : 1;
  context.work_blocks = op.work_blocks;
  context.capturing = capturing;
  context.in_place = IsInPlace(buffers, op.in_place_offset[rank]);
  context.shares_gpu = !ranks_[rank]->co_located.empty();
  context.ranks_share_gpus = placement_->ranks_share_gpus();
  context.copy_engines_refused = copy_engines_refused_;
  context.rank = rank;
  context.generation = generation();
  return ResolveCall(options_, context, call);
}

absl::Status Runtime::Launch(int rank, const CollectiveOp& op, const RankBuffers& buffers,
                             const ResolvedCall& call) {
  const uint64_t number = ledger_->Record(rank, call.protocol);
  if (DebugEnabled(DebugLevel::kInfo)) LogCall(rank, number, op, call);
  absl::Status agreed = ledger_->Check(rank, number, call.protocol);
  if (agreed.ok()) {
    int streams = 0;  // The rank's streams, where this call adds one.
    agreed = rank_streams_->Claim(rank, number, buffers.stream, &streams);
    if (streams > 1 && DebugEnabled(DebugLevel::kInfo)) {
      DebugLine(DebugLevel::kInfo,
                absl::StrCat("rank ", rank, " calls on a stream it had not used (", streams,
                             " so far): where ranks share a GPU, one stream per rank keeps them "
                             "off each other's hardware queues (kernels/PROTOCOL.md)"));
    }
  }
  if (!agreed.ok()) {
    // The peer's side of the op (a kernel, or an exit kernel waiting for copies) waits on its
    // GPU for this rank, which will never come: make the error sticky, so that the peer's
    // Wait reports it, then end every wait on the devices.
    return Stop(agreed);
  }
  cudaEvent_t last_done = ranks_[rank]->last_done;
  absl::Status launched;
  // The launchers read cudaGetLastError: an error left pending on this thread by an earlier
  // CUDA call (the caller's, or a refused call's) is not this launch's. A sticky one stays.
  cudaGetLastError();
  if (call.protocol == Protocol::kCopyEngine) {
    const CopyEngineCall copies{op.collective, op.announce_copies(buffers, call), op.plan_copy};
    if (call.capturing) {
      // The peer-store transport only (RankCall refuses it on the copy-engine transport).
      launched = CaptureCopyEngineCall(peer_stores_->view(rank), copy_engines_->max_pitch(),
                                       copies, buffers, call, capture_exchange_.get());
    } else {
      // Records last_done after everything it queued, on errors too: Reset waits for it.
      launched = copy_engines_->Enqueue(rank, copies, buffers, call.timeout, last_done);
    }
  } else {
    // Co-located ranks, of this Runtime and of any other on the GPU, enqueue one after another:
    // launched at the same time from their threads, the first op of a fresh Runtime on fresh
    // streams with two kernels per rank (a two-shot AllReduce) had one rank's kernels held on
    // the GPU until its peers gave up, about one time in six, and two Runtimes of one GPU alike
    // (kernels/PROTOCOL.md, "Ranks that share a GPU"). A turn never waits long for a launch
    // blocked behind a kernel that waits for this rank (LaunchTurn).
    const LaunchTurn one_launch_at_a_time(rank_streams_->LaunchLock(rank));
    launched = RankCudaStatus(op.launch_kernel(peer_stores_->view(rank), buffers, call), rank,
                              "kernel launch");
    if (!call.capturing) {
      // After a failed launch too: an op of several kernels (a two-shot AllReduce, the FP8
      // wire) may have queued some, and Reset waits for last_done.
      const absl::Status recorded = RankCudaStatus(cudaEventRecord(last_done, buffers.stream),
                                                   rank, "cudaEventRecord");
      if (launched.ok()) launched = recorded;
    }
  }
  if (!launched.ok()) {
    // The peers of this rank would time out waiting for it: stop the runtime, then end the
    // peers' waits, now that the error is sticky (a peer whose wait stops sees it in its status).
    Stop(launched).IgnoreError();  // The call returns `launched` below.
  }
  if (DebugEnabled(DebugLevel::kTrace)) {
    // With the line LogCall wrote before: a call that never came back from CUDA shows.
    DebugLine(DebugLevel::kTrace,
              absl::StrCat("call #", number, " rank ", rank, ": ",
                           launched.ok() ? "enqueued" : launched.ToString()));
  }
  return launched;
}

void Runtime::LogCall(int rank, uint64_t number, const CollectiveOp& op, const ResolvedCall& call) {
  const std::string line =
      DescribeCall(op.collective, rank, op.shard_bytes[rank],
                   *std::max_element(op.shard_bytes.begin(), op.shard_bytes.end()), call);
  if (DebugEnabled(DebugLevel::kTrace)) {
    DebugLine(DebugLevel::kTrace, absl::StrCat("call #", number, ": ", line));
  } else if (ranks_[rank]->logged_calls.insert(line).second) {
    DebugLine(DebugLevel::kInfo, line);
  }
}

void Runtime::AbandonDevices(const absl::Status& error) {
  // A rank may stop the Runtime from inside a stream capture (a refused captured call): the
  // copies that tell the GPUs to give up are not part of it and must not invalidate it.
  const RelaxedCaptureMode relaxed;
  if (peer_stores_ != nullptr) peer_stores_->Abandon().IgnoreError();
  copy_engines_->Abandon(error);
  capture_exchange_->Fail(error);
}

absl::StatusOr<CollectiveHandle> Runtime::Coordinate(const CollectiveOp& op,
                                                     absl::Span<const RankBuffers> buffers,
                                                     const CallOptions& call) {
  if (static_cast<int>(buffers.size()) != world_size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "buffers has %d entries but the world size is %d", buffers.size(), world_size()));
  }
  if (call.phase_timestamps != nullptr) {
    return absl::InvalidArgumentError(
        "phase_timestamps belong to one rank's GPU: pass them to per-rank calls only");
  }
  for (int rank = 0; rank < world_size(); ++rank) {
    for (int other : ranks_[rank]->co_located) {
      if (other < rank && buffers[other].stream == buffers[rank].stream) {
        return SameStreamError(rank, other, ranks_[rank]->device);
      }
    }
  }
  // Everything is checked and resolved before the first rank launches: a rejected call
  // enqueues nothing anywhere.
  std::vector<ResolvedCall> resolved;
  for (int rank = 0; rank < world_size(); ++rank) {
    if (buffers[rank].stream == cudaStreamPerThread) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "rank %d: cudaStreamPerThread would name the GPU thread's stream, not the caller's; "
          "pass an explicit stream",
          rank));
    }
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    LTX_RETURN_IF_ERROR(
        RankCudaStatus(cudaStreamIsCapturing(buffers[rank].stream, &capture), rank, "stream"));
    if (capture != cudaStreamCaptureStatusNone) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "rank %d: the stream is capturing a CUDA graph; capture %s calls instead", rank,
          op.rank_call));
    }
    LTX_ASSIGN_OR_RETURN(ResolvedCall rank_call,
                         Resolve(rank, op, buffers[rank], call, /*capturing=*/false));
    LTX_RETURN_IF_ERROR(ValidateCall(op, rank, buffers[rank], rank_call));
    resolved.push_back(rank_call);
  }
  LTX_RETURN_IF_ERROR(CheckOpBuffersAcrossRanks(op, buffers));
  for (int rank = 1; rank < world_size(); ++rank) {
    // Ranks on different paths would find it on their GPUs and stop the Runtime; the host sees
    // every rank's buffers here and refuses at once (an AllReduce in place on some ranks only
    // below the two-shot size, say).
    if (resolved[rank].protocol != resolved[0].protocol ||
        resolved[rank].two_shot != resolved[0].two_shot) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "ranks 0 and %d would run different paths (%s%s against %s%s): pass every rank's "
          "buffers alike (in place on every rank or none)",
          rank, ProtocolName(resolved[0].protocol), resolved[0].two_shot ? ", two-shot" : "",
          ProtocolName(resolved[rank].protocol), resolved[rank].two_shot ? ", two-shot" : ""));
    }
  }
  std::vector<absl::Status> results(world_size());
  std::vector<cudaEvent_t> done(world_size(), nullptr);
  std::atomic<int> pending{world_size()};
  for (int rank = 0; rank < world_size(); ++rank) {
    ranks_[rank]->worker->Post([&, rank] {
      absl::Status result = Launch(rank, op, buffers[rank], resolved[rank]);
      if (result.ok()) {
        result = CudaStatus(cudaEventCreateWithFlags(&done[rank], cudaEventDisableTiming),
                            "cudaEventCreate");
      }
      if (result.ok()) {
        result = CudaStatus(cudaEventRecord(done[rank], buffers[rank].stream), "cudaEventRecord");
      }
      results[rank] = std::move(result);
      pending.fetch_sub(1, std::memory_order_release);
    });
  }
  // Enqueueing takes microseconds: wait for it without sleeping.
  while (pending.load(std::memory_order_acquire) > 0) std::this_thread::yield();
  CollectiveHandle handle(this, std::move(done));
  for (const absl::Status& result : results) LTX_RETURN_IF_ERROR(result);
  return handle;
}

absl::Status Runtime::AdmitRankCall(int rank) {
  if (rank < 0 || rank >= world_size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("rank %d is outside [0, %d)", rank, world_size()));
  }
  return CheckUsable();
}

absl::Status Runtime::RejectRankCall(int rank, const CallOptions& call,
                                     const absl::Status& error) {
  LTX_RETURN_IF_ERROR(AdmitRankCall(rank));
  LTX_RETURN_IF_ERROR(CheckGeneration(rank, call.generation, generation()));
  return Stop(error);
}

absl::StatusOr<ResolvedCall> Runtime::PrepareRankCall(int rank, const CollectiveOp& op,
                                                      const RankBuffers& buffers,
                                                      const CallOptions& call) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  LTX_RETURN_IF_ERROR(
      RankCudaStatus(cudaStreamIsCapturing(buffers.stream, &capture), rank, "stream"));
  LTX_ASSIGN_OR_RETURN(ResolvedCall resolved,
                       Resolve(rank, op, buffers, call, capture != cudaStreamCaptureStatusNone));
  LTX_RETURN_IF_ERROR(ValidateCall(op, rank, buffers, resolved));
  return resolved;
}

absl::Status Runtime::RankCall(int rank, const CollectiveOp& op, const RankBuffers& buffers,
                               const CallOptions& call) {
  if (DebugEnabled(DebugLevel::kTrace)) {
    // With the lines Launch writes: a rank whose thread never reached the launch shows.
    DebugLine(DebugLevel::kTrace,
              absl::StrCat("rank ", rank, ": ", CollectiveName(op.collective), " called"));
  }
  LTX_RETURN_IF_ERROR(AdmitRankCall(rank));
  absl::StatusOr<ResolvedCall> resolved = PrepareRankCall(rank, op, buffers, call);
  // A call of an earlier reset generation belongs to no op of this one: the Runtime stays usable.
  if (absl::IsAborted(resolved.status())) return resolved.status();
  // The peers may already have launched this op: a rank that rejects its part leaves them
  // waiting, and a later call of this rank would pair with their op. A rank cannot know that
  // its peers rejected theirs alike, not even for what no rank can run (UNIMPLEMENTED: a peer
  // that passed another protocol, or did not capture, may have launched). So a rejected
  // per-rank call stops the Runtime, like a device error, and ends the peers' waits for it.
  if (!resolved.ok()) {
    const absl::Status& refused = resolved.status();
    // Every rank then sees this error: it names the rank (ResolveCall's refusals of what no rank
    // can run do not).
    return Stop(absl::IsUnimplemented(refused)
                    ? absl::Status(refused.code(), absl::StrCat("rank ", rank, ": ",
                                                                refused.message()))
                    : refused);
  }
  int previous_device = -1;
  const int device = ranks_[rank]->device;
  absl::Status on_device = CudaStatus(cudaGetDevice(&previous_device), "cudaGetDevice");
  if (on_device.ok() && previous_device != device) {
    on_device = CudaStatus(cudaSetDevice(device), "cudaSetDevice");
  }
  if (!on_device.ok()) return Stop(on_device);  // The peers may already have launched this op.
  const absl::Status launched = Launch(rank, op, buffers, *resolved);
  if (previous_device != device) cudaSetDevice(previous_device);
  return launched;
}

absl::StatusOr<CollectiveHandle> Runtime::AllGather(const AllGatherShape& shape,
                                                    absl::Span<const RankBuffers> buffers,
                                                    const CallOptions& call) {
  LTX_RETURN_IF_ERROR(CheckUsable());
  LTX_ASSIGN_OR_RETURN(const AllGatherLayout layout, ComputeAllGatherLayout(shape, world_size()));
  return Coordinate(AllGatherOpOf(layout), buffers, call);
}

absl::Status Runtime::AllGatherAndWait(const AllGatherShape& shape,
                                       absl::Span<const RankBuffers> buffers,
                                       absl::Duration wait_timeout, const CallOptions& call) {
  LTX_ASSIGN_OR_RETURN(CollectiveHandle handle, AllGather(shape, buffers, call));
  return handle.Wait(wait_timeout);
}

absl::Status Runtime::AllGatherRank(int rank, const AllGatherShape& shape,
                                    const RankBuffers& buffers, const CallOptions& call) {
  const absl::StatusOr<AllGatherLayout> layout = ComputeAllGatherLayout(shape, world_size());
  if (!layout.ok()) return RejectRankCall(rank, call, layout.status());
  return RankCall(rank, AllGatherOpOf(*layout), buffers, call);
}

absl::StatusOr<CollectiveHandle> Runtime::AllToAll(const AllToAllShape& shape,
                                                   absl::Span<const RankBuffers> buffers,
                                                   const CallOptions& call) {
  LTX_RETURN_IF_ERROR(CheckUsable());
  LTX_ASSIGN_OR_RETURN(const AllToAllLayout layout, ComputeAllToAllLayout(shape, world_size()));
  return Coordinate(AllToAllOpOf(layout), buffers, call);
}

absl::Status Runtime::AllToAllAndWait(const AllToAllShape& shape,
                                      absl::Span<const RankBuffers> buffers,
                                      absl::Duration wait_timeout, const CallOptions& call) {
  LTX_ASSIGN_OR_RETURN(CollectiveHandle handle, AllToAll(shape, buffers, call));
  return handle.Wait(wait_timeout);
}

absl::Status Runtime::AllToAllRank(int rank, const AllToAllShape& shape,
                                   const RankBuffers& buffers, const CallOptions& call) {
  const absl::StatusOr<AllToAllLayout> layout = ComputeAllToAllLayout(shape, world_size());
  if (!layout.ok()) return RejectRankCall(rank, call, layout.status());
  return RankCall(rank, AllToAllOpOf(*layout), buffers, call);
}

absl::StatusOr<CollectiveHandle> Runtime::AllReduce(const AllReduceShape& shape,
                                                    absl::Span<const RankBuffers> buffers,
                                                    const CallOptions& call) {
  LTX_RETURN_IF_ERROR(CheckUsable());
  LTX_ASSIGN_OR_RETURN(const ReduceLayout layout, ComputeAllReduceLayout(shape, world_size()));
  return Coordinate(ReduceOpOf(layout), buffers, call);
}

absl::Status Runtime::AllReduceAndWait(const AllReduceShape& shape,
                                       absl::Span<const RankBuffers> buffers,
                                       absl::Duration wait_timeout, const CallOptions& call) {
  LTX_ASSIGN_OR_RETURN(CollectiveHandle handle, AllReduce(shape, buffers, call));
  return handle.Wait(wait_timeout);
}

absl::Status Runtime::AllReduceRank(int rank, const AllReduceShape& shape,
                                    const RankBuffers& buffers, const CallOptions& call) {
  const absl::StatusOr<ReduceLayout> layout = ComputeAllReduceLayout(shape, world_size());
  if (!layout.ok()) return RejectRankCall(rank, call, layout.status());
  return RankCall(rank, ReduceOpOf(*layout), buffers, call);
}

absl::StatusOr<CollectiveHandle> Runtime::AllReduceRmsNorm(
    const AllReduceRmsNormShape& shape, absl::Span<const RmsNormBuffers> buffers,
    const CallOptions& call) {
  LTX_RETURN_IF_ERROR(CheckUsable());
  LTX_ASSIGN_OR_RETURN(const ReduceLayout layout,
                       ComputeAllReduceRmsNormLayout(shape, world_size()));
  if (buffers.size() != static_cast<size_t>(world_size())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "buffers has %d entries but the world size is %d", buffers.size(), world_size()));
  }
  std::array<const void*, kMaxWorldSize> weights = {};
  std::vector<RankBuffers> tensors;
  for (int rank = 0; rank < world_size(); ++rank) {
    // The common checks of its two tensors follow in the funnel (ValidateCall).
    LTX_RETURN_IF_ERROR(CheckRmsNormOwnBuffers(layout, rank, buffers[rank]));
    weights[rank] = buffers[rank].weight;
    tensors.push_back(RmsNormRankBuffers(buffers[rank]));
  }
  return Coordinate(AllReduceRmsNormOpOf(layout, weights), tensors, call);
}

absl::Status Runtime::AllReduceRmsNormAndWait(const AllReduceRmsNormShape& shape,
                                              absl::Span<const RmsNormBuffers> buffers,
                                              absl::Duration wait_timeout,
                                              const CallOptions& call) {
  LTX_ASSIGN_OR_RETURN(CollectiveHandle handle, AllReduceRmsNorm(shape, buffers, call));
  return handle.Wait(wait_timeout);
}

absl::Status Runtime::AllReduceRmsNormRank(int rank, const AllReduceRmsNormShape& shape,
                                           const RmsNormBuffers& buffers,
                                           const CallOptions& call) {
  // Before `rank` indexes anything.
  LTX_RETURN_IF_ERROR(AdmitRankCall(rank));
  absl::StatusOr<ReduceLayout> layout = ComputeAllReduceRmsNormLayout(shape, world_size());
  if (layout.ok()) {
    const absl::Status valid = CheckRmsNormOwnBuffers(*layout, rank, buffers);
    if (!valid.ok()) layout = valid;
  }
  if (!layout.ok()) return RejectRankCall(rank, call, layout.status());
  std::array<const void*, kMaxWorldSize> weights = {};
  weights[rank] = buffers.weight;
  return RankCall(rank, AllReduceRmsNormOpOf(*layout, weights), RmsNormRankBuffers(buffers),
                  call);
}

absl::StatusOr<CollectiveHandle> Runtime::ReduceScatter(const ReduceScatterShape& shape,
                                                        absl::Span<const RankBuffers> buffers,
                                                        const CallOptions& call) {
  LTX_RETURN_IF_ERROR(CheckUsable());
  LTX_ASSIGN_OR_RETURN(const ReduceLayout layout,
                       ComputeReduceScatterLayout(shape, world_size()));
  return Coordinate(ReduceOpOf(layout), buffers, call);
}

absl::Status Runtime::ReduceScatterAndWait(const ReduceScatterShape& shape,
                                           absl::Span<const RankBuffers> buffers,
                                           absl::Duration wait_timeout, const CallOptions& call) {
  LTX_ASSIGN_OR_RETURN(CollectiveHandle handle, ReduceScatter(shape, buffers, call));
  return handle.Wait(wait_timeout);
}

absl::Status Runtime::ReduceScatterRank(int rank, const ReduceScatterShape& shape,
                                        const RankBuffers& buffers, const CallOptions& call) {
  const absl::StatusOr<ReduceLayout> layout = ComputeReduceScatterLayout(shape, world_size());
  if (!layout.ok()) return RejectRankCall(rank, call, layout.status());
  return RankCall(rank, ReduceOpOf(*layout), buffers, call);
}

absl::Status Runtime::WaitForEvents(absl::Span<const cudaEvent_t> events,
                                    absl::Duration timeout, absl::string_view what) {
  const absl::StatusOr<std::vector<int>> awaited = AwaitEvents(events, absl::Now() + timeout);
  if (!awaited.ok()) {
    // CUDA could not say whether the ops ended (a fault on a GPU, a lost context): no call may
    // follow them until a Reset finds the GPUs usable.
    StopWith(awaited.status());
    return awaited.status();
  }
  const std::vector<int>& busy = *awaited;
  const absl::Status error = CollectDeviceErrors();
  const std::string running =
      busy.empty() ? std::string()
                   : absl::StrFormat("rank(s) %s still running after %s",
                                     absl::StrJoin(busy, ", "), absl::FormatDuration(timeout));
  if (error.ok()) {
    return busy.empty() ? error : absl::DeadlineExceededError(absl::StrCat(what, ": ", running));
  }
  return absl::Status(error.code(),
                      absl::StrCat(error.message(), busy.empty() ? "" : "; ", running,
                                   StoringPeersNote(busy)));
}

std::string Runtime::StoringPeersNote(const std::vector<int>& busy) const {
  if (peer_stores_ == nullptr) return "";
  // Read now, not with the error: a GPU records these after its error, when it revokes.
  std::vector<std::string> running;
  std::vector<std::string> claimed;
  for (int owner = 0; owner < world_size(); ++owner) {
    const uint32_t storing = peer_stores_->StoringPeers(owner);
    for (int source = 0; source < world_size(); ++source) {
      if (((storing >> source) & 1u) == 0u) continue;
      const std::string pair = absl::StrFormat("rank %d into rank %d's output", source, owner);
      const bool busy_source = std::find(busy.begin(), busy.end(), source) != busy.end();
      (busy_source ? running : claimed).push_back(pair);
    }
  }
  std::string note;
  if (!running.empty()) {
    absl::StrAppend(&note, "; they may still be storing (", absl::StrJoin(running, ", "),
                    "): do not reuse those outputs until Synchronize no longer reports them "
                    "running");
  }
  if (!claimed.empty()) {
    absl::StrAppend(&note, "; peers had begun storing when the output's owner gave the op up (",
                    absl::StrJoin(claimed, ", "),
                    "): each may store there until its own part of the op has ended on its "
                    "stream (Synchronize cannot see replays of CUDA graphs)");
  }
  return note;
}

absl::Status Runtime::Synchronize(absl::Duration timeout) {
  std::vector<cudaEvent_t> events;
  for (auto& rank : ranks_) events.push_back(rank->last_done);
  return WaitForEvents(events, timeout, "Synchronize");
}

absl::Status Runtime::Stop(const absl::Status& error) {
  if (error.ok()) return absl::InvalidArgumentError("Stop: the error must not be OK");
  // Before or after a concurrent Reset's clearing, never inside it: an abort flag set on a GPU
  // after the clearing, with the host's error cleared after it, would leave the Runtime
  // reporting OK with its GPUs giving every op up.
  absl::MutexLock stopping(&stop_mu_);
  StopWith(error);
  AbandonDevices(error);
  return error;
}

absl::Status Runtime::Reset(absl::Duration timeout) {
  std::vector<cudaEvent_t> events;
  for (auto& rank : ranks_) events.push_back(rank->last_done);
  LTX_ASSIGN_OR_RETURN(const std::vector<int> busy, AwaitEvents(events, absl::Now() + timeout));
  if (!busy.empty()) {
    return absl::DeadlineExceededError(
        absl::StrFormat("Reset: rank(s) %s still running after %s; the runtime stays stopped",
                        absl::StrJoin(busy, ", "), absl::FormatDuration(timeout)));
  }
  // The transports clear rank by rank: one that fails part way leaves the ranks' signals
  // disagreeing, so the Runtime stops (if it had not) until a Reset succeeds. A Stop of
  // another thread comes wholly before the clearing (which undoes it) or after it.
  absl::MutexLock clearing(&stop_mu_);
  absl::Status cleared = copy_engines_->Reset(absl::Now() + timeout);
  if (cleared.ok() && peer_stores_ != nullptr) cleared = peer_stores_->Clear();
  if (!cleared.ok()) {
    StopWith(cleared);
    return cleared;
  }
  ledger_->Reset();
  rank_streams_->ForgetCalls();
  capture_exchange_->Reset();
  generation_.fetch_add(1, std::memory_order_acq_rel);
  absl::MutexLock lock(&mu_);
  failure_ = absl::OkStatus();
  failed_.store(false, std::memory_order_release);
  return absl::OkStatus();
}

}  // namespace ltx
