// The record of the ordered GPU pairs whose peer access this process has enabled
// (cudaDeviceEnablePeerAccess). Enabling a pair twice raises a "peer access already enabled" API
// error, which compute-sanitizer reports, so each pair is enabled once; but a cudaDeviceReset of
// either GPU destroys its primary context and turns the pair's access off with it. The record is
// therefore keyed by the identities of both GPUs' primary contexts: after a reset the pair has a
// new key and is enabled again.
#ifndef LTX_CUDA_PEER_PAIR_RECORD_H_
#define LTX_CUDA_PEER_PAIR_RECORD_H_

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace ltx {

class PeerPairRecord {
 public:
  // The id of GPU `device`'s primary context (ltx/cuda/primary_context.h in the product).
  using ContextIdFunction = absl::FunctionRef<absl::StatusOr<uint64_t>(int device)>;
  // Enables access from GPU `device` to GPU `peer`; OK if it is on afterwards.
  using EnableFunction = absl::FunctionRef<absl::Status(int device, int peer)>;

  PeerPairRecord() = default;
  PeerPairRecord(const PeerPairRecord&) = delete;
  PeerPairRecord& operator=(const PeerPairRecord&) = delete;

  // For each entry `peer` of `peers` other than `device`, in order: unless the pair of contexts
  // (context_id(device), context_id(peer)) is recorded, calls enable(device, peer) and records
  // the pair when it returns OK. Returns the first error of `context_id` or `enable` and stops
  // there; the pairs enabled before it stay recorded, and a failed pair is tried again by the
  // next call. Thread-safe: calls are serialised, so no pair is enabled twice at once.
  absl::Status EnableMissing(int device, const std::vector<int>& peers,
                             ContextIdFunction context_id, EnableFunction enable);

 private:
  absl::Mutex mu_;
  // (context id of the accessing GPU, context id of the accessed GPU).
  std::set<std::pair<uint64_t, uint64_t>> enabled_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ltx

#endif  // LTX_CUDA_PEER_PAIR_RECORD_H_
