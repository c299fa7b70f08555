// Peer write access for cudaMalloc, stream-ordered pool and virtual-memory-API buffers.
#include "ltx/cuda/peer_memory.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/cuda/driver_api.h"
#include "ltx/cuda/relaxed_capture_mode.h"
#include "ltx/status_macros.h"

namespace ltx {
namespace {

// The driver functions this file calls, resolved once per process.
struct Driver {
  PFN_cuPointerGetAttributes_v7000 pointer_get_attributes = nullptr;
  PFN_cuPointerGetAttribute_v4000 pointer_get_attribute = nullptr;
  PFN_cuMemRetainAllocationHandle_v11000 retain_allocation_handle = nullptr;
  PFN_cuMemRelease_v10020 release = nullptr;
  PFN_cuMemGetAddressRange_v3020 get_address_range = nullptr;
  PFN_cuMemGetAccess_v10020 get_access = nullptr;
  PFN_cuMemSetAccess_v10020 set_access = nullptr;
};

absl::StatusOr<Driver> ResolveDriver() {
  Driver d;
  LTX_ASSIGN_OR_RETURN(d.pointer_get_attributes,
                       DriverFunction<PFN_cuPointerGetAttributes_v7000>("cuPointerGetAttributes"));
  LTX_ASSIGN_OR_RETURN(d.pointer_get_attribute,
                       DriverFunction<PFN_cuPointerGetAttribute_v4000>("cuPointerGetAttribute"));
  LTX_ASSIGN_OR_RETURN(
      d.retain_allocation_handle,
      DriverFunction<PFN_cuMemRetainAllocationHandle_v11000>("cuMemRetainAllocationHandle"));
  LTX_ASSIGN_OR_RETURN(d.release, DriverFunction<PFN_cuMemRelease_v10020>("cuMemRelease"));
  LTX_ASSIGN_OR_RETURN(d.get_address_range,
                       DriverFunction<PFN_cuMemGetAddressRange_v3020>("cuMemGetAddressRange"));
  LTX_ASSIGN_OR_RETURN(d.get_access, DriverFunction<PFN_cuMemGetAccess_v10020>("cuMemGetAccess"));
  LTX_ASSIGN_OR_RETURN(d.set_access, DriverFunction<PFN_cuMemSetAccess_v10020>("cuMemSetAccess"));
  return d;
}

absl::StatusOr<const Driver*> GetDriver() {
  static const absl::StatusOr<Driver>* const driver =
      new absl::StatusOr<Driver>(ResolveDriver());  // Never destroyed.
  if (!driver->ok()) return driver->status();
  return &**driver;
}

CUdeviceptr DevicePointer(const void* pointer) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(pointer));
}

// The buffer a call is about, for messages.
struct Buffer {
  const void* pointer;
  int64_t bytes;
  int owner_device;

  std::string Describe() const {
    return absl::StrFormat("buffer %p (%d bytes of GPU %d)", pointer, bytes, owner_device);
  }
};

enum class MemoryKind {
  kPeerAccess,  // cudaMalloc (legacy-IPC-capable memory): covered by cudaDeviceEnablePeerAccess.
  kPool,        // A stream-ordered memory pool.
  kMapping,     // The virtual memory API (cuMemCreate + cuMemMap).
  kOther,       // None of these.
};


// What the driver says of the memory at an address, in one query (cuPointerGetAttributes, which
// needs no current context and gives zeros for an address that is no CUDA memory).
struct PointerFacts {
  unsigned int memory_type = 0;  // CUmemorytype; 0: not CUDA memory.
  bool managed = false;
  int device = -1;
  CUmemoryPool pool = nullptr;  // The pool of pool memory, else null.
  bool legacy_ipc = false;      // cudaMalloc memory is; pools and mappings never are.
  uint64_t buffer_id = 0;       // Unique to one allocation for the process's life.
};

