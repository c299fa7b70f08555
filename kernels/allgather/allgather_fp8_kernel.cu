// The AllGather with FP8 on the wire (allgather_fp8_kernel.h): a team of warps per row
// (AllGatherFp8WarpsPerRow) quantises this rank's rows into its slot, a warp per 1024-element
// piece of a row decodes a peer's rows from the peer's slot, and the grid copies this rank's
// rows over its slot. The largest magnitude of a row is a maximum, so the lanes' order
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

// Elements a lane moves at once on the vector path (a unit): 16 bytes of values, 8 bytes of
// codes; and the units a lane keeps in flight together (in registers), so that a warp waits for
// one load latency per pass over its part of a row, not per unit.
constexpr int kUnit = 8;
constexpr int kUnitsInFlight = 4;
static_assert(int64_t{kLanes} * kUnit * kUnitsInFlight == kAllGatherFp8WarpElements,
              "a warp's pass is its lanes' units in flight");
constexpr int kWarps = kAllGatherFp8Threads / kLanes;

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

// The warps of a block that quantise one row together: `size` warps (a power of two), team
// `index` of the block's kWarps / size, this thread `thread` of the team's size * 32.
struct RowTeam {
  int size;
  int index;
  int thread;
};

__device__ inline RowTeam RowTeamOf(int64_t hidden) {
  const int size = AllGatherFp8WarpsPerRow(hidden);
  const int warp = static_cast<int>(threadIdx.x / kLanes);
  return {size, warp / size, (warp % size) * kLanes + static_cast<int>(threadIdx.x % kLanes)};
}

// The largest of the team's `largest` values (Fp8RowLargest), the same for every thread of the
// team: the warp's by shuffles, then, for a team of several warps, the warps' through
// `shared[parity]` (a slot per warp of the block) and the team's named barrier (its index: the
// kernel uses no other barrier once its rows began). Calls of consecutive rows alternate
// `parity`, so that a warp's store for the next row but one comes after the barrier of the next
// row, which every warp of the team passes only after reading this row's values.
__device__ inline float TeamLargest(const RowTeam& team, float largest,
                                    float (*shared)[kWarps], int parity) {
  for (int offset = kLanes / 2; offset > 0; offset /= 2) {
    largest = Fp8RowLargest(largest, __shfl_xor_sync(kFullWarp, largest, offset));
  }
  if (team.size == 1) return largest;
  const int warp = static_cast<int>(threadIdx.x / kLanes);
  if (threadIdx.x % kLanes == 0) shared[parity][warp] = largest;
  asm volatile("bar.sync %0, %1;" ::"r"(team.index), "r"(team.size * kLanes) : "memory");
  largest = 0.0f;
  for (int w = 0; w < team.size; ++w) {
    largest = Fp8RowLargest(largest, shared[parity][team.index * team.size + w]);
  }
  return largest;
}

// Whether every row of this rank's shard takes the quantiser's vector path (Vectors): rows of
// whole units, a 16-byte-aligned input and an 8-byte-aligned output. Then every row's values
// are 16-byte aligned (a row is a multiple of 16 bytes), and so are the codes (a slot starts at a
// multiple of the row's bytes, a row's codes at a multiple of hidden bytes).
bool QuantizesVectors(const AllGatherKernelParams& p, int64_t hidden) {
  return hidden % kUnit == 0 && reinterpret_cast<uint64_t>(p.input) % 16 == 0 &&
         reinterpret_cast<uint64_t>(p.output) % kUnit == 0;
}

