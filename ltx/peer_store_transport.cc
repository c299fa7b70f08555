// The peer-store transport's memory: allocation, clearing, aborting and freeing.
#include "ltx/peer_store_transport.h"

#include <cstring>
#include <utility>

#include "ltx/cuda_status.h"
#include "ltx/device_error.h"
#include "ltx/peer_access.h"
#include "ltx/status_macros.h"

namespace ltx {

PeerStoreTransport::PeerStoreTransport(const std::vector<int>& devices) : ranks_(devices.size()) {
  for (size_t rank = 0; rank < devices.size(); ++rank) ranks_[rank].device = devices[rank];
}

absl::StatusOr<std::unique_ptr<PeerStoreTransport>> PeerStoreTransport::Create(
    const std::vector<int>& devices, int max_blocks) {
  std::unique_ptr<PeerStoreTransport> transport(new PeerStoreTransport(devices));
  LTX_RETURN_IF_ERROR(transport->ForEachRank(
      [&](int rank) { return transport->Allocate(rank, devices, max_blocks); }));
  LTX_ASSIGN_OR_RETURN(transport->peer_atomics_, HaveNativePeerAtomics(devices));
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
absl::Status PeerStoreTransport::ForEachRank(Step step) {
  int previous = 0;
  LTX_RETURN_IF_ERROR(CudaStatus(cudaGetDevice(&previous), "cudaGetDevice"));
  absl::Status status;
  for (int rank = 0; rank < world_size() && status.ok(); ++rank) {
    status = RankCudaStatus(cudaSetDevice(ranks_[rank].device), rank, "cudaSetDevice");
    if (status.ok()) status = step(rank);
  }
  cudaSetDevice(previous);
  return status;
}

absl::Status PeerStoreTransport::Allocate(int rank, const std::vector<int>& devices,
                                          int max_blocks) {
  Rank& r = ranks_[rank];
  PeerStoreView& view = r.view;
  view.rank = rank;
  view.world_size = world_size();
  LTX_RETURN_IF_ERROR(EnablePeerAccess(r.device, devices));
  int sm_count = 0;
  LTX_RETURN_IF_ERROR(
      CudaStatus(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, r.device),
                 "cudaDeviceGetAttribute(MultiProcessorCount)"));
  view.max_blocks = max_blocks > 0 ? max_blocks : sm_count;
  r.staging_bytes = OneTripStagingBytes(world_size());
  LTX_RETURN_IF_ERROR(
      CudaStatus(cudaMalloc(reinterpret_cast<void**>(&view.signals[rank]), sizeof(SignalRegion)),
                 "cudaMalloc(signal region)"));
  LTX_RETURN_IF_ERROR(
      CudaStatus(cudaMalloc(reinterpret_cast<void**>(&view.staging[rank]), r.staging_bytes),
                 "cudaMalloc(one-trip staging)"));
  void* record = nullptr;
  LTX_RETURN_IF_ERROR(CudaStatus(cudaHostAlloc(&record, sizeof(DeviceErrorRecord),
                                               cudaHostAllocMapped | cudaHostAllocPortable),
                                 "cudaHostAlloc(error record)"));
  r.record = static_cast<DeviceErrorRecord*>(record);
  LTX_RETURN_IF_ERROR(
      CudaStatus(cudaHostGetDevicePointer(reinterpret_cast<void**>(&view.error_record), record, 0),
                 "cudaHostGetDevicePointer(error record)"));
  return CudaStatus(cudaStreamCreateWithFlags(&r.control_stream, cudaStreamNonBlocking),
                    "cudaStreamCreate");
}

PeerStoreTransport::~PeerStoreTransport() {
  ForEachRank([this](int rank) {
    Rank& r = ranks_[rank];
    if (r.control_stream != nullptr) cudaStreamDestroy(r.control_stream);
    if (free_memory_) {
      if (r.record != nullptr) cudaFreeHost(r.record);
      if (r.view.signals[rank] != nullptr) cudaFree(r.view.signals[rank]);
      if (r.view.staging[rank] != nullptr) cudaFree(r.view.staging[rank]);
    }
    cudaGetLastError();
    return absl::OkStatus();
  }).IgnoreError();
}

absl::optional<DeviceErrorRecord> PeerStoreTransport::ReadError(int rank) const {
  return ReadDeviceError(ranks_[rank].record);
}

uint32_t PeerStoreTransport::StoringPeers(int rank) const {
  return *static_cast<volatile const uint32_t*>(&ranks_[rank].record->storing_peers);
}

absl::Status PeerStoreTransport::Clear() {
  return ForEachRank([this](int rank) {
    Rank& r = ranks_[rank];
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaMemsetAsync(r.view.signals[rank], 0, sizeof(SignalRegion), r.control_stream),
                   "cudaMemsetAsync(signal region)"));
    // Pageable source: the copy has read it when the call returns.
    const uint32_t peer_atomics = peer_atomics_ ? 1u : 0u;
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaMemcpyAsync(&r.view.signals[rank]->peer_atomics, &peer_atomics, sizeof(peer_atomics),
                        cudaMemcpyHostToDevice, r.control_stream),
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
  return ForEachRank([this](int rank) {
    Rank& r = ranks_[rank];
    return RankCudaStatus(
        cudaMemcpyAsync(&r.view.signals[rank]->abort, &kAbandoned, sizeof(kAbandoned),
                        cudaMemcpyHostToDevice, r.control_stream),
        rank, "cudaMemcpyAsync(abort)");
  });
}

}  // namespace ltx
