// The peer-store transport's memory: allocation, clearing, aborting and freeing (without
// synchronising any device).
#include "ltx/transport/peer_store/peer_store_transport.h"

#include <cstring>
#include <utility>

#include "ltx/cuda/cuda_status.h"
#include "ltx/cuda/kept_blocks.h"
#include "ltx/cuda/peer_access.h"
#include "ltx/runtime/device_error.h"
#include "ltx/status_macros.h"

namespace ltx {
namespace {

// Creates in `*pool` a memory pool of `device`'s memory that every GPU of `peers` (distinct,
// other than `device`) may read and write (peer stores and atomics over NVLink).
absl::Status CreatePeerPool(int device, const std::vector<int>& peers, cudaMemPool_t* pool) {
  cudaMemPoolProps properties = {};
  properties.allocType = cudaMemAllocationTypePinned;
  properties.handleTypes = cudaMemHandleTypeNone;
  properties.location.type = cudaMemLocationTypeDevice;
  properties.location.id = device;
  LTX_RETURN_IF_ERROR(CudaStatus(cudaMemPoolCreate(pool, &properties), "cudaMemPoolCreate"));
  std::vector<cudaMemAccessDesc> grants;
  for (int peer : peers) {
    cudaMemAccessDesc grant = {};
    grant.location.type = cudaMemLocationTypeDevice;
    grant.location.id = peer;
    grant.flags = cudaMemAccessFlagsProtReadWrite;
    grants.push_back(grant);
  }
  if (grants.empty()) return absl::OkStatus();
  return CudaStatus(cudaMemPoolSetAccess(*pool, grants.data(), grants.size()),
                    "cudaMemPoolSetAccess(peers of the signal memory)");
}

}  // namespace

PeerStoreTransport::PeerStoreTransport(const std::vector<int>& devices) : ranks_(devices.size()) {
  for (size_t rank = 0; rank < devices.size(); ++rank) ranks_[rank].device = devices[rank];
}

absl::StatusOr<std::unique_ptr<PeerStoreTransport>> PeerStoreTransport::Create(
    const RankPlacement& placement, int max_blocks) {
  std::unique_ptr<PeerStoreTransport> transport(new PeerStoreTransport(placement.devices()));
  LTX_RETURN_IF_ERROR(transport->ForRanks(AfterError::kStop, [&](int rank) {
    return transport->Allocate(rank, placement, max_blocks);
  }));
  LTX_ASSIGN_OR_RETURN(transport->peer_atomics_,
                       HaveNativePeerAtomics(placement.distinct_devices()));
  for (Rank& rank : transport->ranks_) {
    for (int peer = 0; peer < transport->world_size(); ++peer) {
      rank.view.signals[peer] = transport->ranks_[peer].view.signals[peer];
      rank.view.staging[peer] = transport->ranks_[peer].view.staging[peer];
    }
  }
  LTX_RETURN_IF_ERROR(transport->Clear());
  return transport;
}

template <typename Step>
absl::Status PeerStoreTransport::ForRanks(AfterError after_error, Step step) {
  int previous = -1;  // Left alone if it cannot be read.
  absl::Status first = CudaStatus(cudaGetDevice(&previous), "cudaGetDevice");
  for (int rank = 0; rank < world_size(); ++rank) {
    if (!first.ok() && after_error == AfterError::kStop) break;
    absl::Status status =
        RankCudaStatus(cudaSetDevice(ranks_[rank].device), rank, "cudaSetDevice");
    if (status.ok()) status = step(rank);
    if (first.ok()) first = status;
  }
  if (previous >= 0) cudaSetDevice(previous);
  return first;
}

absl::Status PeerStoreTransport::Allocate(int rank, const RankPlacement& placement,
                                          int max_blocks) {
  Rank& r = ranks_[rank];
  PeerStoreView& view = r.view;
  view.rank = rank;
  view.world_size = world_size();
  const std::vector<int> peers = placement.PeersOf(r.device);
  LTX_RETURN_IF_ERROR(EnablePeerAccess(r.device, peers));
  view.max_blocks = max_blocks;
  r.staging_bytes = OneTripStagingBytes(world_size());
  LTX_RETURN_IF_ERROR(CudaStatus(
      cudaStreamCreateWithFlags(&r.control_stream, cudaStreamNonBlocking), "cudaStreamCreate"));
  // The peers' stores land in memory of a pool of this transport's own, which can be freed
  // without synchronising the device (see FreeMemory). The allocations are ordered on the
  // control stream: Clear, which Create runs, waits for them.
  LTX_RETURN_IF_ERROR(CreatePeerPool(r.device, peers, &r.pool));
  LTX_RETURN_IF_ERROR(
      CudaStatus(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&view.signals[rank]),
                                         sizeof(SignalRegion), r.pool, r.control_stream),
                 "cudaMallocFromPoolAsync(signal region)"));
  LTX_RETURN_IF_ERROR(
      CudaStatus(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&view.staging[rank]),
                                         r.staging_bytes, r.pool, r.control_stream),
                 "cudaMallocFromPoolAsync(one-trip staging)"));
  LTX_ASSIGN_OR_RETURN(const KeptErrorRecord record, AcquireErrorRecord(r.device));
  r.record = record.host;
  r.record_context = record.context;
  return CudaStatus(
      cudaHostGetDevicePointer(reinterpret_cast<void**>(&view.error_record), r.record, 0),
      "cudaHostGetDevicePointer(error record)");
}