CUresult QueryPointer(const Driver& d, const void* pointer, PointerFacts* facts) {
  // Booleans are read through 8 zeroed bytes: the driver writes at most that many.
  uint64_t managed = 0;
  uint64_t legacy_ipc = 0;
  unsigned long long buffer_id = 0;  // NOLINT(runtime/int): the driver's type.
  CUpointer_attribute attributes[] = {
      CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
      CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
      CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, CU_POINTER_ATTRIBUTE_BUFFER_ID};
  void* data[] = {&facts->memory_type, &managed, &facts->device, &facts->pool, &legacy_ipc,
                  &buffer_id};
  const CUresult result = d.pointer_get_attributes(6, attributes, data, DevicePointer(pointer));
  facts->managed = managed != 0;
  facts->legacy_ipc = legacy_ipc != 0;
  facts->buffer_id = buffer_id;
  return result;
}

struct MemoryInfo {
  MemoryKind kind = MemoryKind::kOther;
  PointerFacts facts;
};

// What kind of memory `buffer` is, and the facts it was told by, or InvalidArgument if it is not
// device memory of its owner.
absl::StatusOr<MemoryInfo> Classify(const Driver& d, const Buffer& buffer) {
  MemoryInfo info;
  PointerFacts& facts = info.facts;
  const CUresult result = QueryPointer(d, buffer.pointer, &facts);
  if (result != CUDA_SUCCESS) {
    return absl::InvalidArgumentError(absl::StrCat(
        buffer.Describe(), ": ", DriverStatus(result, "cuPointerGetAttributes").message()));
  }
  if (facts.memory_type == 0) {
    return absl::InvalidArgumentError(absl::StrCat(buffer.Describe(), " is not CUDA memory"));
  }
  if (facts.managed) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is managed memory, which peers cannot store into; allocate it with cudaMalloc",
        buffer.Describe()));
  }
  if (facts.memory_type != CU_MEMORYTYPE_DEVICE || facts.device != buffer.owner_device) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is not device memory of GPU %d (memory type %d, device %d)",
                        buffer.Describe(), buffer.owner_device, facts.memory_type, facts.device));
  }
  // Pool memory and mappings are never legacy-IPC-capable; cudaMalloc memory is (as NCCL tells
  // them apart), and only memory mapped with cuMemMap has an allocation handle to retain.
  CUmemGenericAllocationHandle handle = 0;
  if (facts.pool != nullptr) {
    info.kind = MemoryKind::kPool;
  } else if (facts.legacy_ipc) {
    info.kind = MemoryKind::kPeerAccess;
  } else if (d.retain_allocation_handle(&handle, const_cast<void*>(buffer.pointer)) ==
             CUDA_SUCCESS) {
    d.release(handle);
    info.kind = MemoryKind::kMapping;
  }
  return info;
}

// Grants every device of `peers` read-write access to `pool` where it lacks it.
absl::Status EnsurePoolAccess(CUmemoryPool pool, const Buffer& buffer,
                              const std::vector<int>& peers) {
  std::vector<cudaMemAccessDesc> grants;
  for (int peer : peers) {
    cudaMemAccessDesc grant = {};
    grant.location.type = cudaMemLocationTypeDevice;
    grant.location.id = peer;
    grant.flags = cudaMemAccessFlagsProtReadWrite;
    cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
    const cudaError_t error = cudaMemPoolGetAccess(&flags, pool, &grant.location);
    if (error != cudaSuccess) {
      cudaGetLastError();
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s comes from a stream-ordered memory pool whose access for GPU %d cannot be read "
          "(%s); allocate it with cudaMalloc",
          buffer.Describe(), peer, CudaStatus(error, "cudaMemPoolGetAccess").message()));
    }
    if (flags != cudaMemAccessFlagsProtReadWrite) grants.push_back(grant);
  }
  if (grants.empty()) return absl::OkStatus();
  const cudaError_t error = cudaMemPoolSetAccess(pool, grants.data(), grants.size());
  if (error == cudaSuccess) return absl::OkStatus();
  cudaGetLastError();
  std::vector<int> denied;
  for (const cudaMemAccessDesc& grant : grants) denied.push_back(grant.location.id);
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s comes from a stream-ordered memory pool that GPU(s) %s may not write, and granting "
      "them access failed (%s); grant the peers read-write access to the pool with "
      "cudaMemPoolSetAccess, or allocate it with cudaMalloc",
      buffer.Describe(), absl::StrJoin(denied, ", "),
      CudaStatus(error, "cudaMemPoolSetAccess").message()));
}

