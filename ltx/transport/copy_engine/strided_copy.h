// How a copy engine moves what one rank sends one rank: a strided copy of `depth` slices of
// `height` rows of `width` bytes, pitched alike on both sides, so that it takes one API call (or
// one graph node) where the GPUs allow its pitches. Both collectives plan theirs here, from the
// geometry their kernels' copy plans use:
//   - an AllGather shard (kernels/protocols/copy_plan.h: ShardGeometry): one slice whose rows are
//   the
//     shard's batch slices, back to back in the input, one output slice apart in the output;
//   - an all-to-all piece (kernels/alltoall/alltoall_plan.h: PieceOf): one slice per batch slice,
//   whose
//     rows are the piece's runs (one per token), row_stride apart; slice_stride apart, on each
//     side, are the slices, which is a whole number of rows on both sides (slice_stride =
//     count * token_bytes on the sequence side, total_tokens * group bytes on the heads side).
// The copy-engine transport (ltx/transport/copy_engine/copy_engine_transport.h) queues these
// copies, and captured copy-engine calls (ltx/transport/copy_engine/copy_engine_graph.h) add them
// to graphs, through the same functions.
#ifndef LTX_TRANSPORT_COPY_ENGINE_STRIDED_COPY_H_
#define LTX_TRANSPORT_COPY_ENGINE_STRIDED_COPY_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "kernels/alltoall/alltoall_plan.h"
#include "kernels/protocols/copy_plan.h"

namespace ltx {

// A copy of `depth` slices of `height` rows of `width` bytes. Row y of slice z starts at
// src + (z * src_slice_rows + y) * src_pitch in the source and at
// dst + (z * dst_slice_rows + y) * dst_pitch in the destination (the addressing of a CUDA
// pitched pointer whose ysize is the slice rows). Empty when width, height or depth is 0.
struct StridedCopy {
  const uint8_t* src = nullptr;
  int64_t src_pitch = 0;       // Source bytes from one row to the next (>= width).
  int64_t src_slice_rows = 0;  // Source rows from one slice to the next (>= height).
  uint8_t* dst = nullptr;
  int64_t dst_pitch = 0;       // Destination bytes from one row to the next (>= width).
  int64_t dst_slice_rows = 0;  // Destination rows from one slice to the next (>= height).
  int64_t width = 0;           // Bytes per row.
  int64_t height = 0;          // Rows per slice.
  int64_t depth = 1;           // Slices.
};

// Plans the copy of what rank `source` sends rank `target`, from `input` (the source's input)
// into `output` (the target's output). Each collective passes its own planner to the
// copy-engine transport and to graph capture.
using CopyPlanner =
    absl::FunctionRef<StridedCopy(int source, int target, const void* input, void* output)>;

// The copy of the AllGather shard described by `geometry` from `input` (the rank's input) into
// `output` (any rank's output): one slice of `batch` rows of shard_bytes. Pure arithmetic;
// thread-safe.
StridedCopy PlanShardCopy(const ShardGeometry& geometry, const void* input, void* output);

// The copy of the all-to-all piece that rank `source` sends rank `target` (PieceOf), from
// `input` (the source's input) into `output` (the target's output): `batch` slices of
// rows_per_slice rows of run_bytes. An empty copy when the piece is (a rank without tokens or
// without heads). Pure arithmetic; thread-safe.
StridedCopy PlanPieceCopy(const AllToAllGeometry& geometry, int source, int target,
                          const void* input, void* output);

// Whether `copy` moves no byte.
bool IsEmpty(const StridedCopy& copy);

// Whether `copy` copies every byte onto itself (the same first byte, and the same pitches where
// there is more than one row: the own part of an in-place call). QueueStridedCopy and
// AddStridedCopyNodes skip it, so that an in-place call moves nothing within a GPU (a copy
// within one GPU needs an SM, even on the copy-engine path).
bool IsOntoItself(const StridedCopy& copy);

// Whether queueing `copy` changes no byte: it is empty or onto itself. QueueStridedCopy and
// AddStridedCopyNodes queue nothing for it.
bool MovesNothing(const StridedCopy& copy);

// The smallest cudaDevAttrMaxPitch of `devices`: the widest pitch a strided call between any
// two of them may have. Errors: as CUDA reports them. Thread-safe.
absl::StatusOr<int64_t> SmallestMaxPitch(const std::vector<int>& devices);

// Whether `copy` is issued as one strided call: it has more than one row in all and both
// pitches are at most `max_pitch` (the smallest cudaDevAttrMaxPitch of the GPUs involved).
// Otherwise each row is one call.
bool IsOneStridedCall(const StridedCopy& copy, int64_t max_pitch);

// The parameters of the strided call of `copy` from `src_device` to `dst_device`: pitched
// pointers (pitch, ysize = slice rows) and the extent {width, height, depth}.
cudaMemcpy3DPeerParms StridedCallParams(const StridedCopy& copy, int src_device, int dst_device);

// Row `row` (of height * depth; row y of slice z is z * height + y) of `copy`: where it starts
// in the source and in the destination. What the one-call-per-row form copies, `width` bytes
// each.
struct CopyRow {
  const uint8_t* src = nullptr;
  uint8_t* dst = nullptr;
};
CopyRow RowOf(const StridedCopy& copy, int64_t row);

// Queues `copy` from `src_device` to `dst_device` on `stream`: one cudaMemcpy3DPeerAsync where
// IsOneStridedCall, else one cudaMemcpyPeerAsync per row (RowOf); nothing for an empty copy.
// Both work with and without peer access (without it, the driver stages through host memory).
// Returns the first CUDA error. Thread-safe as CUDA is.
cudaError_t QueueStridedCopy(const StridedCopy& copy, int src_device, int dst_device,
                             int64_t max_pitch, cudaStream_t stream);

// Adds `copy` to `graph` as memcpy nodes without dependencies (so that several copies run on
// the copy engines side by side): one strided node where IsOneStridedCall, else one node per
// row (RowOf); nothing for an empty copy. Both addresses must be reachable from the graph's GPU
// (unified addressing; peer access for a peer's memory). Returns the first CUDA error.
// Thread-safe as CUDA is.
cudaError_t AddStridedCopyNodes(const StridedCopy& copy, int64_t max_pitch, cudaGraph_t graph);

}  // namespace ltx

#endif  // LTX_TRANSPORT_COPY_ENGINE_STRIDED_COPY_H_
