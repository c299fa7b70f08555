// The process's kept error records, and their bookkeeping by device and primary context.
#include "ltx/kept_error_records.h"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "ltx/cuda_status.h"
#include "ltx/primary_context.h"
#include "ltx/status_macros.h"

namespace ltx {
namespace {

KeptBlocks& KeptRecords() {
  static KeptBlocks* const kept = new KeptBlocks;  // Never destroyed.
  return *kept;
}

}  // namespace

void* KeptBlocks::Take(int device, uint64_t context) {
  absl::MutexLock lock(&mu_);
  blocks_.erase(
      std::remove_if(blocks_.begin(), blocks_.end(),
                     [&](const Block& b) { return b.device == device && b.context != context; }),
      blocks_.end());
  for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
    if (it->device != device) continue;
    void* const block = it->block;
    blocks_.erase(it);
    return block;
  }
  return nullptr;
}

void KeptBlocks::Keep(int device, uint64_t context, void* block) {
  absl::MutexLock lock(&mu_);
  blocks_.push_back({device, context, block});
}

int KeptBlocks::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(blocks_.size());
}

absl::StatusOr<KeptErrorRecord> AcquireErrorRecord(int device) {
  KeptErrorRecord record;
  LTX_ASSIGN_OR_RETURN(record.context, PrimaryContextId(device));
  record.host = static_cast<DeviceErrorRecord*>(KeptRecords().Take(device, record.context));
  if (record.host != nullptr) return record;
  void* host = nullptr;
  const cudaError_t error =
      cudaHostAlloc(&host, sizeof(DeviceErrorRecord), cudaHostAllocMapped | cudaHostAllocPortable);
  if (error != cudaSuccess) {
    cudaGetLastError();
    return CudaStatus(error, "cudaHostAlloc(error record)");
  }
  record.host = static_cast<DeviceErrorRecord*>(host);
  return record;
}

void GiveBackErrorRecord(int device, const KeptErrorRecord& record) {
  if (record.host != nullptr) KeptRecords().Keep(device, record.context, record.host);
}

}  // namespace ltx