PeerStoreTransport::~PeerStoreTransport() {
  ForRanks(AfterError::kContinue, [this](int rank) {
    if (free_memory_) FreeMemory(rank);
    if (ranks_[rank].control_stream != nullptr) cudaStreamDestroy(ranks_[rank].control_stream);
    cudaGetLastError();
    return absl::OkStatus();
  }).IgnoreError();
}

void PeerStoreTransport::FreeMemory(int rank) {
  Rank& r = ranks_[rank];
  // cudaFree would synchronise the whole device, waiting for the user's kernels on other
  // streams too. Pool memory is freed in order on the control stream, which only this
  // transport uses, and only that stream is waited for; cudaStreamDestroy, cudaEventDestroy and
  // cudaMemPoolDestroy never wait for the device. The error record is kept for the process
  // instead of freed (ltx/cuda/kept_blocks.h says why).
  for (void* block :
       {static_cast<void*>(r.view.signals[rank]), static_cast<void*>(r.view.staging[rank])}) {
    if (block != nullptr) cudaFreeAsync(block, r.control_stream);
  }
  if (r.control_stream != nullptr) cudaStreamSynchronize(r.control_stream);
  if (r.pool != nullptr) cudaMemPoolDestroy(r.pool);
  GiveBackErrorRecord(r.device, {r.record, r.record_context});
}

absl::optional<DeviceErrorRecord> PeerStoreTransport::ReadError(int rank) const {
  return ReadDeviceError(ranks_[rank].record);
}

uint32_t PeerStoreTransport::StoringPeers(int rank) const {
  return *static_cast<volatile const uint32_t*>(&ranks_[rank].record->storing_peers);
}

absl::Status PeerStoreTransport::Clear() {
  return ForRanks(AfterError::kStop, [this](int rank) {
    Rank& r = ranks_[rank];
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaMemsetAsync(r.view.signals[rank], 0, sizeof(SignalRegion), r.control_stream),
                   "cudaMemsetAsync(signal region)"));
    // Pageable source: the copy has read it when the call returns.
    const uint32_t peer_atomics = peer_atomics_ ? 1u : 0u;
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaMemcpyAsync(&r.view.signals[rank]->peer_atomics, &peer_atomics,
                                   sizeof(peer_atomics), cudaMemcpyHostToDevice, r.control_stream),
                   "cudaMemcpyAsync(peer_atomics)"));
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaMemsetAsync(r.view.staging[rank], 0, r.staging_bytes, r.control_stream),
                   "cudaMemsetAsync(one-trip staging)"));
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaStreamSynchronize(r.control_stream), "cudaStreamSynchronize"));
    std::memset(r.record, 0, sizeof(DeviceErrorRecord));
    return absl::OkStatus();
  });
}

absl::Status PeerStoreTransport::Abandon() {
  static constexpr uint32_t kAbandoned = 1;
  return ForRanks(AfterError::kContinue, [this](int rank) {
    Rank& r = ranks_[rank];
    return RankCudaStatus(
        cudaMemcpyAsync(&r.view.signals[rank]->abort, &kAbandoned, sizeof(kAbandoned),
                        cudaMemcpyHostToDevice, r.control_stream),
        rank, "cudaMemcpyAsync(abort)");
  });
}

}  // namespace ltx
