// Peer-access checks, and enabling peer access once per pair of primary contexts.
#include "ltx/peer_access.h"

#include <cuda_runtime_api.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ltx/cuda_status.h"
#include "ltx/peer_pair_record.h"
#include "ltx/primary_context.h"
#include "ltx/status_macros.h"

namespace ltx {
namespace {

PeerPairRecord& EnabledPairs() {
  static PeerPairRecord* const enabled = new PeerPairRecord;  // Never destroyed.
  return *enabled;
}

// Enables access from the current device `device` to `peer`, accepting access already on.
absl::Status EnableOnePair(int device, int peer) {
  const cudaError_t error = cudaDeviceEnablePeerAccess(peer, 0);
  if (error == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();
    return absl::OkStatus();
  }
  if (error != cudaSuccess) cudaGetLastError();
  return CudaStatus(error,
                    absl::StrFormat("cudaDeviceEnablePeerAccess(GPU %d -> GPU %d)", device, peer));
}

}  // namespace

absl::Status CheckPeerAccess(const std::vector<int>& devices) {
  std::vector<std::string> missing;
  for (int a : devices) {
    for (int b : devices) {
      if (a == b) continue;
      int can_access = 0;
      LTX_RETURN_IF_ERROR(CudaStatus(cudaDeviceCanAccessPeer(&can_access, a, b),
                                     absl::StrFormat("cudaDeviceCanAccessPeer(%d, %d)", a, b)));
      if (!can_access) missing.push_back(absl::StrFormat("%d->%d", a, b));
    }
  }
  if (missing.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("GPU pairs without peer access (ltx stores directly into peers' memory): ",
                   absl::StrJoin(missing, ", ")));
}

absl::StatusOr<bool> HaveNativePeerAtomics(const std::vector<int>& devices) {
  for (int a : devices) {
    for (int b : devices) {
      if (a == b) continue;
      int native_atomics = 0;
      LTX_RETURN_IF_ERROR(CudaStatus(
          cudaDeviceGetP2PAttribute(&native_atomics, cudaDevP2PAttrNativeAtomicSupported, a, b),
          absl::StrFormat("cudaDeviceGetP2PAttribute(NativeAtomicSupported, %d, %d)", a, b)));
      if (!native_atomics) return false;
    }
  }
  return true;
}

absl::Status EnablePeerAccess(int device, const std::vector<int>& peers) {
  return EnabledPairs().EnableMissing(device, peers, PrimaryContextId, EnableOnePair);
}

}  // namespace ltx
