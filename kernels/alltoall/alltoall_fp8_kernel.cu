// The Ulysses all-to-all with FP8 on the wire: the encoding direct kernel and the in-place
// decoding kernel (kernels/alltoall/alltoall_fp8_kernel.h).
#include "kernels/alltoall/alltoall_fp8_kernel.h"

#include <cstdint>

#include "kernels/alltoall/alltoall_copy.cuh"
#include "kernels/alltoall/alltoall_plan.h"
#include "kernels/device/kernel_residency.cuh"
#include "kernels/device/memory_order.cuh"
#include "kernels/device/phase_clock.cuh"
#include "kernels/protocols/copy_plan.h"
#include "kernels/protocols/direct_protocol.cuh"
#include "kernels/reduce/reduce_math.h"
#include "kernels/wire/fp8_rows.h"
#include "kernels/wire/fp8_run.h"

namespace ltx {
namespace {

constexpr unsigned kFullWarp = 0xffffffffu;
constexpr int kWarps = kAllToAllFp8Threads / kWarpSize;
// Elements a lane encodes or decodes at once on the vector path: 8 bytes of values, 4 codes.
constexpr int kUnit = 4;
// Units a lane decodes per chunk: their loads are in flight together.
constexpr int kChunkUnits = 8;
static_assert(kFp8DecodeChunk == kWarpSize * kUnit * kChunkUnits,
              "a decode chunk is kChunkUnits units per lane");

__device__ inline bool Aligned(const void* address, uint64_t bytes) {
  return reinterpret_cast<uint64_t>(address) % bytes == 0;
}

// Element `k` (a constant after unrolling) of a unit of four 16-bit elements.
template <typename Bits>
__device__ inline Bits UnitElement(const uint2& unit, int k) {
  const uint32_t word = k < 2 ? unit.x : unit.y;
  return static_cast<Bits>(word >> (16 * (k % 2)));
}

// Stores `value` little-endian at `at`, in one store where `at` is 4-byte aligned.
__device__ inline void StoreScale(uint8_t* at, float value) {
  const uint32_t bits = BitsOfFloat(value);
  if (Aligned(at, 4)) {
    *reinterpret_cast<uint32_t*>(at) = bits;
    return;
  }
  for (int byte = 0; byte < 4; ++byte) at[byte] = static_cast<uint8_t>(bits >> (8 * byte));
}

__device__ inline float LoadScale(const uint8_t* at) {
  if (Aligned(at, 4)) return FloatOfBits(*reinterpret_cast<const uint32_t*>(at));
  uint32_t bits = 0;
  for (int byte = 0; byte < 4; ++byte) bits |= uint32_t{at[byte]} << (8 * byte);
  return FloatOfBits(bits);
}

// Vectors whose loads one lane keeps in flight at once on the short-vector path: a warp waits
// for one load latency per kVectorsInFlight vectors, not per vector.
constexpr int kVectorsInFlight = 4;

// EncodeRun for vectors of at most 128 elements, a multiple of 4, on 8-byte-aligned values and
// 4-byte-aligned codes: lane l takes elements 4l..4l+3 of each vector (lanes past the vector
// idle but for the shuffles), kVectorsInFlight vectors at a time: their loads first, then their
// maxima, then their codes.
template <typename Element>
__device__ void EncodeShortVectors(const typename Element::Bits* values, uint8_t* codes,
                                   uint8_t* scales, int64_t vectors, int64_t vector_elements,
                                   int lane) {
  using Bits = typename Element::Bits;
  const int64_t first = static_cast<int64_t>(lane) * kUnit;
  const bool mine = first < vector_elements;
  for (int64_t v0 = 0; v0 < vectors; v0 += kVectorsInFlight) {
    uint2 units[kVectorsInFlight];
    float largest[kVectorsInFlight];
#pragma unroll
    for (int b = 0; b < kVectorsInFlight; ++b) {
      const bool load = mine && v0 + b < vectors;
      units[b] = load ? __ldg(reinterpret_cast<const uint2*>(values + (v0 + b) * vector_elements +
                                                             first))
                      : make_uint2(0u, 0u);
    }
#pragma unroll
    for (int b = 0; b < kVectorsInFlight; ++b) {
      largest[b] = 0.0f;
#pragma unroll
      for (int k = 0; k < kUnit; ++k) {
        largest[b] = Fp8RowLargest(largest[b], Element::ToFloat(UnitElement<Bits>(units[b], k)));
      }
    }
#pragma unroll
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
#pragma unroll
      for (int b = 0; b < kVectorsInFlight; ++b) {
        largest[b] = Fp8RowLargest(largest[b], __shfl_xor_sync(kFullWarp, largest[b], offset));
      }
    }
#pragma unroll
    for (int b = 0; b < kVectorsInFlight; ++b) {
      const int64_t v = v0 + b;
      if (v >= vectors) break;  // The same for every lane.
      const float scale = Fp8RowScale(largest[b]);
      if (lane == 0) StoreScale(scales + 4 * v, scale);
      if (!mine) continue;
      const float inverse = Fp8RowInverse(scale);
      uint32_t packed = 0;
#pragma unroll
      for (int k = 0; k < kUnit; k += 2) {
        packed |= Fp8EncodePair(Element::ToFloat(UnitElement<Bits>(units[b], k)),
                                Element::ToFloat(UnitElement<Bits>(units[b], k + 1)), inverse)
                  << (8 * k);
      }
      *reinterpret_cast<uint32_t*>(codes + v * vector_elements + first) = packed;
    }
  }
}

// The warp encodes the run of `elements` 16-bit values at `from` (this rank's input) into the
// run's destination `to` (a peer's output), in vectors of `vector_elements` with a scale each
// (kernels/wire/fp8_run.h). Vectors of up to 128 elements, a multiple of 4, on aligned bytes:
// EncodeShortVectors. Otherwise vector by vector: lane l takes elements 4l..4l+3, 4l+128.. on
// the unit path (8-byte loads, 4-byte code stores), elements l, l+32, ... on the element path.
template <typename Element>
__device__ void EncodeRun(const uint8_t* from, uint8_t* to, int64_t elements,
                          int64_t vector_elements, int lane) {
  using Bits = typename Element::Bits;
  const Bits* values = reinterpret_cast<const Bits*>(from);
  uint8_t* codes = to + Fp8RunCodesOffset(elements);
  uint8_t* scales = to + Fp8RunScalesOffset(elements, vector_elements);
  const int64_t vectors = elements / vector_elements;
  const bool units = vector_elements % kUnit == 0 && Aligned(from, 8) && Aligned(codes, 4);
  if (units && vector_elements <= kWarpSize * kUnit) {
    EncodeShortVectors<Element>(values, codes, scales, vectors, vector_elements, lane);
    return;
  }
  for (int64_t v = 0; v < vectors; ++v) {
    const Bits* vector = values + v * vector_elements;
    uint8_t* vector_codes = codes + v * vector_elements;
    float largest = 0.0f;
    if (units) {
      for (int64_t first = lane * kUnit; first < vector_elements; first += kWarpSize * kUnit) {
        const uint2 unit = __ldg(reinterpret_cast<const uint2*>(vector + first));
#pragma unroll
        for (int k = 0; k < kUnit; ++k) {
          largest = Fp8RowLargest(largest, Element::ToFloat(UnitElement<Bits>(unit, k)));
        }
      }
    } else {
      for (int64_t e = lane; e < vector_elements; e += kWarpSize) {
        largest = Fp8RowLargest(largest, Element::ToFloat(vector[e]));
      }
    }
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
      largest = Fp8RowLargest(largest, __shfl_xor_sync(kFullWarp, largest, offset));
    }
    const float scale = Fp8RowScale(largest);
    const float inverse = Fp8RowInverse(scale);
    if (lane == 0) StoreScale(scales + 4 * v, scale);
    if (units) {
      for (int64_t first = lane * kUnit; first < vector_elements; first += kWarpSize * kUnit) {
        const uint2 unit = __ldg(reinterpret_cast<const uint2*>(vector + first));
        uint32_t packed = 0;
#pragma unroll
        for (int k = 0; k < kUnit; k += 2) {
          packed |= Fp8EncodePair(Element::ToFloat(UnitElement<Bits>(unit, k)),
                                  Element::ToFloat(UnitElement<Bits>(unit, k + 1)), inverse)
                    << (8 * k);
        }
        *reinterpret_cast<uint32_t*>(vector_codes + first) = packed;
      }
    } else {
      for (int64_t e = lane; e < vector_elements; e += kWarpSize) {
        vector_codes[e] = Fp8Encode(Element::ToFloat(vector[e]), inverse);
      }
    }
  }
}