// Step 1: every row of this rank's shard, quantised into its slot of its own output by a team
// of warps (RowTeamOf): a pass for the row's largest magnitude, then a pass for its codes, each
// over the team's threads side by side. On the vector path (`kVectors`, QuantizesVectors) each
// thread keeps kUnitsInFlight units in flight, so that a row of up to
// size * kAllGatherFp8WarpElements elements is read once, in one load latency, and encoded from
// registers after the team's barrier; longer rows (a whole block's team) are read twice. The
// element path strides the team's threads over the row. One kernel per path: both paths in one
// would not fit a 1024-thread block's registers.
template <typename Element, bool kVectors>
__global__ void __launch_bounds__(kAllGatherFp8Threads)
    QuantizeOwnRowsKernel(const AllGatherKernelParams p) {
  using Bits = typename Element::Bits;
  static_assert(sizeof(Bits) * kUnit == sizeof(uint4), "a unit is 16 bytes of values");
  __shared__ float shared[2][kWarps];
  // One look at the abort flag for the whole block: the warps of a team must agree on the rows
  // they take, or some would wait at the team's barrier for warps that never come.
  __shared__ bool abandoned;
  if (threadIdx.x == 0) abandoned = Abandoned(p);
  __syncthreads();
  const int64_t hidden = p.row_bytes / static_cast<int64_t>(sizeof(Bits));
  const int64_t tokens = p.token_counts[p.rank];
  const int64_t rows = abandoned ? 0 : p.geometry.batch * tokens;
  const RowTeam team = RowTeamOf(hidden);
  const int teams_per_block = kWarps / team.size;
  const int64_t team_threads = int64_t{team.size} * kLanes;
  const int64_t pass_elements = team_threads * kUnit * kUnitsInFlight;
  const int64_t passes = (hidden + pass_elements - 1) / pass_elements;
  // Unit u of pass `pass` of this thread starts at element pass * pass_elements + at + u *
  // unit_stride.
  const int64_t at = int64_t{team.thread} * kUnit;
  const int unit_stride = team.size * kLanes * kUnit;
  int parity = 0;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * teams_per_block + team.index; row < rows;
       row += static_cast<int64_t>(gridDim.x) * teams_per_block, parity ^= 1) {
    const int64_t slice = row / tokens;
    const int64_t i = row % tokens;
    const Bits* values =
        reinterpret_cast<const Bits*>(static_cast<const uint8_t*>(p.input) + row * p.row_bytes);
    float largest = 0.0f;
    uint4 units[kUnitsInFlight];  // The last pass's, still there for the codes.
    if (kVectors) {
#pragma unroll 1
      for (int64_t pass = 0; pass < passes; ++pass) {
        const Bits* from = values + pass * pass_elements + at;
        // Units of this pass within the row.
        const int64_t left = hidden - pass * pass_elements - at;
#pragma unroll
        for (int u = 0; u < kUnitsInFlight; ++u) {
          units[u] = u * unit_stride < left
                         ? *reinterpret_cast<const uint4*>(from + u * unit_stride)
                         : make_uint4(0u, 0u, 0u, 0u);  // Zeros leave the max.
        }
#pragma unroll
        for (int u = 0; u < kUnitsInFlight; ++u) {
#pragma unroll
          for (int k = 0; k < kUnit; ++k) {
            largest = Fp8RowLargest(largest, Element::ToFloat(UnitElement<Bits>(units[u], k)));
          }
        }
      }
    } else {
      for (int64_t e = team.thread; e < hidden; e += team_threads) {
        largest = Fp8RowLargest(largest, Element::ToFloat(values[e]));
      }
    }
    const float scale = Fp8RowScale(TeamLargest(team, largest, shared, parity));
    const float inverse = Fp8RowInverse(scale);
    uint8_t* slot = static_cast<uint8_t*>(p.output) + SlotOffset(p, p.rank, slice);
    uint8_t* codes = slot + Fp8CodesOffset(hidden, i);
    if (kVectors) {
#pragma unroll 1
      for (int64_t pass = 0; pass < passes; ++pass) {
        const Bits* from = values + pass * pass_elements + at;
        uint8_t* to = codes + pass * pass_elements + at;
        const int64_t left = hidden - pass * pass_elements - at;
        if (passes > 1) {  // One pass: its units are still in registers.
#pragma unroll
          for (int u = 0; u < kUnitsInFlight; ++u) {
            if (u * unit_stride < left) {
              units[u] = *reinterpret_cast<const uint4*>(from + u * unit_stride);
            }
          }
        }
#pragma unroll
        for (int u = 0; u < kUnitsInFlight; ++u) {
          if (u * unit_stride >= left) continue;
          uint32_t packed[2] = {0u, 0u};
#pragma unroll
          for (int k = 0; k < kUnit; k += 2) {
            packed[k / 4] |= Fp8EncodePair(Element::ToFloat(UnitElement<Bits>(units[u], k)),
                                           Element::ToFloat(UnitElement<Bits>(units[u], k + 1)),
                                           inverse)
                             << (8 * (k % 4));
          }
          *reinterpret_cast<uint2*>(to + u * unit_stride) = make_uint2(packed[0], packed[1]);
        }
      }
    } else {
      for (int64_t e = team.thread; e < hidden; e += team_threads) {
        codes[e] = Fp8Encode(Element::ToFloat(values[e]), inverse);
      }
    }
    if (team.thread == 0) StoreScale(slot + Fp8ScaleOffset(tokens, hidden, i), scale);
  }
}

