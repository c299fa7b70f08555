// The one-trip all-to-all kernel for small messages: the one-trip protocol
// (kernels/protocols/one_trip_protocol.cuh) with the all-to-all's plan. Each rank packs, per peer,
// exactly the piece that peer needs (kernels/alltoall/alltoall_plan.h) into lines
// (kernels/alltoall/alltoall_one_trip_plan.h); each receiver unpacks every peer's lines into the
// final layout; the own piece goes from input to output payload by payload, in the same pass as the
// sends.
#include <cstdint>

#include "kernels/alltoall/alltoall_kernel.h"
#include "kernels/alltoall/alltoall_one_trip_plan.h"
#include "kernels/alltoall/alltoall_plan.h"
#include "kernels/device/phase_clock.cuh"
#include "kernels/protocols/copy_plan.h"
#include "kernels/protocols/one_trip_launch.cuh"
#include "kernels/protocols/one_trip_protocol.cuh"
#include "kernels/wire/one_trip_layout.h"

namespace ltx {
namespace {

// Payload `index` of `piece`, gathered from the sender's input at `input`: one 8-byte load when
// the payload is whole, inside one row and aligned, else byte by byte, span by span.
__device__ uint64_t LoadPiecePayload(const Piece& piece, int64_t index, const uint8_t* input) {
  const int64_t whole = WholePayloadOffset(piece, piece.src, index);
  if (whole >= 0 && (reinterpret_cast<uint64_t>(input + whole) & 7) == 0) {
    return __ldg(reinterpret_cast<const unsigned long long*>(input + whole));
  }
  uint64_t payload = 0;
  ForEachPayloadSpan(piece, piece.src, index, [&](int64_t offset, int first, int bytes) {
    for (int k = 0; k < bytes; ++k) {
      payload |= static_cast<uint64_t>(input[offset + k]) << (8 * (first + k));
    }
  });
  return payload;
}

// Scatters payload `index` of `piece` into the receiver's output at `output`, the same way.
__device__ void StorePiecePayload(const Piece& piece, int64_t index, uint64_t payload,
                                  uint8_t* output) {
  const int64_t whole = WholePayloadOffset(piece, piece.dst, index);
  if (whole >= 0 && (reinterpret_cast<uint64_t>(output + whole) & 7) == 0) {
    *reinterpret_cast<uint64_t*>(output + whole) = payload;
    return;
  }
  ForEachPayloadSpan(piece, piece.dst, index, [&](int64_t offset, int first, int bytes) {
    for (int k = 0; k < bytes; ++k) {
      output[offset + k] = static_cast<uint8_t>(payload >> (8 * (first + k)));
    }
  });
}

// The all-to-all's one-trip plan: this rank sends each peer its piece and unpacks each peer's
// piece into its output; its own piece (to itself) is one more piece, which SendLines loads and
// stores beside the lines.
struct AllToAllOneTripPlan {
  // The own piece differs from every piece sent: SendLines loads it apart.
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
};

// `Clock` is NoPhaseClock in production, PhaseClock<OneTripPhase> for the phase timestamps.
template <typename Clock>
__global__ void __launch_bounds__(kOneTripThreads)
    AllToAllOneTripKernel(const AllToAllKernelParams p, const Clock clock) {
  RunOneTripOp(p, AllToAllOneTripPlan{p}, clock);
}

}  // namespace

cudaError_t LaunchAllToAllOneTripKernel(const AllToAllKernelParams& params,
                                        const OneTripLaunch& launch, cudaStream_t stream) {
  return LaunchOneTripKernelAs(AllToAllOneTripKernel<NoPhaseClock>,
                               AllToAllOneTripKernel<PhaseClock<OneTripPhase>>, params, launch,
                               stream);
}

cudaError_t LoadAllToAllOneTripKernel(int* resident_blocks_per_sm) {
  return LoadOneTripKernelAs(AllToAllOneTripKernel<NoPhaseClock>,
                             AllToAllOneTripKernel<PhaseClock<OneTripPhase>>,
                             resident_blocks_per_sm);
}

}  // namespace ltx