// The block's lane of `piece` for a peer: warp w encodes rows w, w + warps, ... of its part
// (RowSweep), one run per row, each tensor's rows from its input into its output.
template <typename Element>
__device__ void EncodePieceRows(const Piece& piece, const RowSweep& sweep,
                                const TensorAddresses& at, int64_t vector_elements) {
  const int lane = static_cast<int>(threadIdx.x % kWarpSize);
  const int64_t elements = piece.run_bytes / static_cast<int64_t>(sizeof(typename Element::Bits));
  const int64_t stride = SweepStride(sweep, kWarps);
  for (int64_t row = SweepFirstRow(sweep, kWarps, static_cast<int>(threadIdx.x / kWarpSize));
       row < sweep.rows; row += stride) {
    const TensorRow tensor_row = TensorRowOf(piece, row);
    const uint8_t* from = reinterpret_cast<const uint8_t*>(
        at.Input(tensor_row.tensor) + RowOffset(piece.src, piece.rows_per_slice, tensor_row.row));
    uint8_t* to = reinterpret_cast<uint8_t*>(
        at.Output(tensor_row.tensor) + RowOffset(piece.dst, piece.rows_per_slice, tensor_row.row));
    EncodeRun<Element>(from, to, elements, vector_elements, lane);
  }
}

