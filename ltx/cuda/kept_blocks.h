// Memory kept for the whole process: host-mapped pinned blocks (error records, the copy
// engines' signals) and small device blocks (the copy engines' completion flags). Freeing
// pinned memory (cudaFreeHost, and cudaHostUnregister for memory pinned with cudaHostRegister)
// or cudaMalloc memory synchronises the device in practice, as caching allocators exist to
// avoid; destroying a Runtime would then wait for every kernel on its GPUs, the user's too. So
// such a block is never freed: a transport gives it back when it is destroyed, and the next
// transport on the same GPU takes it again (blocks are small, and the process holds at most as
// many as Runtimes have lived at once). A cudaDeviceReset frees the memory of the GPU's primary
// context, so each block is kept under the context that allocated it, and blocks of a context
// that no longer exists are forgotten without being touched.
#ifndef LTX_CUDA_KEPT_BLOCKS_H_
#define LTX_CUDA_KEPT_BLOCKS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "kernels/wire/error_record.h"

namespace ltx {

// Blocks of memory kept by (device, primary context id, size): the bookkeeping of kept blocks.
class KeptBlocks {
 public:
  KeptBlocks() = default;
  KeptBlocks(const KeptBlocks&) = delete;
  KeptBlocks& operator=(const KeptBlocks&) = delete;

  // Takes a block of `bytes` bytes kept for `device` under `context`, and forgets the blocks
  // kept for `device` under any other context (their context is gone, and its memory with it).
  // nullptr when none is kept. Thread-safe.
  void* Take(int device, uint64_t context, size_t bytes);

  // Keeps `block` of `bytes` bytes, allocated for `device` under `context`, for a later Take.
  // Thread-safe.
  void Keep(int device, uint64_t context, size_t bytes, void* block);

  // How many blocks are kept. Thread-safe.
  int size() const;

 private:
  struct Block {
    int device = -1;
    uint64_t context = 0;
    size_t bytes = 0;
    void* block = nullptr;
  };
  mutable absl::Mutex mu_;
  std::vector<Block> blocks_ ABSL_GUARDED_BY(mu_);
};

// What a kept block is.
enum class KeptMemory {
  kPinnedHost,  // Mapped, portable pinned host memory (cudaHostAlloc): the same address on the
                // host and on every GPU.
  kDevice,      // Device memory (cudaMalloc): covered by peer access, and a target of stream
                // memory operations, which pool and virtual-memory allocations are not.
};

// A kept block of one GPU: what it is, its address, its size and the primary context that
// allocated it.
struct KeptBlock {
  KeptMemory memory = KeptMemory::kPinnedHost;
  void* address = nullptr;
  size_t bytes = 0;
  uint64_t context = 0;
};

// A block of `memory` of `bytes` bytes for the calling thread's current device `device`: one of
// that kind and size given back earlier under the same primary context, or a new one. Its
// contents are undefined. Errors: as CUDA reports them (the CUDA error is cleared).
// Thread-safe.
absl::StatusOr<KeptBlock> AcquireBlock(KeptMemory memory, int device, size_t bytes);

// Gives `block`, acquired for `device`, back to the process; no kernel or copy may touch it any
// more (a block that one still might touch is leaked instead). Never synchronises. Thread-safe.
void GiveBackBlock(int device, const KeptBlock& block);

// An error record of one GPU: its host address and the primary context that allocated it.
struct KeptErrorRecord {
  DeviceErrorRecord* host = nullptr;
  uint64_t context = 0;
};

// A record for the calling thread's current device `device`: one given back earlier under the
// same primary context, or a new one (cudaHostAlloc, mapped and portable). Its contents are
// undefined. Errors: as CUDA reports them (the CUDA error is cleared). Thread-safe.
absl::StatusOr<KeptErrorRecord> AcquireErrorRecord(int device);

// Gives `record`, acquired for `device`, back to the process; no kernel may write it any more
// (a record that one still might write is leaked instead). Never synchronises. Thread-safe.
void GiveBackErrorRecord(int device, const KeptErrorRecord& record);

}  // namespace ltx

#endif  // LTX_CUDA_KEPT_BLOCKS_H_