// Grants every device of `peers` read-write access to `mapping` where it lacks it.
absl::Status EnsureMappingAccess(const Driver& d, const AddressRange& mapping, const Buffer& buffer,
                                 const std::vector<int>& peers) {
  std::vector<CUmemAccessDesc> grants;
  for (int peer : peers) {
    CUmemAccessDesc grant = {};
    grant.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    grant.location.id = peer;
    grant.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    unsigned long long flags = 0;  // NOLINT(runtime/int): the driver's type.
    const CUresult result = d.get_access(&flags, &grant.location, mapping.base);
    if (result != CUDA_SUCCESS) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s is mapped with the virtual memory API, and the access of GPU %d to its mapping "
          "[%#x, +%d) cannot be read (%s); allocate it with cudaMalloc",
          buffer.Describe(), peer, mapping.base, mapping.size,
          DriverStatus(result, "cuMemGetAccess").message()));
    }
    if (flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) grants.push_back(grant);
  }
  if (grants.empty()) return absl::OkStatus();
  const CUresult result = d.set_access(mapping.base, mapping.size, grants.data(), grants.size());
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  std::vector<int> denied;
  for (const CUmemAccessDesc& grant : grants) denied.push_back(grant.location.id);
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s is mapped with the virtual memory API (cuMemCreate + cuMemMap) without access for "
      "GPU(s) %s, and granting it on the mapping [%#x, +%d) failed (%s); grant the peers "
      "read-write access with cuMemSetAccess, or allocate it with cudaMalloc",
      buffer.Describe(), absl::StrJoin(denied, ", "), mapping.base, mapping.size,
      DriverStatus(result, "cuMemSetAccess").message()));
}

// EnsureMappingAccess on every mapping that `buffer` touches.
absl::Status EnsureMappingsAccess(const Driver& d, const Buffer& buffer,
                                  const std::vector<int>& peers) {
  auto mapping_of = [&d](uint64_t address) -> absl::StatusOr<AddressRange> {
    CUdeviceptr base = 0;
    size_t size = 0;
    LTX_RETURN_IF_ERROR(
        DriverStatus(d.get_address_range(&base, &size, address), "cuMemGetAddressRange"));
    return AddressRange{base, size};
  };
  absl::StatusOr<std::vector<AddressRange>> mappings =
      CoveringMappings(DevicePointer(buffer.pointer), buffer.bytes, mapping_of);
  if (!mappings.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is mapped with the virtual memory API, but not all of it is mapped (%s); map the "
        "whole buffer, or allocate it with cudaMalloc",
        buffer.Describe(), mappings.status().message()));
  }
  for (const AddressRange& mapping : *mappings) {
    LTX_RETURN_IF_ERROR(EnsureMappingAccess(d, mapping, buffer, peers));
  }
  return absl::OkStatus();
}

// For memory of no kind known here: OK if the driver says, with each peer's device current,
// that the peer may read and write it. Leaves a peer's device current.
absl::Status CheckPeersMayWrite(const Driver& d, const Buffer& buffer,
                                const std::vector<int>& peers) {
  for (int peer : peers) {
    const cudaError_t error = cudaSetDevice(peer);
    if (error != cudaSuccess) {
      cudaGetLastError();
      return CudaStatus(error, absl::StrCat(buffer.Describe(), ": making GPU ", peer, " current"));
    }
    uint64_t flags = 0;  // An enum, read through 8 zeroed bytes.
    const CUresult result = d.pointer_get_attribute(&flags, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS,
                                                    DevicePointer(buffer.pointer));
    if (result != CUDA_SUCCESS || flags != CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s is device memory of a kind other than cudaMalloc, a stream-ordered pool or a "
          "virtual-memory mapping, and GPU %d may not write it (%s); allocate it with cudaMalloc",
          buffer.Describe(), peer,
          result == CUDA_SUCCESS
              ? absl::StrCat("access flags ", flags)
              : DriverStatus(result, "cuPointerGetAttribute(ACCESS_FLAGS)").message()));
    }
  }
  return absl::OkStatus();
}

