// Making a GPU buffer writable by peer GPUs' stores. Memory from cudaMalloc is covered by the
// process-wide peer access (cudaDeviceEnablePeerAccess); memory from stream-ordered pools
// (cudaMallocAsync) and from the virtual memory API (cuMemCreate + cuMemMap, as PyTorch's
// caching allocator with expandable segments) is not: a peer's store into it faults and kills
// the CUDA context of every GPU. Pools need access granted per pool, mappings per mapping.
#ifndef LTX_CUDA_PEER_MEMORY_H_
#define LTX_CUDA_PEER_MEMORY_H_

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace ltx {

// A range of device addresses, e.g. one mapping of the virtual memory API.
struct AddressRange {
  uint64_t base = 0;
  uint64_t size = 0;
};

// The mappings that together hold [begin, begin + bytes), in address order, found by asking
// `mapping_of` for the mapping that holds an address: first `begin`, then the first address past
// each mapping found, until the end of the buffer. The first mapping may start before `begin`
// and the last may end after the buffer. Empty for bytes <= 0. Errors: the status of
// `mapping_of` (with the offset into the buffer it was asked about); Internal if it returns a
// range that does not hold the address it was asked about.
absl::StatusOr<std::vector<AddressRange>> CoveringMappings(
    uint64_t begin, int64_t bytes,
    absl::FunctionRef<absl::StatusOr<AddressRange>(uint64_t address)> mapping_of);

// What the peers' access to a buffer, once EnsurePeerWritable made it, belongs to, and so how
// long it lasts.
struct PeerGrant {
  enum class Scope {
    // cudaMalloc memory: peer access is the process's, for any such memory at any address.
    kProcess,
    // A stream-ordered pool: access is the pool's, for its later allocations too.
    kPool,
    // A virtual-memory mapping, or memory of another kind: access is the mapping's, and an
    // address unmapped and mapped again (an expandable segment released and grown back) has
    // none, so it is checked again on every use.
    kMapping,
  };
  Scope scope = Scope::kMapping;
  // The allocation granted (CU_POINTER_ATTRIBUTE_BUFFER_ID: never reused in a process); 0 where
  // the driver gave none.
  uint64_t buffer_id = 0;
};

// Makes `bytes` bytes at `pointer` (memory of GPU `owner_device`) writable by every device in
// `peer_devices` through peer stores, or explains why it cannot be. Entries equal to
// `owner_device` are skipped. By the kind of memory:
//   - cudaMalloc memory (told apart as legacy-IPC-capable memory): OK; peer access is
//     process-wide (cudaDeviceEnablePeerAccess, which the caller has enabled for every pair).
//   - stream-ordered pool memory (cudaMallocAsync, cudaMallocFromPoolAsync, any pool): grants
//     the peers read-write access to the pool with cudaMemPoolSetAccess where they lack it.
//     This opens the whole pool to them, present and future allocations alike, as NCCL's and
//     PyTorch's peer-access paths do.
//   - virtual memory API mappings (cuMemCreate + cuMemMap): grants the peers read-write access
//     with cuMemSetAccess on every mapping the buffer touches (a buffer may span several
//     mappings, as in expandable segments), each over the mapping's whole extent.
//   - other device memory (e.g. cudaMalloc memory where legacy IPC is unsupported): OK if the
//     driver reports read-write access for every peer (CU_POINTER_ATTRIBUTE_ACCESS_FLAGS with
//     the peer's device current), else InvalidArgument.
// Grants are made with the calling thread in relaxed stream-capture mode, so a first call
// during stream capture does not invalidate the capture.
// Errors: InvalidArgument for a null pointer, negative `bytes`, memory that is not device
// memory of `owner_device` (host, managed, another GPU's, not CUDA memory), or a grant the
// driver refuses (the message names the buffer and what to do instead); FailedPrecondition
// when no CUDA driver is available; others as CUDA reports them. OK without touching CUDA for
// bytes == 0 (nothing granted: the default PeerGrant, checked again on every use). Returns what
// the access belongs to (PeerGrant). Leaves no CUDA error behind. Thread-safe; the calling
// thread's current device is restored on return.
absl::StatusOr<PeerGrant> EnsurePeerWritable(const void* pointer, int64_t bytes,
                                             int owner_device, absl::Span<const int> peer_devices);

// Whether `grant`, which EnsurePeerWritable returned for memory of GPU `owner_device` at
// `pointer`, still covers the memory there, with one query of the driver and no device switch:
// for kProcess and kPool, the address still holds the allocation granted (its buffer ID), as
// device memory of that GPU; a new allocation there, of a pool or a kind without the grant, is
// not covered. Never for kMapping (call EnsurePeerWritable again: a mapping made again keeps
// no access), a grant without a buffer ID, or where the driver cannot be asked. Leaves no CUDA
// error behind. Thread-safe.
bool PeerGrantHolds(const void* pointer, int owner_device, const PeerGrant& grant);

}  // namespace ltx

#endif  // LTX_CUDA_PEER_MEMORY_H_
