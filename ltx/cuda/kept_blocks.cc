// The process's kept pinned and device blocks, and their bookkeeping by device, primary context
// and size.
#include "ltx/cuda/kept_blocks.h"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "ltx/cuda/cuda_status.h"
#include "ltx/cuda/primary_context.h"
#include "ltx/status_macros.h"

namespace ltx {
namespace {

// The process's kept blocks of one kind.
KeptBlocks& Kept(KeptMemory memory) {
  static KeptBlocks* const pinned = new KeptBlocks;  // Never destroyed.
  static KeptBlocks* const device = new KeptBlocks;  // Never destroyed.
  return memory == KeptMemory::kPinnedHost ? *pinned : *device;
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

absl::StatusOr<KeptBlock> AcquireBlock(KeptMemory memory, int device, size_t bytes) {
  KeptBlock block;
  block.memory = memory;
  block.bytes = bytes;
  LTX_ASSIGN_OR_RETURN(block.context, PrimaryContextId(device));
  block.address = Kept(memory).Take(device, block.context, bytes);
  if (block.address != nullptr) return block;
  const cudaError_t error =
      memory == KeptMemory::kPinnedHost
          ? cudaHostAlloc(&block.address, bytes, cudaHostAllocMapped | cudaHostAllocPortable)
          : cudaMalloc(&block.address, bytes);
  if (error != cudaSuccess) {
    cudaGetLastError();
    return CudaStatus(error, "allocating a kept block");
  }
  return block;
}

void GiveBackBlock(int device, const KeptBlock& block) {
  if (block.address != nullptr) {
    Kept(block.memory).Keep(device, block.context, block.bytes, block.address);
  }
}

absl::StatusOr<KeptErrorRecord> AcquireErrorRecord(int device) {
  LTX_ASSIGN_OR_RETURN(const KeptBlock block,
                       AcquireBlock(KeptMemory::kPinnedHost, device, sizeof(DeviceErrorRecord)));
  return KeptErrorRecord{static_cast<DeviceErrorRecord*>(block.address), block.context};
}

void GiveBackErrorRecord(int device, const KeptErrorRecord& record) {
  GiveBackBlock(device, {KeptMemory::kPinnedHost, record.host, sizeof(DeviceErrorRecord),
                        record.context});
}

}  // namespace ltx