// One block per SM, as the direct all-to-all kernel (the block budget of ranks that share a GPU
// is unchanged): the protocol beside kVectorsInFlight vectors takes 140 to 180 registers, and
// capped at 128 it spills (the launch bounds say one block per SM, so that the compiler does not
// cap it there).
template <typename Element>
__global__ void __launch_bounds__(kAllToAllFp8Threads, 1)
    AllToAllFp8EncodeKernel(const AllToAllKernelParams p) {
  RunDirectOp(
      p, DirectEntryOf(p),
      [&p](int lane, int lanes, int target, const uint64_t* outputs) {
        const Piece piece = PieceOf(p.geometry, p.rank, target);
        const RowSweep sweep = LaneRows(piece, lane, lanes, p.world_size, p.tensors);
        const TensorAddresses at = TensorAddressesOf(p, outputs);
        if (target == p.rank) {
          CopyPieceRows(piece, sweep, at);  // A rank's own piece stays exact.
        } else {
          EncodePieceRows<Element>(piece, sweep, at, p.vector_elements);
        }
      },
      NoPhaseClock());
}

// The warp decodes, in place, the run of `elements` at `run` (kernels/wire/fp8_run.h): every
// scale into `scales` (this warp's shared memory), then chunk by chunk in increasing order, each
// chunk's codes read by every lane before any lane writes the chunk's values.
template <typename Element>
__device__ void DecodeRun(uint8_t* run, int64_t elements, int64_t vector_elements,
                          float* scales, int lane) {
  using Bits = typename Element::Bits;
  const int64_t vectors = elements / vector_elements;
  const uint8_t* scale_bytes = run + Fp8RunScalesOffset(elements, vector_elements);
  for (int64_t v = lane; v < vectors; v += kWarpSize) scales[v] = LoadScale(scale_bytes + 4 * v);
  __syncwarp();
  const uint8_t* codes = run + Fp8RunCodesOffset(elements);
  Bits* values = reinterpret_cast<Bits*>(run);
  const bool units = Aligned(codes, 4) && Aligned(run, 8);
  for (int64_t chunk = 0; chunk < elements; chunk += kFp8DecodeChunk) {
    // Unit u of lane l: elements chunk + (32 u + l) 4 .. + 3, so that the warp's accesses to
    // each unit are contiguous. Loops over constant counts (count masks the run's tail), so that
    // nothing lands in local memory.
    uint32_t packed[kChunkUnits];
#pragma unroll
    for (int u = 0; u < kChunkUnits; ++u) {
      const int64_t first = chunk + (int64_t{u} * kWarpSize + lane) * kUnit;
      const int64_t count = first >= elements ? 0 : (elements - first < kUnit ? elements - first
                                                                                : kUnit);
      packed[u] = 0;
      if (units && count == kUnit) {
        packed[u] = *reinterpret_cast<const uint32_t*>(codes + first);
      } else {
#pragma unroll
        for (int k = 0; k < kUnit; ++k) {
          if (k < count) packed[u] |= uint32_t{codes[first + k]} << (8 * k);
        }
      }
    }
    __syncwarp();  // Every code of the chunk is read before any of its values is written.
#pragma unroll
    for (int u = 0; u < kChunkUnits; ++u) {
      const int64_t first = chunk + (int64_t{u} * kWarpSize + lane) * kUnit;
      const int64_t count = first >= elements ? 0 : (elements - first < kUnit ? elements - first
                                                                                : kUnit);
      if (count == 0) continue;
      // A unit spans at most two vectors (vector_elements >= kUnit): one division per unit.
      const int64_t vector = first / vector_elements;
      const int64_t next_vector = (vector + 1) * vector_elements;
      uint32_t decoded[kUnit / 2] = {};  // Two 16-bit values each: elements k and k + 1.
#pragma unroll
      for (int k = 0; k < kUnit; k += 2) {
        if (k >= count) continue;  // Past the run: no element, and no scale to read.
        float low, high;
        E4M3PairToFloats(packed[u] >> (8 * k), &low, &high);
        decoded[k / 2] = Fp8DecodeValue<Element>(
            low, scales[first + k < next_vector ? vector : vector + 1]);
        if (k + 1 < count) {
          decoded[k / 2] |= uint32_t{Fp8DecodeValue<Element>(
                                high, scales[first + k + 1 < next_vector ? vector : vector + 1])}
                            << 16;
        }
      }
      if (units && count == kUnit) {
        *reinterpret_cast<uint2*>(values + first) = make_uint2(decoded[0], decoded[1]);
      } else {
#pragma unroll
        for (int k = 0; k < kUnit; ++k) {
          if (k < count) values[first + k] = static_cast<Bits>(decoded[k / 2] >> (16 * (k % 2)));
        }
      }
    }
    // No barrier before the next chunk: its codes lie after every byte this chunk writes
    // (Fp8RunChunkSafe), and its own barrier orders its writes after this chunk's reads.
  }
  __syncwarp();  // Every lane is done with `scales` before the warp's next run fills it.
}

