// Peer access between the GPUs of a Runtime: checking that every pair supports it, and enabling
// it once per pair for the whole process (CUDA's setting is per process and outlives any one
// Runtime, so it is never disabled; only a cudaDeviceReset turns it off).
#ifndef LTX_CUDA_PEER_ACCESS_H_
#define LTX_CUDA_PEER_ACCESS_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ltx {

// OK if every ordered pair of `devices` supports peer access; FailedPrecondition listing the
// pairs that do not ("0->2, 2->0"). Thread-safe.
absl::Status CheckPeerAccess(const std::vector<int>& devices);

// True if every ordered pair of `devices` has native atomics on each other's memory
// (cudaDevP2PAttrNativeAtomicSupported: NVLink); false if any pair lacks them. Errors: as CUDA
// reports them. Thread-safe.
absl::StatusOr<bool> HaveNativePeerAtomics(const std::vector<int>& devices);

// Enables access from the calling thread's current device `device` to each of `peers` (other
// entries equal to `device` are skipped). Pairs this process already enabled are not asked
// again, so that a second Runtime raises no "already enabled" API error (compute-sanitizer
// reports those); access enabled by someone else is accepted. The record of enabled pairs is
// keyed by both GPUs' primary contexts (ltx/cuda/peer_pair_record.h), so a pair is enabled again
// after a cudaDeviceReset of either GPU. The calling thread's current device stays `device`.
// Thread-safe.
absl::Status EnablePeerAccess(int device, const std::vector<int>& peers);

}  // namespace ltx

#endif  // LTX_CUDA_PEER_ACCESS_H_
