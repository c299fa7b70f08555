// The process's kept pinned blocks, and their bookkeeping by device, primary context and size.
#include "ltx/kept_pinned_blocks.h"

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

void* KeptBlocks::Take(int device, uint64_t context, size_t bytes) {
  absl::MutexLock lock(&mu_);
  blocks_.erase(
      std::remove_if(blocks_.begin(), blocks_.end(),
                     [&](const Block& b) { return b.device == device && b.context != context; }),
      blocks_.end());
  for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
    if (it->device != device || it->bytes != bytes) continue;
    void* const block = it->block;
    blocks_.erase(it);
    return block;
  }
  return nullptr;
}

void KeptBlocks::Keep(int device, uint64_t context, size_t bytes, void* block) {
  absl::MutexLock lock(&mu_);
  blocks_.push_back({device, context, bytes, block});
}

int KeptBlocks::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(blocks_.size());
}

absl::StatusOr<KeptPinnedBlock> AcquirePinnedBlock(int device, size_t bytes) {
  KeptPinnedBlock block;
  block.bytes = bytes;
  LTX_ASSIGN_OR_RETURN(block.context, PrimaryContextId(device));
  block.host = KeptRecords().Take(device, block.context, bytes);
  if (block.host != nullptr) return block;
  const cudaError_t error =
      cudaHostAlloc(&block.host, bytes, cudaHostAllocMapped | cudaHostAllocPortable);
  if (error != cudaSuccess) {
    cudaGetLastError();
    return CudaStatus(error, "cudaHostAlloc(kept pinned block)");
  }
  return block;
}

void GiveBackPinnedBlock(int device, const KeptPinnedBlock& block) {
  if (block.host != nullptr) KeptRecords().Keep(device, block.context, block.bytes, block.host);
}

absl::StatusOr<KeptErrorRecord> AcquireErrorRecord(int device) {
  LTX_ASSIGN_OR_RETURN(const KeptPinnedBlock block,
                       AcquirePinnedBlock(device, sizeof(DeviceErrorRecord)));
  return KeptErrorRecord{static_cast<DeviceErrorRecord*>(block.host), block.context};
}

void GiveBackErrorRecord(int device, const KeptErrorRecord& record) {
  GiveBackPinnedBlock(device, {record.host, sizeof(DeviceErrorRecord), record.context});
}

}  // namespace ltx