// Step 2's reads: every row of every peer (outputs[s]: peer s's output, as it announced), its
// codes and scale from the peer's slot, decoded into this rank's output at the peer's rows. A
// warp decodes one piece of kAllGatherFp8WarpElements of a row (its lanes' units in flight
// together), so that short row counts still spread over the grid.
template <typename Element>
__device__ void DecodePeerRows(const AllGatherKernelParams& p, const uint64_t* outputs) {
  using Bits = typename Element::Bits;
  static_assert(sizeof(Bits) * kUnit == sizeof(uint4), "a unit is 16 bytes of values");
  const int64_t hidden = p.row_bytes / static_cast<int64_t>(sizeof(Bits));
  const int lane = static_cast<int>(threadIdx.x % kLanes);
  const int64_t pieces_per_row =
      (hidden + kAllGatherFp8WarpElements - 1) / kAllGatherFp8WarpElements;
  // Every peer's rows, in peer order, form one range whose pieces the grid's warps share.
  const int64_t total =
      Fp8PeerRows(p.token_counts, p.world_size, p.rank, p.geometry.batch) * pieces_per_row;
  for (int64_t index = GridWarp(); index < total; index += GridWarps()) {
    const Fp8PeerRow found = Fp8PeerRowOf(p.token_counts, p.world_size, p.rank,
                                          p.geometry.batch, index / pieces_per_row);
    const int64_t begin = (index % pieces_per_row) * kAllGatherFp8WarpElements;
    const int64_t end = hidden - begin < kAllGatherFp8WarpElements
                            ? hidden
                            : begin + kAllGatherFp8WarpElements;
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
      uint2 packed[kUnitsInFlight];
#pragma unroll
      for (int u = 0; u < kUnitsInFlight; ++u) {
        const int64_t first = begin + (int64_t{u} * kLanes + lane) * kUnit;
        if (first < end) packed[u] = __ldcg(reinterpret_cast<const uint2*>(codes + first));
      }
#pragma unroll
      for (int u = 0; u < kUnitsInFlight; ++u) {
        const int64_t first = begin + (int64_t{u} * kLanes + lane) * kUnit;
        if (first >= end) continue;
        uint32_t words[4];  // Two 16-bit values each: elements k and k + 1.
#pragma unroll
        for (int k = 0; k < kUnit; k += 2) {
          const uint32_t word = k < 4 ? packed[u].x : packed[u].y;
          float low, high;
          E4M3PairToFloats(word >> (8 * (k % 4)), &low, &high);
          words[k / 2] = uint32_t{Fp8DecodeValue<Element>(low, scale)} |
                         (uint32_t{Fp8DecodeValue<Element>(high, scale)} << 16);
        }
        *reinterpret_cast<uint4*>(decoded + first) =
            make_uint4(words[0], words[1], words[2], words[3]);
      }
    } else {
      for (int64_t e = begin + lane; e < end; e += kLanes) {
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
  const int64_t hidden = params.row_bytes / static_cast<int64_t>(sizeof(typename Element::Bits));
  if (QuantizesVectors(params, hidden)) {
    QuantizeOwnRowsKernel<Element, true><<<blocks, kAllGatherFp8Threads, 0, stream>>>(params);
  } else {
    QuantizeOwnRowsKernel<Element, false><<<blocks, kAllGatherFp8Threads, 0, stream>>>(params);
  }
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
       {LoadKernel(QuantizeOwnRowsKernel<Element, true>, kAllGatherFp8Threads,
                   resident_blocks_per_sm),
        LoadKernel(QuantizeOwnRowsKernel<Element, false>, kAllGatherFp8Threads,
                   resident_blocks_per_sm),
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
