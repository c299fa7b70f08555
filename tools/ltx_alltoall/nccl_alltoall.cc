// Planning and enqueueing the NCCL side of the ltx_alltoall benchmark.
#include "tools/ltx_alltoall/nccl_alltoall.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "ltx/cuda/cuda_status.h"
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

int64_t NcclStagingBytes(const AllToAllLayout& layout, int rank) {
  return layout.geometry.token_counts[rank] * layout.geometry.token_bytes;
}

NcclRankPlan PlanNcclRank(const AllToAllLayout& layout, int rank, const RankBuffers& buffers,
                          void* staging) {
  const AllToAllGeometry& g = layout.geometry;
  const int world = layout.world_size;
  const int64_t count = g.token_counts[rank];
  const int64_t own_group = g.group_bytes[rank];  // One token of rank's head group.
  auto* packed = static_cast<uint8_t*>(staging);
  NcclRankPlan plan;
  plan.permute.src = g.heads_to_seq ? staging : buffers.input;
  plan.permute.dst = g.heads_to_seq ? buffers.output : staging;
  plan.permute.piece_count = world;
  plan.peers.resize(world);
  for (int p = 0; p < world; ++p) {
    // Chunk p of the staging: rank's tokens of head group p.
    const int64_t chunk = count * g.group_bytes[p];
    const int64_t chunk_offset = count * g.group_offsets[p];
    const PieceSide packed_side = {chunk, chunk_offset, g.group_bytes[p]};
    tools::NcclPeerBytes& peer = plan.peers[p];
    if (!g.heads_to_seq) {
      // Pack rank's tokens of head group p; send chunk p to p; receive p's tokens in place.
      plan.permute.pieces[p] = PieceOf(g, rank, p);
      plan.permute.pieces[p].dst = packed_side;
      peer.send = packed + chunk_offset;
      peer.send_bytes = chunk;
      peer.recv = static_cast<uint8_t*>(buffers.output) + g.prefix_tokens[p] * own_group;
      peer.recv_bytes = g.token_counts[p] * own_group;
    } else {
      // Send p's tokens of rank's head group as they lie; receive rank's tokens of head group
      // p into chunk p, and unpack them into the heads of p.
      plan.permute.pieces[p] = PieceOf(g, p, rank);
      plan.permute.pieces[p].src = packed_side;
      peer.send = static_cast<const uint8_t*>(buffers.input) + g.prefix_tokens[p] * own_group;
      peer.send_bytes = g.token_counts[p] * own_group;
      peer.recv = packed + chunk_offset;
      peer.recv_bytes = chunk;
    }
  }
  return plan;
}

std::optional<size_t> EqualPieceBytes(const std::vector<tools::NcclPeerBytes>& peers) {
  if (peers.empty()) return std::nullopt;
  const tools::NcclPeerBytes& first = peers[0];
  const size_t bytes = first.send_bytes;
  for (size_t p = 0; p < peers.size(); ++p) {
    const tools::NcclPeerBytes& peer = peers[p];
    if (peer.send_bytes != bytes || peer.recv_bytes != bytes ||
        static_cast<const uint8_t*>(peer.send) !=
            static_cast<const uint8_t*>(first.send) + p * bytes ||
        static_cast<uint8_t*>(peer.recv) != static_cast<uint8_t*>(first.recv) + p * bytes) {
      return std::nullopt;
    }
  }
  return bytes;
}

absl::StatusOr<std::unique_ptr<NcclAllToAll>> NcclAllToAll::Create(
    const tools::NcclClique& clique, const std::vector<int>& devices, const AllToAllLayout& layout,
    const std::vector<RankBuffers>& buffers, const NcclAllToAllOptions& options) {
  if (layout.geometry.batch != 1) {
    return absl::InvalidArgumentError("the NCCL comparison runs batch 1 only");
  }
  std::vector<cudaStream_t> streams;
  for (const RankBuffers& b : buffers) streams.push_back(b.stream);
  std::unique_ptr<NcclAllToAll> op(
      new NcclAllToAll(clique, devices, streams, !layout.geometry.heads_to_seq));
  for (int r = 0; r < layout.world_size; ++r) {
    void* staging = nullptr;
    if (options.staging.empty()) {
      LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(devices[r]), "cudaSetDevice"));
      LTX_RETURN_IF_ERROR(
          CudaStatus(cudaMalloc(&staging, std::max<int64_t>(NcclStagingBytes(layout, r), 1)),
                     "cudaMalloc(staging)"));
      op->staging_.push_back(staging);
    } else {
      staging = options.staging[r];
    }
    NcclRankPlan plan = PlanNcclRank(layout, r, buffers[r], staging);
    op->permutes_.push_back(plan.permute);
    op->transfers_.push_back(std::move(plan.peers));
  }
  if (!options.collective) return op;
  const std::optional<size_t> first = EqualPieceBytes(op->transfers_[0]);
  for (int r = 0; r < layout.world_size; ++r) {
    if (!first.has_value() || *first == 0 || EqualPieceBytes(op->transfers_[r]) != first) {
      return absl::InvalidArgumentError(
          "ncclAlltoAll moves equal pieces only; this shape's pieces differ (uneven tokens or "
          "heads)");
    }
  }
  op->piece_bytes_ = *first;
  return op;
}

absl::Status NcclAllToAll::Transfer() {
  if (piece_bytes_ == 0) return clique_.AllToAll(transfers_, streams_);
  std::vector<const void*> sends;
  std::vector<void*> recvs;
  for (const std::vector<tools::NcclPeerBytes>& peers : transfers_) {
    sends.push_back(peers[0].send);
    recvs.push_back(peers[0].recv);
  }
  return clique_.AlltoAll(sends, recvs, piece_bytes_, streams_);
}

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
