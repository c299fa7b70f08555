// The one-trip all-to-all kernel for small messages: the one-trip protocol
// (kernels/one_trip_protocol.cuh) with the all-to-all's plan. Each rank packs, per peer,
// exactly the piece that peer needs (kernels/alltoall_plan.h) into lines
// (kernels/alltoall_one_trip_plan.h); each receiver unpacks every peer's lines into the final
// layout; the own piece is copied from input to output directly.
#include <cstdint>

#include "kernels/alltoall_copy.cuh"
#include "kernels/alltoall_kernel.h"
#include "kernels/alltoall_one_trip_plan.h"
#include "kernels/alltoall_plan.h"
#include "kernels/copy_plan.h"
#include "kernels/one_trip_layout.h"
#include "kernels/one_trip_protocol.cuh"

namespace ltx {
namespace {

// Payload `index` of `piece`, gathered from the sender's input at `input`.
__device__ uint64_t LoadPiecePayload(const Piece& piece, int64_t index, const uint8_t* input) {
  const ByteRange range = PayloadRange(piece, index);
  uint64_t payload = 0;
  for (int64_t flat = range.begin; flat < range.end;) {
    const PieceSpan span = PieceSpanAt(piece, piece.src, flat, range.end);
    const uint8_t* from = input + span.offset;
    if (span.bytes == kOneTripPayloadBytes && (reinterpret_cast<uint64_t>(from) & 7) == 0) {
      return __ldg(reinterpret_cast<const unsigned long long*>(from));
    }
    for (int64_t k = 0; k < span.bytes; ++k) {
      payload |= static_cast<uint64_t>(from[k]) << (8 * (flat - range.begin + k));
    }
    flat += span.bytes;
  }
  return payload;
}

// Scatters payload `index` of `piece` into the receiver's output at `output`.
__device__ void StorePiecePayload(const Piece& piece, int64_t index, uint64_t payload,
                                  uint8_t* output) {
  const ByteRange range = PayloadRange(piece, index);
  for (int64_t flat = range.begin; flat < range.end;) {
    const PieceSpan span = PieceSpanAt(piece, piece.dst, flat, range.end);
    uint8_t* to = output + span.offset;
    if (span.bytes == kOneTripPayloadBytes && (reinterpret_cast<uint64_t>(to) & 7) == 0) {
      *reinterpret_cast<uint64_t*>(to) = payload;
      return;
    }
    for (int64_t k = 0; k < span.bytes; ++k) {
      to[k] = static_cast<uint8_t>(payload >> (8 * (flat - range.begin + k)));
    }
    flat += span.bytes;
  }
}

// The all-to-all's one-trip plan: this rank sends each peer its piece, unpacks each peer's
// piece into its output, and copies its own piece.
struct AllToAllOneTripPlan {
  // The own piece is not among the pieces sent: CopyOwn copies it.
  static constexpr bool kOwnPartIsSent = false;
  const AllToAllKernelParams& p;

  __device__ int64_t SentBytes(int target) const {
    return PieceBytes(PieceOf(p.geometry, p.rank, target));
  }
  __device__ uint64_t Payload(int target, int64_t index) const {
    return LoadPiecePayload(PieceOf(p.geometry, p.rank, target), index,
                            static_cast<const uint8_t*>(p.input));
  }
  __device__ int64_t ReceivedBytes(int source) const {
    return PieceBytes(PieceOf(p.geometry, source, p.rank));
  }
  __device__ void Store(int source, int64_t index, uint64_t payload) const {
    StorePiecePayload(PieceOf(p.geometry, source, p.rank), index, payload,
                      static_cast<uint8_t*>(p.output));
  }
  __device__ void CopyOwn() const {
    const Piece piece = PieceOf(p.geometry, p.rank, p.rank);
    CopyPieceRows(piece, OwnPieceRows(piece, blockIdx.x, gridDim.x),
                  static_cast<const uint8_t*>(p.input), static_cast<uint8_t*>(p.output));
  }
};

__global__ void __launch_bounds__(kOneTripThreads)
    AllToAllOneTripKernel(const AllToAllKernelParams p) {
  RunOneTripOp(p, AllToAllOneTripPlan{p});
}

}  // namespace

cudaError_t LaunchAllToAllOneTripKernel(const AllToAllKernelParams& params, int blocks,
                                        cudaStream_t stream) {
  AllToAllOneTripKernel<<<blocks, kOneTripThreads, 0, stream>>>(params);
  return cudaGetLastError();
}

cudaError_t LoadAllToAllOneTripKernel() {
  cudaFuncAttributes attributes;
  return cudaFuncGetAttributes(&attributes, AllToAllOneTripKernel);
}

}  // namespace ltx