// EnsurePeerWritable with the owner's device current on the calling thread (it may leave
// another current).
absl::StatusOr<PeerGrant> EnsureOnOwner(const Driver& d, const Buffer& buffer,
                                        const std::vector<int>& peers) {
  LTX_ASSIGN_OR_RETURN(const MemoryInfo info, Classify(d, buffer));
  const RelaxedCaptureMode relaxed;
  PeerGrant grant;
  grant.buffer_id = info.facts.buffer_id;
  switch (info.kind) {
    case MemoryKind::kPeerAccess:
      grant.scope = PeerGrant::Scope::kProcess;
      return grant;
    case MemoryKind::kPool:
      LTX_RETURN_IF_ERROR(EnsurePoolAccess(info.facts.pool, buffer, peers));
      grant.scope = PeerGrant::Scope::kPool;
      return grant;
    case MemoryKind::kMapping:
      LTX_RETURN_IF_ERROR(EnsureMappingsAccess(d, buffer, peers));
      return grant;
    case MemoryKind::kOther:
      LTX_RETURN_IF_ERROR(CheckPeersMayWrite(d, buffer, peers));
      return grant;
  }
  return absl::InternalError("unknown memory kind");
}

}  // namespace

absl::StatusOr<std::vector<AddressRange>> CoveringMappings(
    uint64_t begin, int64_t bytes,
    absl::FunctionRef<absl::StatusOr<AddressRange>(uint64_t address)> mapping_of) {
  std::vector<AddressRange> mappings;
  if (bytes <= 0) return mappings;
  const uint64_t end = begin + static_cast<uint64_t>(bytes);
  for (uint64_t address = begin; address < end;) {
    absl::StatusOr<AddressRange> mapping = mapping_of(address);
    if (!mapping.ok()) {
      return absl::Status(mapping.status().code(),
                          absl::StrFormat("at byte %d of %d: %s", address - begin, bytes,
                                          mapping.status().message()));
    }
    if (mapping->base > address || address - mapping->base >= mapping->size) {
      return absl::InternalError(absl::StrFormat(
          "at byte %d of %d: the mapping found for %#x is [%#x, +%d), which does not hold it",
          address - begin, bytes, address, mapping->base, mapping->size));
    }
    mappings.push_back(*mapping);
    address = mapping->base + mapping->size;
  }
  return mappings;
}

absl::StatusOr<PeerGrant> EnsurePeerWritable(const void* pointer, int64_t bytes,
                                             int owner_device,
                                             absl::Span<const int> peer_devices) {
  const Buffer buffer{pointer, bytes, owner_device};
  if (pointer == nullptr || bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(buffer.Describe(), ": a non-null pointer and bytes >= 0 are needed"));
  }
  if (bytes == 0) return PeerGrant{};  // Nothing granted: checked again on every use.
  std::vector<int> peers;
  for (int peer : peer_devices) {
    if (peer != owner_device) peers.push_back(peer);
  }
  LTX_ASSIGN_OR_RETURN(const Driver* driver, GetDriver());
  int previous_device = -1;
  cudaError_t error = cudaGetDevice(&previous_device);
  if (error == cudaSuccess && previous_device != owner_device) {
    error = cudaSetDevice(owner_device);
  }
  if (error != cudaSuccess) {
    cudaGetLastError();
    return CudaStatus(error,
                      absl::StrCat(buffer.Describe(), ": making GPU ", owner_device, " current"));
  }
  absl::StatusOr<PeerGrant> grant = EnsureOnOwner(*driver, buffer, peers);
  cudaSetDevice(previous_device);
  return grant;
}

bool PeerGrantHolds(const void* pointer, int owner_device, const PeerGrant& grant) {
  if (grant.scope == PeerGrant::Scope::kMapping || grant.buffer_id == 0) return false;
  const absl::StatusOr<const Driver*> driver = GetDriver();
  if (!driver.ok()) return false;
  PointerFacts facts;
  if (QueryPointer(**driver, pointer, &facts) != CUDA_SUCCESS) return false;
  // The same allocation (an ID is never reused), still device memory of its GPU.
  return facts.memory_type == CU_MEMORYTYPE_DEVICE && !facts.managed &&
         facts.device == owner_device && facts.buffer_id == grant.buffer_id;
}

}  // namespace ltx
