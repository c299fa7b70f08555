// The Ulysses all-to-all over NCCL, for comparison in the ltx_alltoall benchmark: grouped
// ncclSend/ncclRecv of contiguous pieces plus a local permute into (or out of) the final
// layout, on the same buffers and streams as ltx's call, each part timeable on its own; or, for
// NCCL's copy-engine collectives, one ncclAlltoAll of equal pieces between buffers of symmetric
// windows in place of the send/recv.
// Batch 1 only: then each received piece of sequence -> heads lands contiguous in the output,
// and each sent piece of heads -> sequence is contiguous in the input.
#ifndef LTX_TOOLS_LTX_ALLTOALL_NCCL_ALLTOALL_H_
#define LTX_TOOLS_LTX_ALLTOALL_NCCL_ALLTOALL_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ltx/collectives/alltoall_layout.h"
#include "ltx/rank_buffers.h"
#include "tools/bench/nccl_library.h"
#include "tools/ltx_alltoall/permute_kernel.h"

namespace ltx {

// One rank's part of the NCCL all-to-all: its permute, and what it sends to and receives from
// each peer.
struct NcclRankPlan {
  PermuteParams permute;
  std::vector<tools::NcclPeerBytes> peers;
};

// Bytes of rank `rank`'s staging buffer: its sequence shard, packed by head group.
int64_t NcclStagingBytes(const AllToAllLayout& layout, int rank);

// Plans rank `rank` of `layout` (batch 1) on `buffers`, with NcclStagingBytes of staging at
// `staging`. Sequence -> heads: pack the input into staging by head group, send chunk p to rank
// p, receive p's tokens straight into the output. Heads -> sequence: send p's tokens as they lie
// in the input, receive into chunk p of staging, unpack into the output. Pure (addresses only).
NcclRankPlan PlanNcclRank(const AllToAllLayout& layout, int rank, const RankBuffers& buffers,
                          void* staging);

// The bytes of every piece when `peers` (one rank's plan) is what one ncclAlltoAll moves: every
// piece sent and received is that size, and piece p lies at p times it from piece 0 on both
// sides. nullopt otherwise (uneven tokens or heads). Pure.
std::optional<size_t> EqualPieceBytes(const std::vector<tools::NcclPeerBytes>& peers);

// How the NCCL all-to-all moves its pieces.
struct NcclAllToAllOptions {
  // One staging buffer per rank of at least NcclStagingBytes (e.g. in a window); empty:
  // cudaMalloc'd and owned.
  std::vector<void*> staging;
  // One ncclAlltoAll per rank (needs EqualPieceBytes on every rank) instead of grouped
  // ncclSend/ncclRecv.
  bool collective = false;
};

class NcclAllToAll {
 public:
  // Allocates a staging buffer per rank for `layout` (batch must be 1) and plans the transfers
  // and permutes on `buffers` (one per rank, on `devices`), as `options` say. Errors:
  // InvalidArgument for batch > 1, or for a collective transfer whose pieces are not equal
  // (saying so); CUDA's.
  static absl::StatusOr<std::unique_ptr<NcclAllToAll>> Create(
      const tools::NcclClique& clique, const std::vector<int>& devices,
      const AllToAllLayout& layout, const std::vector<RankBuffers>& buffers,
      const NcclAllToAllOptions& options = {});
  ~NcclAllToAll();

  NcclAllToAll(const NcclAllToAll&) = delete;
  NcclAllToAll& operator=(const NcclAllToAll&) = delete;

  // Enqueues the NCCL transfers alone (from the thread that calls).
  absl::Status Transfer();
  // Enqueues the permute alone on every rank.
  absl::Status Permute();
  // The whole op: permute then transfer (sequence -> heads), or transfer then permute.
  absl::Status Run();

 private:
  NcclAllToAll(const tools::NcclClique& clique, std::vector<int> devices,
               std::vector<cudaStream_t> streams, bool permute_first);

  const tools::NcclClique& clique_;
  const std::vector<int> devices_;
  const std::vector<cudaStream_t> streams_;
  const bool permute_first_;
  std::vector<void*> staging_;  // Owned (cudaMalloc); empty when given.
  std::vector<std::vector<tools::NcclPeerBytes>> transfers_;
  size_t piece_bytes_ = 0;  // Non-zero: one ncclAlltoAll of pieces of this size.
  std::vector<PermuteParams> permutes_;
};

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLTOALL_NCCL_ALLTOALL_H_
