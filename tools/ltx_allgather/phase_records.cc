// Allocating, clearing and reading back the one-trip kernel's phase records.
#include "tools/ltx_allgather/phase_records.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "ltx/cuda_status.h"
#include "ltx/status_macros.h"

namespace ltx {
namespace {

size_t RecordBytes(const OneTripTimestamps& r) {
  return sizeof(OneTripTimestampRecord) * static_cast<size_t>(r.samples) * r.max_blocks;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PhaseRecords>> PhaseRecords::Create(
    const std::vector<int>& devices, int samples, int max_blocks) {
  std::unique_ptr<PhaseRecords> records(new PhaseRecords(devices));
  for (int device : devices) {
    OneTripTimestamps r;
    r.samples = samples;
    r.max_blocks = max_blocks;
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaMalloc(reinterpret_cast<void**>(&r.records), RecordBytes(r)), "cudaMalloc(records)"));
    records->records_.push_back(r);
  }
  return records;
}

PhaseRecords::~PhaseRecords() {
  for (size_t rank = 0; rank < records_.size(); ++rank) {
    cudaSetDevice(devices_[rank]);
    cudaFree(records_[rank].records);
  }
}

absl::Status PhaseRecords::Clear() {
  for (size_t rank = 0; rank < records_.size(); ++rank) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(devices_[rank]), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaMemset(records_[rank].records, 0, RecordBytes(records_[rank])), "cudaMemset(records)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<OpPhases>>> PhaseRecords::Read() {
  std::vector<std::vector<OpPhases>> ops;
  for (size_t rank = 0; rank < records_.size(); ++rank) {
    const OneTripTimestamps& r = records_[rank];
    std::vector<OneTripTimestampRecord> host(static_cast<size_t>(r.samples) * r.max_blocks);
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(devices_[rank]), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaMemcpy(host.data(), r.records, RecordBytes(r), cudaMemcpyDeviceToHost),
        "cudaMemcpy(records)"));
    ops.push_back(OpsOfRecords(host, r.samples, r.max_blocks));
  }
  return ops;
}

absl::StatusOr<std::string> PhaseRecords::Table(const std::string& title) {
  LTX_ASSIGN_OR_RETURN(const std::vector<std::vector<OpPhases>> ops, Read());
  std::vector<RankPhases> ranks;
  for (const std::vector<OpPhases>& rank_ops : ops) ranks.push_back(SummarizeRank(rank_ops));
  return FormatPhaseTable(title, ranks, PairTrips(ops));
}

}  // namespace ltx
