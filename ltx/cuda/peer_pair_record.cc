// Enabled peer pairs, keyed by primary context ids.
#include "ltx/cuda/peer_pair_record.h"

#include "ltx/status_macros.h"

namespace ltx {

absl::Status PeerPairRecord::EnableMissing(int device, const std::vector<int>& peers,
                                           ContextIdFunction context_id, EnableFunction enable) {
  absl::MutexLock lock(&mu_);
  LTX_ASSIGN_OR_RETURN(const uint64_t device_context, context_id(device));
  for (int peer : peers) {
    if (peer == device) continue;
    LTX_ASSIGN_OR_RETURN(const uint64_t peer_context, context_id(peer));
    const std::pair<uint64_t, uint64_t> pair(device_context, peer_context);
    if (enabled_.count(pair) > 0) continue;
    LTX_RETURN_IF_ERROR(enable(device, peer));
    enabled_.insert(pair);
  }
  return absl::OkStatus();
}

}  // namespace ltx
