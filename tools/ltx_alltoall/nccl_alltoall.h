// The Ulysses all-to-all over NCCL, for comparison in the ltx_alltoall benchmark: grouped
// ncclSend/ncclRecv of contiguous pieces plus a local permute into (or out of) the final
// layout, on the same buffers and streams as ltx's call, each part timeable on its own.
// Batch 1 only: then each received piece of sequence -> heads lands contiguous in the output,
// and each sent piece of heads -> sequence is contiguous in the input.
#ifndef LTX_TOOLS_LTX_ALLTOALL_NCCL_ALLTOALL_H_
#define LTX_TOOLS_LTX_ALLTOALL_NCCL_ALLTOALL_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
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

class NcclAllToAll {
 public:
  // Allocates a staging buffer per rank for `layout` (batch must be 1) and plans the transfers
  // and permutes on `buffers` (one per rank, on `devices`). Errors: InvalidArgument for
  // batch > 1; CUDA's.
  static absl::StatusOr<std::unique_ptr<NcclAllToAll>> Create(
      const tools::NcclClique& clique, const std::vector<int>& devices,
      const AllToAllLayout& layout, const std::vector<RankBuffers>& buffers);
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
  std::vector<void*> staging_;
  std::vector<std::vector<tools::NcclPeerBytes>> transfers_;
  std::vector<PermuteParams> permutes_;
};

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLTOALL_NCCL_ALLTOALL_H_
