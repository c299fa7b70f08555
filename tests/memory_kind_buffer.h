// GPU memory of every kind users' allocators hand out, for tests that run ltx on it:
// cudaMalloc, stream-ordered pools (cudaMallocAsync from the device's default pool and from a
// pool of one's own), and the virtual memory API (cuMemCreate + cuMemMap with access for the
// owner only, in one mapping or in two mappings back to back in one reserved range, as
// PyTorch's caching allocator with expandable segments makes them).
#ifndef LTX_TESTS_MEMORY_KIND_BUFFER_H_
#define LTX_TESTS_MEMORY_KIND_BUFFER_H_

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <ostream>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/optional.h"

namespace ltx {

enum class MemoryKind {
  kMalloc,       // cudaMalloc.
  kDefaultPool,  // cudaMallocAsync from the device's default pool.
  kOwnPool,      // cudaMallocFromPoolAsync from a pool made with cudaMemPoolCreate.
  kMapped,       // cuMemCreate + cuMemMap, access for the owner only.
  kTwoMappings,  // As kMapped, the buffer spanning two mappings back to back.
};

inline constexpr MemoryKind kAllMemoryKinds[] = {MemoryKind::kMalloc, MemoryKind::kDefaultPool,
                                                 MemoryKind::kOwnPool, MemoryKind::kMapped,
                                                 MemoryKind::kTwoMappings};

// "malloc", "default_pool", "own_pool", "mapped", "two_mappings".
const char* MemoryKindName(MemoryKind kind);
// The kind MemoryKindName names; nullopt for anything else.
absl::optional<MemoryKind> ParseMemoryKind(absl::string_view name);
// For GoogleTest: prints MemoryKindName.
void PrintTo(MemoryKind kind, std::ostream* os);

// One buffer of device memory of one kind on one GPU, freed on destruction with the call that
// matches its kind. Not thread-safe; destroy it only when no work uses it.
class MemoryKindBuffer {
 public:
  // Allocates `bytes` bytes (> 0) of GPU `device`'s memory of `kind`, 256-byte aligned; for
  // kTwoMappings the boundary between the mappings lies in the middle of the buffer. Makes
  // `device` current. Errors: as CUDA reports them (FailedPrecondition where the driver lacks
  // the virtual memory API).
  static absl::StatusOr<std::unique_ptr<MemoryKindBuffer>> Allocate(MemoryKind kind, int device,
                                                                    int64_t bytes);
  ~MemoryKindBuffer();

  MemoryKindBuffer(const MemoryKindBuffer&) = delete;
  MemoryKindBuffer& operator=(const MemoryKindBuffer&) = delete;

  uint8_t* data() const { return data_; }

  // Whether Remap applies: the kinds of the virtual memory API.
  bool remappable() const { return reserved_ != 0; }

  // For the kinds of the virtual memory API: unmaps and releases every mapping, then maps a new
  // allocation of the same size at each place, with access for the owner only, as an expandable
  // segment released and grown back (data() stays; its bytes are undefined). Makes the owner
  // current. No work may use the buffer. Errors: FailedPrecondition for the other kinds; as
  // CUDA reports them, after which the buffer may be partly mapped: only destroy it then.
  absl::Status Remap();

 private:
  MemoryKindBuffer(MemoryKind kind, int device) : kind_(kind), device_(device) {}
  absl::Status AllocateFromPool(int64_t bytes);
  absl::Status AllocateMapped(int64_t bytes, int mappings);
  // Maps `mappings` new allocations of mapping_bytes_ back to back from reserved_, with access
  // for the owner only.
  absl::Status MapNew(int mappings);
  // Unmaps and releases every mapping of reserved_; the first error.
  absl::Status UnmapAll();

  const MemoryKind kind_;
  const int device_;
  uint8_t* data_ = nullptr;
  cudaStream_t stream_ = nullptr;  // Pools: the stream of the allocation and of its free.
  cudaMemPool_t own_pool_ = nullptr;
  CUdeviceptr reserved_ = 0;  // Mappings: the reserved range and what is mapped into it.
  size_t reserved_bytes_ = 0;
  size_t mapping_bytes_ = 0;
  std::vector<CUmemGenericAllocationHandle> handles_;
  int mapped_ = 0;  // How many of handles_ are mapped, in order from reserved_.
};

}  // namespace ltx

#endif  // LTX_TESTS_MEMORY_KIND_BUFFER_H_