// Decodes every run this rank received from its peers, in every tensor's output: the runs of
// every peer's piece in peer order form one range, of which warp w of the grid takes runs w,
// w + warps, ... Nothing to do after an op that was abandoned (a timeout, a peer that gave up),
// and everything after one whose exit barrier passed, even where the Runtime was stopped since
// (LastOpDone); after a mismatch found at entry (recorded without abort) it decodes whatever its
// own output holds, within its own runs: the output is undefined then.
template <typename Element>
__global__ void __launch_bounds__(kAllToAllFp8Threads)
    AllToAllFp8DecodeKernel(const AllToAllKernelParams p) {
  __shared__ float scales[kWarps][kFp8MaxRunVectors];
  if (!LastOpDone(p.signals[p.rank])) return;
  const int lane = static_cast<int>(threadIdx.x % kWarpSize);
  const int warp = static_cast<int>(threadIdx.x / kWarpSize);
  const int64_t grid_warp = static_cast<int64_t>(blockIdx.x) * kWarps + warp;
  const int64_t grid_warps = static_cast<int64_t>(gridDim.x) * kWarps;
  uint64_t outputs[kMaxOpTensors] = {};
  outputs[0] = reinterpret_cast<uint64_t>(p.output);
  for (int tensor = 1; tensor < kMaxOpTensors; ++tensor) {
    if (tensor < p.tensors) outputs[tensor] = p.more_outputs.address[tensor - 1];
  }
  const TensorAddresses at = TensorAddressesOf(p, outputs);
  const int64_t total = ReceivedRows(p.geometry, p.rank, p.tensors);
  for (int64_t index = grid_warp; index < total; index += grid_warps) {
    const ReceivedRow received = ReceivedRowOf(p.geometry, p.rank, p.tensors, index);
    const Piece& piece = received.piece;
    const TensorRow tensor_row = TensorRowOf(piece, received.row);
    uint8_t* run = reinterpret_cast<uint8_t*>(
        at.Output(tensor_row.tensor) + RowOffset(piece.dst, piece.rows_per_slice, tensor_row.row));
    DecodeRun<Element>(run, piece.run_bytes / static_cast<int64_t>(sizeof(typename Element::Bits)),
                       p.vector_elements, scales[warp], lane);
  }
}

