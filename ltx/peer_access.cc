// Peer-access checks and the process-wide record of enabled pairs.
#include "ltx/peer_access.h"

#include <cuda_runtime_api.h>

#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "ltx/cuda_status.h"
#include "ltx/status_macros.h"

namespace ltx {
namespace {

struct EnabledPairs {
  absl::Mutex mu;
  std::set<std::pair<int, int>> pairs ABSL_GUARDED_BY(mu);
};

EnabledPairs& Enabled() {
  static EnabledPairs* const enabled = new EnabledPairs;  // Never destroyed.
  return *enabled;
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
  EnabledPairs& enabled = Enabled();
  absl::MutexLock lock(&enabled.mu);
  for (int peer : peers) {
    if (peer == device || enabled.pairs.count({device, peer}) > 0) continue;
    const cudaError_t error = cudaDeviceEnablePeerAccess(peer, 0);
    if (error == cudaErrorPeerAccessAlreadyEnabled) {
      cudaGetLastError();
    } else {
      LTX_RETURN_IF_ERROR(CudaStatus(
          error, absl::StrFormat("cudaDeviceEnablePeerAccess(GPU %d -> GPU %d)", device, peer)));
    }
    enabled.pairs.insert({device, peer});
  }
  return absl::OkStatus();
}

}  // namespace ltx
