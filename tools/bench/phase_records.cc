// Per-rank phase-record buffers: allocation, clearing, reading back, the table.
#include "tools/bench/phase_records.h"

#include <cuda_runtime_api.h>

#include <cstddef>

#include "ltx/cuda/cuda_status.h"
#include "ltx/status_macros.h"

namespace ltx {
namespace {

size_t BytesOf(const PhaseTimestamps& buffer) {
  return sizeof(PhaseTimestampRecord) * static_cast<size_t>(buffer.samples) * buffer.max_blocks;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PhaseRecords>> PhaseRecords::Create(const std::vector<int>& devices,
                                                                   int samples, int max_blocks) {
  std::unique_ptr<PhaseRecords> records(new PhaseRecords(devices));
  for (int device : devices) {
    PhaseTimestamps buffer{nullptr, samples, max_blocks};
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaMalloc(reinterpret_cast<void**>(&buffer.records), BytesOf(buffer)), "cudaMalloc"));
    records->buffers_.push_back(buffer);
  }
  LTX_RETURN_IF_ERROR(records->Clear());
  return records;
}

PhaseRecords::~PhaseRecords() {
  for (size_t rank = 0; rank < buffers_.size(); ++rank) {
    cudaSetDevice(devices_[rank]);
    cudaFree(buffers_[rank].records);
  }
}

absl::Status PhaseRecords::Clear() {
  for (size_t rank = 0; rank < buffers_.size(); ++rank) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(devices_[rank]), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(CudaStatus(cudaMemset(buffers_[rank].records, 0, BytesOf(buffers_[rank])),
                                   "cudaMemset(records)"));
    // The memset ran on the legacy stream, which the ranks' non-blocking streams do not wait
    // for: let it land before any kernel records a phase.
    LTX_RETURN_IF_ERROR(CudaStatus(cudaDeviceSynchronize(), "cudaDeviceSynchronize"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<OpPhases>>> PhaseRecords::Read(
    const PhaseLayout& layout) const {
  std::vector<std::vector<OpPhases>> ops;
  for (size_t rank = 0; rank < buffers_.size(); ++rank) {
    const PhaseTimestamps& buffer = buffers_[rank];
    std::vector<PhaseTimestampRecord> host(static_cast<size_t>(buffer.samples) * buffer.max_blocks);
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(devices_[rank]), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaMemcpy(host.data(), buffer.records, BytesOf(buffer), cudaMemcpyDeviceToHost),
                   "cudaMemcpy(records)"));
    ops.push_back(OpsOfRecords(host, buffer.samples, buffer.max_blocks, layout));
  }
  return ops;
}

absl::StatusOr<std::string> PhaseRecords::Table(const std::string& title,
                                                const PhaseLayout& layout) const {
  LTX_ASSIGN_OR_RETURN(const std::vector<std::vector<OpPhases>> ops, Read(layout));
  std::vector<RankPhases> ranks;
  for (const std::vector<OpPhases>& rank_ops : ops) ranks.push_back(SummarizeRank(rank_ops));
  return FormatPhaseTable(title, layout, ranks, PairTrips(ops, layout));
}

}  // namespace ltx
