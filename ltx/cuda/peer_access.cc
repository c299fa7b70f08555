// Peer-access checks, and enabling peer access once per pair of primary contexts.
#include "ltx/cuda/peer_access.h"

#include <cuda_runtime_api.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/cuda/peer_pair_record.h"
#include "ltx/cuda/primary_context.h"
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

// The ordered pairs of `devices` ("0->2") for which `attribute` (named `name` in errors) is 0.
absl::StatusOr<std::vector<std::string>> PairsWithout(const std::vector<int>& devices,
                                                      cudaDeviceP2PAttr attribute,
                                                      const char* name) {
  std::vector<std::string> missing;
  for (int a : devices) {
    for (int b : devices) {
      if (a == b) continue;
      int value = 0;
      LTX_RETURN_IF_ERROR(
          CudaStatus(cudaDeviceGetP2PAttribute(&value, attribute, a, b),
                     absl::StrFormat("cudaDeviceGetP2PAttribute(%s, %d, %d)", name, a, b)));
      if (value == 0) missing.push_back(absl::StrFormat("%d->%d", a, b));
    }
  }
  return missing;
}

}  // namespace

absl::Status CheckPeerAccess(const std::vector<int>& devices) {
  LTX_ASSIGN_OR_RETURN(const std::vector<std::string> missing,
                       PairsWithout(devices, cudaDevP2PAttrAccessSupported, "AccessSupported"));
  if (missing.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("GPU pairs without peer access (ltx stores directly into peers' memory): ",
                   absl::StrJoin(missing, ", ")));
}

absl::StatusOr<bool> HaveNativePeerAtomics(const std::vector<int>& devices) {
  LTX_ASSIGN_OR_RETURN(
      const std::vector<std::string> missing,
      PairsWithout(devices, cudaDevP2PAttrNativeAtomicSupported, "NativeAtomicSupported"));
  return missing.empty();
}

absl::Status EnablePeerAccess(int device, const std::vector<int>& peers) {
  return EnabledPairs().EnableMissing(device, peers, PrimaryContextId, EnableOnePair);
}

}  // namespace ltx
