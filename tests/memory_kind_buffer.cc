// Allocation and release of device memory of each kind.
#include "tests/memory_kind_buffer.h"

#include <cudaTypedefs.h>

#include "absl/strings/str_format.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/cuda/driver_api.h"
#include "ltx/status_macros.h"

namespace ltx {
namespace {

constexpr int64_t kAlignment = 256;

// The virtual memory API, resolved once per process.
struct VirtualMemoryApi {
  PFN_cuMemGetAllocationGranularity_v10020 get_granularity = nullptr;
  PFN_cuMemAddressReserve_v10020 reserve = nullptr;
  PFN_cuMemAddressFree_v10020 free = nullptr;
  PFN_cuMemCreate_v10020 create = nullptr;
  PFN_cuMemRelease_v10020 release = nullptr;
  PFN_cuMemMap_v10020 map = nullptr;
  PFN_cuMemUnmap_v10020 unmap = nullptr;
  PFN_cuMemSetAccess_v10020 set_access = nullptr;
};

absl::StatusOr<VirtualMemoryApi> ResolveVirtualMemoryApi() {
  VirtualMemoryApi api;
  LTX_ASSIGN_OR_RETURN(
      api.get_granularity,
      DriverFunction<PFN_cuMemGetAllocationGranularity_v10020>("cuMemGetAllocationGranularity"));
  LTX_ASSIGN_OR_RETURN(api.reserve,
                       DriverFunction<PFN_cuMemAddressReserve_v10020>("cuMemAddressReserve"));
  LTX_ASSIGN_OR_RETURN(api.free, DriverFunction<PFN_cuMemAddressFree_v10020>("cuMemAddressFree"));
  LTX_ASSIGN_OR_RETURN(api.create, DriverFunction<PFN_cuMemCreate_v10020>("cuMemCreate"));
  LTX_ASSIGN_OR_RETURN(api.release, DriverFunction<PFN_cuMemRelease_v10020>("cuMemRelease"));
  LTX_ASSIGN_OR_RETURN(api.map, DriverFunction<PFN_cuMemMap_v10020>("cuMemMap"));
  LTX_ASSIGN_OR_RETURN(api.unmap, DriverFunction<PFN_cuMemUnmap_v10020>("cuMemUnmap"));
  LTX_ASSIGN_OR_RETURN(api.set_access, DriverFunction<PFN_cuMemSetAccess_v10020>("cuMemSetAccess"));
  return api;
}

absl::StatusOr<const VirtualMemoryApi*> GetVirtualMemoryApi() {
  static const absl::StatusOr<VirtualMemoryApi>* const api =
      new absl::StatusOr<VirtualMemoryApi>(ResolveVirtualMemoryApi());  // Never destroyed.
  if (!api->ok()) return api->status();
  return &**api;
}

int64_t RoundUp(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace

const char* MemoryKindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kMalloc:
      return "malloc";
    case MemoryKind::kDefaultPool:
      return "default_pool";
    case MemoryKind::kOwnPool:
      return "own_pool";
    case MemoryKind::kMapped:
      return "mapped";
    case MemoryKind::kTwoMappings:
      return "two_mappings";
  }
  return "unknown";
}

absl::optional<MemoryKind> ParseMemoryKind(absl::string_view name) {
  for (MemoryKind kind : kAllMemoryKinds) {
    if (name == MemoryKindName(kind)) return kind;
  }
  return absl::nullopt;
}

void PrintTo(MemoryKind kind, std::ostream* os) { *os << MemoryKindName(kind); }

absl::StatusOr<std::unique_ptr<MemoryKindBuffer>> MemoryKindBuffer::Allocate(MemoryKind kind,
                                                                             int device,
                                                                             int64_t bytes) {
  std::unique_ptr<MemoryKindBuffer> buffer(new MemoryKindBuffer(kind, device));
  LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device), "cudaSetDevice"));
  switch (kind) {
    case MemoryKind::kMalloc:
      LTX_RETURN_IF_ERROR(
          CudaStatus(cudaMalloc(reinterpret_cast<void**>(&buffer->data_), bytes), "cudaMalloc"));
      break;
    case MemoryKind::kDefaultPool:
    case MemoryKind::kOwnPool:
      LTX_RETURN_IF_ERROR(buffer->AllocateFromPool(bytes));
      break;
    case MemoryKind::kMapped:
    case MemoryKind::kTwoMappings:
      LTX_RETURN_IF_ERROR(buffer->AllocateMapped(bytes, kind == MemoryKind::kMapped ? 1 : 2));
      break;
  }
  return buffer;
}