template <typename Element>
cudaError_t LaunchFor(const AllToAllKernelParams& params, int blocks, cudaStream_t stream) {
  AllToAllFp8EncodeKernel<Element><<<blocks, kAllToAllFp8Threads, 0, stream>>>(params);
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) return error;
  AllToAllFp8DecodeKernel<Element><<<blocks, kAllToAllFp8Threads, 0, stream>>>(params);
  return cudaGetLastError();
}

template <typename Element>
cudaError_t LoadFor(int* resident_blocks_per_sm) {
  const cudaError_t error = LoadKernel(AllToAllFp8EncodeKernel<Element>, kAllToAllFp8Threads,
                                       resident_blocks_per_sm);
  if (error != cudaSuccess) return error;
  return LoadKernel(AllToAllFp8DecodeKernel<Element>, kAllToAllFp8Threads,
                    resident_blocks_per_sm);
}

}  // namespace

cudaError_t LaunchAllToAllFp8(const AllToAllKernelParams& params, int blocks,
                              cudaStream_t stream) {
  if (blocks < 1 || params.vector_elements < kFp8MinVectorElements) return cudaErrorInvalidValue;
  // Every head group travels as runs of 16-bit elements that must fit (the receiving warp keeps
  // a run's scales in its shared memory).
  for (int rank = 0; rank < params.geometry.world_size; ++rank) {
    const int64_t elements = params.geometry.group_bytes[rank] / 2;
    if (elements > 0 && !Fp8RunFits(elements, params.vector_elements)) {
      return cudaErrorInvalidValue;
    }
  }
  switch (params.dtype) {
    case kReduceBFloat16:
      return LaunchFor<BFloat16Element>(params, blocks, stream);
    case kReduceFloat16:
      return LaunchFor<Float16Element>(params, blocks, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t LoadAllToAllFp8Kernels(int* resident_blocks_per_sm) {
  const cudaError_t error = LoadFor<BFloat16Element>(resident_blocks_per_sm);
  if (error != cudaSuccess) return error;
  return LoadFor<Float16Element>(resident_blocks_per_sm);
}

}  // namespace ltx
