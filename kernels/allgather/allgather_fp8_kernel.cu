// The AllGather with FP8 on the wire (allgather_fp8_kernel.h): a warp per row quantises this
// rank's rows into its slot, decodes a peer's row from the peer's slot, or the grid copies this
// rank's rows over its slot. The largest magnitude of a row is a maximum, so the lanes' order
// does not change it: every rank and run gets the same codes, scales and decoded bits.
#include <cstdint>

#include "kernels/allgather/allgather_fp8_kernel.h"
#include "kernels/device/block_copy.cuh"
#include "kernels/device/kernel_residency.cuh"
#include "kernels/device/memory_order.cuh"
#include "kernels/protocols/pull_protocol.cuh"
#include "kernels/reduce/reduce_math.h"
#include "kernels/wire/fp8_rows.h"
#include "kernels/wire/fp8_slot.h"

namespace ltx {
namespace {

constexpr int kLanes = 32;

// Byte offset of rank `rank`'s slot of batch slice `slice` in an output of `p`'s layout.
__device__ inline int64_t SlotOffset(const AllGatherKernelParams& p, int rank, int64_t slice) {
  return Fp8SlotOffset(p.total_tokens, p.prefix_tokens[rank], p.row_bytes, slice);
}
constexpr unsigned kFullWarp = 0xffffffffu;

// The warp of this thread over the grid, and how many warps the grid has.
__device__ inline int64_t GridWarp() {
  return static_cast<int64_t>(blockIdx.x) * (blockDim.x / kLanes) + threadIdx.x / kLanes;
}
__device__ inline int64_t GridWarps() {
  return static_cast<int64_t>(gridDim.x) * (blockDim.x / kLanes);
}

// A scale's 4 bytes at `at` (any alignment), little-endian.
__device__ inline void StoreScale(uint8_t* at, float scale) {
  const uint32_t bits = BitsOfFloat(scale);
  for (int byte = 0; byte < 4; ++byte) at[byte] = static_cast<uint8_t>(bits >> (8 * byte));
}
__device__ inline float LoadScale(const uint8_t* at) {
  uint32_t bits = 0;
  for (int byte = 0; byte < 4; ++byte) bits |= uint32_t{__ldcg(at + byte)} << (8 * byte);
  return FloatOfBits(bits);
}

// Whether this rank gave an op up since the last Reset: then its slot is left alone, for a peer
// may still be reading it (the pull protocol's abandoned op; kernels/PROTOCOL.md).
__device__ inline bool Abandoned(const AllGatherKernelParams& p) {
  return LoadRelaxedSystem(&p.signals[p.rank]->abort) != 0u;
}

// Elements a lane moves at once on the vector path: 16 bytes of values, 8 bytes of codes.
constexpr int kUnit = 8;
// Elements between a lane's consecutive units of a row, and the units whose loads a lane keeps
// in flight together: a warp waits for one load latency per batch of units of a row, not per
// unit (the loads of a unit would otherwise wait for the stores of the one before, which may
// alias them as far as the compiler knows). The quantiser's units are 16 bytes, the decoder's
// codes 8: three and four of them keep every kernel within its registers on sm_80 and sm_90.
constexpr int64_t kStride = int64_t{kLanes} * kUnit;
constexpr int kQuantizeUnitsInFlight = 3;
constexpr int kDecodeUnitsInFlight = 4;

// Element `k` (a constant after unrolling) of a unit of eight 16-bit elements, by shifts: a
// unit addressed as an array of elements could land in local memory.
template <typename Bits>
__device__ inline Bits UnitElement(const uint4& unit, int k) {
  const uint32_t word = k < 2 ? unit.x : k < 4 ? unit.y : k < 6 ? unit.z : unit.w;
  return static_cast<Bits>(word >> (16 * (k % 2)));
}

// Whether a row allows the vector path: whole units, 16-byte-aligned values and 8-byte-aligned
// codes. Either path gives the same bits.
__device__ inline bool Vectors(int64_t hidden, const void* values, const void* codes) {
  return ((static_cast<uint64_t>(hidden) | reinterpret_cast<uint64_t>(codes)) % kUnit) == 0 &&
         reinterpret_cast<uint64_t>(values) % 16 == 0;
}

// Step 1: every row of this rank's shard, quantised into its slot of its own output.
template <typename Element>
__global__ void __launch_bounds__(kAllGatherFp8Threads)
    QuantizeOwnRowsKernel(const AllGatherKernelParams p) {
  using Bits = typename Element::Bits;
  static_assert(sizeof(Bits) * kUnit == sizeof(uint4), "a unit is 16 bytes of values");
  const int64_t hidden = p.row_bytes / static_cast<int64_t>(sizeof(Bits));
  const int64_t tokens = p.token_counts[p.rank];
  const int64_t rows = Abandoned(p) ? 0 : p.geometry.batch * tokens;
  const int lane = static_cast<int>(threadIdx.x % kLanes);
  for (int64_t row = GridWarp(); row < rows; row += GridWarps()) {
    const int64_t slice = row / tokens;
    const int64_t i = row % tokens;
    const Bits* values =
        reinterpret_cast<const Bits*>(static_cast<const uint8_t*>(p.input) + row * p.row_bytes);
    uint8_t* slot = static_cast<uint8_t*>(p.output) + SlotOffset(p, p.rank, slice);
    uint8_t* codes = slot + Fp8CodesOffset(hidden, i);
    const bool vectors = Vectors(hidden, values, codes);
    float largest = 0.0f;
    if (vectors) {
      for (int64_t base = lane * kUnit; base < hidden; base += kStride * kQuantizeUnitsInFlight) {
        uint4 units[kQuantizeUnitsInFlight];
#pragma unroll
        for (int b = 0; b < kQuantizeUnitsInFlight; ++b) {
          const int64_t first = base + b * kStride;
          units[b] = first < hidden ? *reinterpret_cast<const uint4*>(values + first)
                                    : make_uint4(0u, 0u, 0u, 0u);  // Zeros leave the max.
        }
#pragma unroll
        for (int b = 0; b < kQuantizeUnitsInFlight; ++b) {
#pragma unroll
          for (int k = 0; k < kUnit; ++k) {
            largest = Fp8RowLargest(largest, Element::ToFloat(UnitElement<Bits>(units[b], k)));
          }
        }
      }
    } else {
      for (int64_t e = lane; e < hidden; e += kLanes) {
        largest = Fp8RowLargest(largest, Element::ToFloat(values[e]));
      }
    }
    for (int offset = kLanes / 2; offset > 0; offset /= 2) {
      largest = Fp8RowLargest(largest, __shfl_xor_sync(kFullWarp, largest, offset));
    }
    const float scale = Fp8RowScale(largest);
    if (vectors) {
      for (int64_t base = lane * kUnit; base < hidden; base += kStride * kQuantizeUnitsInFlight) {
        uint4 units[kQuantizeUnitsInFlight];
#pragma unroll
        for (int b = 0; b < kQuantizeUnitsInFlight; ++b) {
          const int64_t first = base + b * kStride;
          if (first < hidden) units[b] = *reinterpret_cast<const uint4*>(values + first);
        }
#pragma unroll
        for (int b = 0; b < kQuantizeUnitsInFlight; ++b) {
          const int64_t first = base + b * kStride;
          if (first >= hidden) continue;
          uint32_t packed[2] = {0u, 0u};
#pragma unroll
          for (int k = 0; k < kUnit; k += 2) {
            packed[k / 4] |= Fp8EncodePair(Element::ToFloat(UnitElement<Bits>(units[b], k)),
                                           Element::ToFloat(UnitElement<Bits>(units[b], k + 1)),
                                           scale)
                             << (8 * (k % 4));
          }
          *reinterpret_cast<uint2*>(codes + first) = make_uint2(packed[0], packed[1]);
        }
      }
    } else {
      for (int64_t e = lane; e < hidden; e += kLanes) {
        codes[e] = Fp8Encode(Element::ToFloat(values[e]), scale);
      }
    }
    if (lane == 0) StoreScale(slot + Fp8ScaleOffset(tokens, hidden, i), scale);
  }
}

// Step 2's reads: every row of every peer (outputs[s]: peer s's output, as it announced), its
// codes and scale from the peer's slot, decoded into this rank's output at the peer's rows.
template <typename Element>
__device__ void DecodePeerRows(const AllGatherKernelParams& p, const uint64_t* outputs) {
  using Bits = typename Element::Bits;
  static_assert(sizeof(Bits) * kUnit == sizeof(uint4), "a unit is 16 bytes of values");
  const int64_t hidden = p.row_bytes / static_cast<int64_t>(sizeof(Bits));
  const int lane = static_cast<int>(threadIdx.x % kLanes);
  // Every peer's rows, in peer order, form one range that the grid's warps share evenly.
  const int64_t total = Fp8PeerRows(p.token_counts, p.world_size, p.rank, p.geometry.batch);
  for (int64_t index = GridWarp(); index < total; index += GridWarps()) {
    const Fp8PeerRow found =
        Fp8PeerRowOf(p.token_counts, p.world_size, p.rank, p.geometry.batch, index);
    const int peer = found.peer;
    const int64_t row = found.row;
    const int64_t tokens = p.token_counts[peer];
    const int64_t slice = row / tokens;
    const int64_t i = row % tokens;
    const int64_t slot_offset = SlotOffset(p, peer, slice);
    const uint8_t* slot = reinterpret_cast<const uint8_t*>(outputs[peer]) + slot_offset;
    float scale = 0.0f;  // One lane loads it, every lane gets it.
    if (lane == 0) scale = LoadScale(slot + Fp8ScaleOffset(tokens, hidden, i));
    scale = __shfl_sync(kFullWarp, scale, 0);
    const uint8_t* codes = slot + Fp8CodesOffset(hidden, i);
    Bits* decoded =
        reinterpret_cast<Bits*>(static_cast<uint8_t*>(p.output) + slot_offset + i * p.row_bytes);
    if (Vectors(hidden, decoded, codes)) {
      for (int64_t base = lane * kUnit; base < hidden; base += kStride * kDecodeUnitsInFlight) {
        uint2 packed[kDecodeUnitsInFlight];
#pragma unroll
        for (int b = 0; b < kDecodeUnitsInFlight; ++b) {
          const int64_t first = base + b * kStride;
          if (first < hidden) packed[b] = __ldcg(reinterpret_cast<const uint2*>(codes + first));
        }
#pragma unroll
        for (int b = 0; b < kDecodeUnitsInFlight; ++b) {
          const int64_t first = base + b * kStride;
          if (first >= hidden) continue;
          uint32_t words[4];  // Two 16-bit values each: elements k and k + 1.
#pragma unroll
          for (int k = 0; k < kUnit; k += 2) {
            const uint32_t word = k < 4 ? packed[b].x : packed[b].y;
            float low, high;
            E4M3PairToFloats(word >> (8 * (k % 4)), &low, &high);
            words[k / 2] = uint32_t{Fp8DecodeValue<Element>(low, scale)} |
                           (uint32_t{Fp8DecodeValue<Element>(high, scale)} << 16);
          }
          *reinterpret_cast<uint4*>(decoded + first) =
              make_uint4(words[0], words[1], words[2], words[3]);
        }
      }
    } else {
      for (int64_t e = lane; e < hidden; e += kLanes) {
        decoded[e] = Fp8Decode<Element>(__ldcg(codes + e), scale);
      }
    }
  }
}

// Step 2: the pull protocol around DecodePeerRows.
template <typename Element>
__global__ void __launch_bounds__(kAllGatherFp8Threads)
    Fp8PullKernel(const AllGatherKernelParams p) {
  RunPullOp(p, AnnouncementOf(p, AnnouncedProtocol::kDirect),
            [&p](const uint64_t* outputs) { DecodePeerRows<Element>(p, outputs); });
}

// Step 3: this rank's rows, exactly, over its slot of every batch slice: each slice a contiguous
// run in the input and in the slot, cut into pieces of kCopyPieceBytes that the blocks take in
// turn, each copied by the whole block in the widest co-aligned stores (CopySegment).
constexpr int64_t kCopyPieceBytes = 64 * 1024;

__global__ void __launch_bounds__(kAllGatherFp8Threads)
    CopyOwnRowsKernel(const AllGatherKernelParams p) {
  const int64_t slice_bytes = p.token_counts[p.rank] * p.row_bytes;
  const int64_t pieces_per_slice = (slice_bytes + kCopyPieceBytes - 1) / kCopyPieceBytes;
  // After this op's exit barrier every peer is done reading the slot, even where the Runtime
  // was stopped since; an op abandoned leaves it alone.
  const int64_t pieces = LastOpDone(p.signals[p.rank]) ? p.geometry.batch * pieces_per_slice : 0;
  for (int64_t piece = blockIdx.x; piece < pieces; piece += gridDim.x) {
    const int64_t slice = piece / pieces_per_slice;
    const int64_t offset = (piece % pieces_per_slice) * kCopyPieceBytes;
    const int64_t bytes =
        slice_bytes - offset < kCopyPieceBytes ? slice_bytes - offset : kCopyPieceBytes;
    CopySegment(static_cast<uint8_t*>(p.output) + SlotOffset(p, p.rank, slice) + offset,
                static_cast<const uint8_t*>(p.input) + slice * slice_bytes + offset, bytes);
  }
}

template <typename Element>
cudaError_t LaunchFor(const AllGatherKernelParams& params, int blocks, cudaStream_t stream) {
  QuantizeOwnRowsKernel<Element><<<blocks, kAllGatherFp8Threads, 0, stream>>>(params);
  cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) return error;
  Fp8PullKernel<Element><<<blocks, kAllGatherFp8Threads, 0, stream>>>(params);
  error = cudaGetLastError();
  if (error != cudaSuccess) return error;
  CopyOwnRowsKernel<<<blocks, kAllGatherFp8Threads, 0, stream>>>(params);
  return cudaGetLastError();
}

template <typename Element>
cudaError_t LoadFor(int* resident_blocks_per_sm) {
  for (const cudaError_t error :
       {LoadKernel(QuantizeOwnRowsKernel<Element>, kAllGatherFp8Threads, resident_blocks_per_sm),
        LoadKernel(Fp8PullKernel<Element>, kAllGatherFp8Threads, resident_blocks_per_sm),
        LoadKernel(CopyOwnRowsKernel, kAllGatherFp8Threads, resident_blocks_per_sm)}) {
    if (error != cudaSuccess) return error;
  }
  return cudaSuccess;
}

}  // namespace

cudaError_t LaunchAllGatherFp8(const AllGatherKernelParams& params, int blocks,
                               cudaStream_t stream) {
  if (blocks < 1) return cudaErrorInvalidValue;
  switch (params.dtype) {
    case kReduceBFloat16:
      if (params.row_bytes < 2 * kFp8MinHidden) return cudaErrorInvalidValue;
      return LaunchFor<BFloat16Element>(params, blocks, stream);
    case kReduceFloat16:
      if (params.row_bytes < 2 * kFp8MinHidden) return cudaErrorInvalidValue;
      return LaunchFor<Float16Element>(params, blocks, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t LoadAllGatherFp8Kernels(int* resident_blocks_per_sm) {
  const cudaError_t error = LoadFor<BFloat16Element>(resident_blocks_per_sm);
  if (error != cudaSuccess) return error;
  return LoadFor<Float16Element>(resident_blocks_per_sm);
}

}  // namespace ltx