absl::Status MemoryKindBuffer::AllocateFromPool(int64_t bytes) {
  LTX_RETURN_IF_ERROR(
      CudaStatus(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate"));
  void* data = nullptr;
  if (kind_ == MemoryKind::kDefaultPool) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaMallocAsync(&data, bytes, stream_), "cudaMallocAsync"));
  } else {
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device_;
    LTX_RETURN_IF_ERROR(CudaStatus(cudaMemPoolCreate(&own_pool_, &props), "cudaMemPoolCreate"));
    LTX_RETURN_IF_ERROR(CudaStatus(cudaMallocFromPoolAsync(&data, bytes, own_pool_, stream_),
                                   "cudaMallocFromPoolAsync"));
  }
  data_ = static_cast<uint8_t*>(data);
  return CudaStatus(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

// Reserves room for `mappings` mappings of equal size, maps each as its own allocation, and
// grants the owner (only) read-write access to each, as expandable segments do.
absl::Status MemoryKindBuffer::AllocateMapped(int64_t bytes, int mappings) {
  LTX_ASSIGN_OR_RETURN(const VirtualMemoryApi* api, GetVirtualMemoryApi());
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device_;
  size_t granularity = 0;
  LTX_RETURN_IF_ERROR(
      DriverStatus(api->get_granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                   "cuMemGetAllocationGranularity"));
  // With two mappings, each holds half the buffer and the alignment slack.
  mapping_bytes_ = RoundUp(mappings == 1 ? bytes : bytes / 2 + kAlignment, granularity);
  reserved_bytes_ = mapping_bytes_ * mappings;
  LTX_RETURN_IF_ERROR(DriverStatus(api->reserve(&reserved_, reserved_bytes_, granularity, 0, 0),
                                   "cuMemAddressReserve"));
  LTX_RETURN_IF_ERROR(MapNew(mappings));
  const CUdeviceptr middle = reserved_ + mapping_bytes_;
  const CUdeviceptr start =
      mappings == 1 ? reserved_ : (middle - bytes / 2) / kAlignment * kAlignment;
  data_ = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(start));
  return absl::OkStatus();
}

absl::Status MemoryKindBuffer::MapNew(int mappings) {
  LTX_ASSIGN_OR_RETURN(const VirtualMemoryApi* api, GetVirtualMemoryApi());
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device_;
  CUmemAccessDesc owner = {};
  owner.location = prop.location;
  owner.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  for (int i = 0; i < mappings; ++i) {
    CUmemGenericAllocationHandle handle = 0;
    LTX_RETURN_IF_ERROR(
        DriverStatus(api->create(&handle, mapping_bytes_, &prop, 0), "cuMemCreate"));
    handles_.push_back(handle);
    const CUdeviceptr at = reserved_ + i * mapping_bytes_;
    LTX_RETURN_IF_ERROR(DriverStatus(api->map(at, mapping_bytes_, 0, handle, 0), "cuMemMap"));
    ++mapped_;
    LTX_RETURN_IF_ERROR(
        DriverStatus(api->set_access(at, mapping_bytes_, &owner, 1), "cuMemSetAccess"));
  }
  return absl::OkStatus();
}

absl::Status MemoryKindBuffer::Remap() {
  if (!remappable()) {
    return absl::FailedPreconditionError(
        absl::StrCat(MemoryKindName(kind_), " memory is not mapped with the virtual memory API"));
  }
  LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device_), "cudaSetDevice"));
  LTX_RETURN_IF_ERROR(UnmapAll());
  return MapNew(static_cast<int>(reserved_bytes_ / mapping_bytes_));
}

// Only a buffer that reserved a range (and so resolved the API) has mappings. Unmaps and releases
// every one, and returns the first error.
absl::Status MemoryKindBuffer::UnmapAll() {
  const VirtualMemoryApi& api = **GetVirtualMemoryApi();
  absl::Status status;
  for (int i = 0; i < mapped_; ++i) {
    status.Update(
        DriverStatus(api.unmap(reserved_ + i * mapping_bytes_, mapping_bytes_), "cuMemUnmap"));
  }
  for (CUmemGenericAllocationHandle handle : handles_) {
    status.Update(DriverStatus(api.release(handle), "cuMemRelease"));
  }
  mapped_ = 0;
  handles_.clear();
  return status;
}

MemoryKindBuffer::~MemoryKindBuffer() {
  cudaSetDevice(device_);
  if (stream_ != nullptr) {
    if (data_ != nullptr) cudaFreeAsync(data_, stream_);
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  } else if (kind_ == MemoryKind::kMalloc) {
    cudaFree(data_);
  }
  if (own_pool_ != nullptr) cudaMemPoolDestroy(own_pool_);
  if (reserved_ != 0) {
    // Only a buffer that reserved a range resolved the API.
    UnmapAll().IgnoreError();
    (*GetVirtualMemoryApi())->free(reserved_, reserved_bytes_);
  }
  cudaGetLastError();
}

}  // namespace ltx
