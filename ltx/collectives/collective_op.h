// One call of a collective as the Runtime's one funnel sees it, whatever the collective: the
// bytes of each rank's buffers, what each rank sends one target, and how to launch its kernel
// or carry it on the copy engines. Each collective fills one (ltx/collectives/allgather_op.h,
// alltoall_op.h); the Runtime validates, resolves and launches every collective through it.
#ifndef LTX_COLLECTIVES_COLLECTIVE_OP_H_
#define LTX_COLLECTIVES_COLLECTIVE_OP_H_

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/wire/collective.h"
#include "kernels/wire/entry_announcement.h"
#include "kernels/wire/signal_layout.h"
#include "ltx/rank_buffers.h"
#include "ltx/runtime/buffer_checks.h"
#include "ltx/runtime/resolved_call.h"
#include "ltx/transport/copy_engine/strided_copy.h"
#include "ltx/transport/peer_store/peer_store_transport.h"
#include "ltx/wire_format.h"

namespace ltx {

struct CollectiveOp {
  Collective collective = Collective::kAllGather;
  // The per-rank entry point, for messages ("AllGatherRank").
  const char* rank_call = "";
  // Tensors of one shape the op moves (RankBuffers: input and output, then more_inputs and
  // more_outputs); the bytes below are each tensor's.
  int tensors = 1;
  // How the op's rows travel (AllGatherShape::wire, AllToAllShape::wire): the FP8 wire runs on
  // its own kernels.
  WireFormat wire = WireFormat::kNative;
  std::array<int64_t, kMaxWorldSize> input_bytes = {};
  std::array<int64_t, kMaxWorldSize> output_bytes = {};
  // The most each rank sends to one target, over all tensors: the protocol and block count
  // depend on it.
  std::array<int64_t, kMaxWorldSize> shard_bytes = {};
  // Where an in-place input may start in each rank's output (kNotInPlace: nowhere).
  std::array<int64_t, kMaxWorldSize> in_place_offset = {};
  // Whether the peers read each rank's input (the reductions' pull protocol) instead of
  // storing into its output: then the input, not the output, must be open to the peers.
  bool peers_read_input = false;
  // What messages call the tensors' buffers (RankBuffers' fields by default).
  TensorNames tensor_names;
  // How many of the tensors' inputs the peers read, when peers_read_input (the fused RMSNorm
  // epilogue: the first only; its residual is read by its own rank alone).
  int peer_read_inputs = kMaxTensors;
  // An input of each rank beside its tensors that only its own kernel reads (the RMSNorm
  // weight), checked as memory of the rank's GPU (device or managed); local_input_name null
  // where the op has none.
  const char* local_input_name = nullptr;
  std::array<const void*, kMaxWorldSize> local_inputs = {};
  int64_t local_input_bytes = 0;
  // Bytes that every input and output address must be a multiple of (the reductions: the
  // element size).
  int element_alignment = 1;
  // Blocks the kernel has work for, where the op says (the RMSNorm epilogue: one per row; the
  // FP8 AllGather: a warp per row a rank receives; the FP8 all-to-all: a warp per run a rank
  // sends or receives; the Runtime gives it no more, nor more than the block budget); 0: by the
  // bytes.
  int64_t work_blocks = 0;
  // Enqueues rank `rank`'s kernel (Protocol::kDirect or kOneTrip); returns the launch error.
  std::function<cudaError_t(const PeerStoreView& view, const RankBuffers&, const ResolvedCall&)>
      launch_kernel;
  // The copy-engine form of a rank's call (ltx/transport/copy_engine/copy_engine_call.h), for
  // either transport and for capture: what the rank announces, and the copy of what rank
  // `source` sends `target`. Empty for the reductions, which never take the copy engines.
  std::function<EntryAnnouncement(const RankBuffers&, const ResolvedCall&)> announce_copies;
  std::function<StridedCopy(int source, int target, const void* input, void* output)> plan_copy;
};

// The checks of rank `rank`'s buffers for `op` that need no GPU (ltx/runtime/buffer_checks.h),
// as the Runtime makes them before any launch: CheckRankBuffers with the op's bytes and
// in-place offset (nulls, overlaps, pointers past the op's tensors), then CheckBufferAlignment
// with its element alignment; InvalidArgument naming the rank and the field
// (op.tensor_names), also for a rank outside [0, world_size). Thread-safe (pure).
absl::Status CheckOpBuffers(const CollectiveOp& op, int world_size, int rank,
                            const RankBuffers& buffers);

// The check of a coordinated call's buffers across its ranks (one entry of `buffers` per rank,
// at most kMaxWorldSize), beside each rank's own (CheckOpBuffers): InvalidArgument, naming both
// ranks and fields, where a buffer one rank writes (an output of the op's tensors) shares a
// byte with any buffer of another rank (its inputs, outputs, or local input): ranks that share
// a GPU would otherwise write into what another reads or writes, and the result would depend on
// timing. Buffers that ranks only read (inputs, local inputs) may overlap. Pointer arithmetic
// only; thread-safe (pure).
absl::Status CheckOpBuffersAcrossRanks(const CollectiveOp& op,
                                       absl::Span<const RankBuffers> buffers);

}  // namespace ltx

#endif  // LTX_COLLECTIVES_COLLECTIVE_OP_H_
