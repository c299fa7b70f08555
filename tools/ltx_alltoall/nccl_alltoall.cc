// Planning and enqueueing the NCCL side of the ltx_alltoall benchmark.
#include "tools/ltx_alltoall/nccl_alltoall.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "ltx/cuda_status.h"
#include "ltx/status_macros.h"

namespace ltx {
namespace {

// Blocks per piece of the permute.
constexpr int kPermuteBlocksPerPiece = 16;

}  // namespace

NcclAllToAll::NcclAllToAll(const tools::NcclClique& clique, std::vector<int> devices,
                           std::vector<cudaStream_t> streams, bool permute_first)
    : clique_(clique),
      devices_(std::move(devices)),
      streams_(std::move(streams)),
      permute_first_(permute_first) {}

NcclAllToAll::~NcclAllToAll() {
  for (size_t rank = 0; rank < staging_.size(); ++rank) {
    cudaSetDevice(devices_[rank]);
    cudaStreamSynchronize(streams_[rank]);
    cudaFree(staging_[rank]);
  }
  cudaGetLastError();
}

absl::StatusOr<std::unique_ptr<NcclAllToAll>> NcclAllToAll::Create(
    const tools::NcclClique& clique, const std::vector<int>& devices, const AllToAllLayout& layout,
    const std::vector<RankBuffers>& buffers) {
  const AllToAllGeometry& g = layout.geometry;
  if (g.batch != 1) {
    return absl::InvalidArgumentError("the NCCL comparison runs batch 1 only");
  }
  const bool seq_to_heads = !g.heads_to_seq;
  std::vector<cudaStream_t> streams;
  for (const RankBuffers& b : buffers) streams.push_back(b.stream);
  std::unique_ptr<NcclAllToAll> op(new NcclAllToAll(clique, devices, streams, seq_to_heads));
  const int world = layout.world_size;
  const int64_t group = g.group_bytes;
  for (int r = 0; r < world; ++r) {
    // The sequence-sharded buffer of rank r, packed by head group: [world][count_r, H_r, D].
    const int64_t chunk = g.token_counts[r] * group;
    void* staging = nullptr;
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(devices[r]), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(CudaStatus(cudaMalloc(&staging, std::max<int64_t>(chunk * world, 1)),
                                   "cudaMalloc(staging)"));
    op->staging_.push_back(staging);
    auto* packed = static_cast<uint8_t*>(staging);
    PermuteParams permute;
    permute.src = seq_to_heads ? buffers[r].input : staging;
    permute.dst = seq_to_heads ? staging : buffers[r].output;
    permute.piece_count = world;
    std::vector<tools::NcclPeerBytes> peers(world);
    for (int p = 0; p < world; ++p) {
      const PieceSide packed_side = {chunk, p * chunk, group};
      if (seq_to_heads) {
        // Pack r's tokens of head group p; send chunk p to p; receive p's tokens in place.
        permute.pieces[p] = PieceOf(g, r, p);
        permute.pieces[p].dst = packed_side;
        peers[p].send = packed + p * chunk;
        peers[p].send_bytes = chunk;
        peers[p].recv = static_cast<uint8_t*>(buffers[r].output) + g.prefix_tokens[p] * group;
        peers[p].recv_bytes = g.token_counts[p] * group;
      } else {
        // Send p's tokens of r's head group as they lie; receive r's tokens of head group p
        // into chunk p, and unpack them into the heads of p.
        permute.pieces[p] = PieceOf(g, p, r);
        permute.pieces[p].src = packed_side;
        peers[p].send = static_cast<const uint8_t*>(buffers[r].input) + g.prefix_tokens[p] * group;
        peers[p].send_bytes = g.token_counts[p] * group;
        peers[p].recv = packed + p * chunk;
        peers[p].recv_bytes = chunk;
      }
    }
    op->permutes_.push_back(permute);
    op->transfers_.push_back(std::move(peers));
  }
  return op;
}

absl::Status NcclAllToAll::Transfer() { return clique_.AllToAll(transfers_, streams_); }

absl::Status NcclAllToAll::Permute() {
  for (size_t rank = 0; rank < permutes_.size(); ++rank) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(devices_[rank]), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(
        CudaStatus(LaunchPermute(permutes_[rank], kPermuteBlocksPerPiece, streams_[rank]),
                   absl::StrFormat("permute on rank %d", rank)));
  }
  return absl::OkStatus();
}

absl::Status NcclAllToAll::Run() {
  if (permute_first_) {
    LTX_RETURN_IF_ERROR(Permute());
    return Transfer();
  }
  LTX_RETURN_IF_ERROR(Transfer());
  return Permute();
}

}  // namespace ltx
