// The reductions' kernel: the pull protocol (kernels/protocols/pull_protocol.cuh: entry barrier,
// loads of every rank's input through peer pointers, exit barrier) around an element-wise
// reduction in rank order (kernels/reduce/reduce_math.h), or around the AllReduce with the fused
// residual-add + RMSNorm epilogue (kernels/reduce/rmsnorm_math.h). The plan
// (kernels/reduce/reduce_plan.h) decides which thread reduces which output elements; the result
// of an element does not depend on it.
#include "kernels/reduce/reduce_kernel.h"

#include <cstdint>

#include "kernels/device/kernel_residency.cuh"
#include "kernels/protocols/pull_protocol.cuh"
#include "kernels/reduce/reduce_math.h"
#include "kernels/reduce/reduce_plan.h"
#include "kernels/reduce/rmsnorm_math.h"

namespace ltx {
namespace {

// Loads every rank's `Word` at byte offset `offset` of its input into loaded[rank] (L2 only:
// peers' memory is read once), all before any is combined; the rank loop runs to the constant
// kMaxWorldSize, so the words stay in registers.
template <typename Word>
__device__ inline void LoadRankWords(const ReduceKernelParams& p, const uint64_t* inputs,
                                     int64_t offset, Word (&loaded)[kMaxWorldSize]) {
#pragma unroll
  for (int s = 0; s < kMaxWorldSize; ++s) {
    if (s < p.world_size) loaded[s] = __ldcg(reinterpret_cast<const Word*>(inputs[s] + offset));
  }
}

// Reduces the `Word` of output elements at byte offset `output_offset` (one element when
// `Word` is the element's bits, a 16-byte vector when it is uint4) from the words at
// `input_offset` of every rank's input (LoadRankWords).
template <typename Element, typename Word>
__device__ inline void ReduceWord(const ReduceKernelParams& p, const uint64_t* inputs,
                                  int64_t input_offset, int64_t output_offset) {
  using Bits = typename Element::Bits;
  constexpr int kElements = sizeof(Word) / sizeof(Bits);
  Word loaded[kMaxWorldSize];
  LoadRankWords(p, inputs, input_offset, loaded);
  Word result;
#pragma unroll
  for (int e = 0; e < kElements; ++e) {
    reinterpret_cast<Bits*>(&result)[e] =
        ReduceInRankOrder<Element>(p.reduction, p.world_size, [&loaded, e](int s) {
          return reinterpret_cast<const Bits*>(&loaded[s])[e];
        });
  }
  *reinterpret_cast<Word*>(static_cast<uint8_t*>(p.output) + output_offset) = result;
}

// The grid's share of the reduction: every batch slice split (SplitForReduce), thread t of the
// grid's T threads taking items t, t + T, ... (ReduceItemOf).
template <typename Element>
__device__ void ReduceRows(const ReduceKernelParams& p, const uint64_t* inputs) {
  const ReduceGeometry& g = p.geometry;
  const int64_t size = g.element_size;
  const int64_t threads = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t thread = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t slice = 0; slice < g.batch; ++slice) {
    const int64_t input_start = ReduceInputIndex(g, slice, 0) * size;
    const int64_t output_start = ReduceOutputIndex(g, slice, 0) * size;
    const ReduceSplit split =
        SplitForReduce(reinterpret_cast<uint64_t>(p.output) + output_start, inputs, input_start,
                       p.world_size, g.slice_elements, g.element_size);
    const int64_t items = ReduceItemCount(split);
    for (int64_t item = thread; item < items; item += threads) {
      const ReduceItem work = ReduceItemOf(split, item);
      const int64_t input_offset = input_start + work.first * size;
      const int64_t output_offset = output_start + work.first * size;
      if (work.elements > 1) {
        ReduceWord<Element, uint4>(p, inputs, input_offset, output_offset);
      } else {
        ReduceWord<Element, typename Element::Bits>(p, inputs, input_offset, output_offset);
      }
    }
  }
}

// The elements [index, index + sizeof(Word) / sizeof(Bits)) of the epilogue's rows (one element
// when Word is the element's bits, a whole 16-byte unit when it is uint4): their sums over every
// rank in rank order, plus the residual, stored as residual_out and their squares added to
// *partial in increasing order (rmsnorm_math.h).
template <typename Element, typename Word>
__device__ inline void SumIntoResidual(const ReduceKernelParams& p, const uint64_t* inputs,
                                       int64_t index, float* partial) {
  using Bits = typename Element::Bits;
  constexpr int kElements = sizeof(Word) / sizeof(Bits);
  Word loaded[kMaxWorldSize];
  LoadRankWords(p, inputs, index * static_cast<int64_t>(sizeof(Bits)), loaded);
  const Word residual = *(reinterpret_cast<const Word*>(p.residual) + index / kElements);
  Word stored;
#pragma unroll
  for (int e = 0; e < kElements; ++e) {
    const Bits sum = ReduceInRankOrder<Element>(kReduceSum, p.world_size, [&loaded, e](int s) {
      return reinterpret_cast<const Bits*>(&loaded[s])[e];
    });
    const Bits bits = AddResidual<Element>(sum, reinterpret_cast<const Bits*>(&residual)[e]);
    reinterpret_cast<Bits*>(&stored)[e] = bits;
    *partial = AccumulateSquare(*partial, Element::ToFloat(bits));
  }
  *(reinterpret_cast<Word*>(p.residual_out) + index / kElements) = stored;
}

// The outputs of the elements [index, index + sizeof(Word) / sizeof(Bits)) of a row that starts
// at element `row_start`, from the residual_out this thread stored and the row's scale.
template <typename Element, typename Word>
__device__ inline void NormInto(const ReduceKernelParams& p, int64_t row_start, int64_t index,
                                float scale) {
  using Bits = typename Element::Bits;
  constexpr int kElements = sizeof(Word) / sizeof(Bits);
  const Word stored = *(reinterpret_cast<const Word*>(p.residual_out) + index / kElements);
  const Word weight =
      *(reinterpret_cast<const Word*>(p.weight) + (index - row_start) / kElements);
  Word normed;
#pragma unroll
  for (int e = 0; e < kElements; ++e) {
    reinterpret_cast<Bits*>(&normed)[e] =
        NormedElement<Element>(reinterpret_cast<const Bits*>(&stored)[e], scale,
                               reinterpret_cast<const Bits*>(&weight)[e]);
  }
  *(reinterpret_cast<Word*>(p.output) + index / kElements) = normed;
}

// The AllReduce with the RMSNorm epilogue (rmsnorm_math.h has the order): block b of the grid's
// B takes rows b, b + B, ...; thread t takes the row's 16-byte units t, t + kRmsNormThreads, ...
// (RmsNormThreadOf): it reduces their elements over every rank in rank order, adds the
// residual, stores residual_out and accumulates the squares; each warp combines its lanes' sums
// (butterfly), thread 0 folds the warps' sums in order into the row's scale, and thread t stores
// the output of its units from the residual_out it stored itself. Where every buffer and every
// row start on 16 bytes, a unit moves as one vector, else element by element; the order, and so
// the bits, are the same either way, whatever the grid.
template <typename Element>
__device__ void RmsNormRows(const ReduceKernelParams& p, const uint64_t* inputs) {
  using Bits = typename Element::Bits;
  static_assert(kRmsNormThreads == kReduceThreads, "one block per row");
  constexpr int64_t kUnit = RmsNormUnit<Element>();
  __shared__ float warp_sums[kRmsNormWarps];
  __shared__ float row_scale;
  const int thread = static_cast<int>(threadIdx.x);
  const int64_t rows = p.geometry.slice_elements / p.hidden;
  uint64_t misaligned = reinterpret_cast<uint64_t>(p.residual) |
                        reinterpret_cast<uint64_t>(p.residual_out) |
                        reinterpret_cast<uint64_t>(p.output) |
                        reinterpret_cast<uint64_t>(p.weight) |
                        static_cast<uint64_t>(p.hidden * static_cast<int64_t>(sizeof(Bits)));
  for (int s = 0; s < p.world_size; ++s) misaligned |= inputs[s];
  const bool vectors = (misaligned & (kVectorBytes - 1)) == 0;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t base = row * p.hidden;
    float partial = 0.0f;
    for (int64_t first = thread * kUnit; first < p.hidden; first += kRmsNormThreads * kUnit) {
      if (vectors) {
        SumIntoResidual<Element, uint4>(p, inputs, base + first, &partial);
      } else {
        const int64_t end = first + kUnit < p.hidden ? first + kUnit : p.hidden;
        for (int64_t i = first; i < end; ++i) {
          SumIntoResidual<Element, Bits>(p, inputs, base + i, &partial);
        }
      }
    }
    for (int offset = kRmsNormLanes / 2; offset > 0; offset /= 2) {
      partial = CombineLanes(partial, __shfl_xor_sync(0xffffffffu, partial, offset));
    }
    if (thread % kRmsNormLanes == 0) warp_sums[thread / kRmsNormLanes] = partial;
    __syncthreads();
    if (thread == 0) {
      float sum = warp_sums[0];
      for (int w = 1; w < kRmsNormWarps; ++w) sum = CombineWarps(sum, warp_sums[w]);
      row_scale = RmsNormScale(sum, p.hidden, p.eps);
    }
    // Every thread reads the scale after this barrier. The next row's warp sums are written
    // after it (thread 0 has read these), and its scale after the next row's first barrier,
    // which every thread reaches only once it has read this one.
    __syncthreads();
    const float scale = row_scale;
    for (int64_t first = thread * kUnit; first < p.hidden; first += kRmsNormThreads * kUnit) {
      if (vectors) {
        NormInto<Element, uint4>(p, base, base + first, scale);
      } else {
        const int64_t end = first + kUnit < p.hidden ? first + kUnit : p.hidden;
        for (int64_t i = first; i < end; ++i) NormInto<Element, Bits>(p, base, base + i, scale);
      }
    }
  }
}

template <typename Element>
__global__ void __launch_bounds__(kReduceThreads) ReduceKernel(const ReduceKernelParams p) {
  RunPullOp(p, AnnouncementOf(p),
            [&p](const uint64_t* inputs) { ReduceRows<Element>(p, inputs); });
}

template <typename Element>
__global__ void __launch_bounds__(kReduceThreads) RmsNormKernel(const ReduceKernelParams p) {
  RunPullOp(p, AnnouncementOf(p),
            [&p](const uint64_t* inputs) { RmsNormRows<Element>(p, inputs); });
}

// The epilogue alone on one GPU: RmsNormRows over a single "rank" whose input is the sum.
// The input address sits in shared memory, as the collective kernel's inputs do (a local array
// indexed by the rank loops would live in local memory).
template <typename Element>
__global__ void __launch_bounds__(kReduceThreads, 1)
    RmsNormAloneKernel(const ReduceKernelParams p) {
  __shared__ uint64_t inputs[kMaxWorldSize];
  if (threadIdx.x == 0) inputs[0] = reinterpret_cast<uint64_t>(p.input);
  __syncthreads();
  RmsNormRows<Element>(p, inputs);
}

// Calls `launch` with a value of the element type of `dtype` (kReduceBFloat16, kReduceFloat16
// or kReduceFloat32), which enqueues that type's kernel; returns the launch error, or
// cudaErrorInvalidValue for another dtype.
template <typename Launch>
cudaError_t LaunchForDtype(int32_t dtype, Launch launch) {
  switch (dtype) {
    case kReduceBFloat16:
      launch(BFloat16Element());
      break;
    case kReduceFloat16:
      launch(Float16Element());
      break;
    case kReduceFloat32:
      launch(Float32Element());
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchReduceKernel(const ReduceKernelParams& params, int blocks, cudaStream_t stream) {
  // The reduction kernel, or its form with the epilogue.
  return LaunchForDtype(params.dtype, [&](auto element) {
    using Element = decltype(element);
    if (params.hidden > 0) {
      RmsNormKernel<Element><<<blocks, kReduceThreads, 0, stream>>>(params);
    } else {
      ReduceKernel<Element><<<blocks, kReduceThreads, 0, stream>>>(params);
    }
  });
}

cudaError_t LaunchRmsNormAlone(const RmsNormAloneArgs& args, int blocks, cudaStream_t stream) {
  if (args.rows < 0 || args.hidden <= 0 || blocks <= 0) return cudaErrorInvalidValue;
  ReduceKernelParams p;
  p.input = args.input;
  p.output = args.output;
  p.residual = args.residual;
  p.residual_out = args.residual_out;
  p.weight = args.weight;
  p.hidden = args.hidden;
  p.eps = args.eps;
  p.dtype = args.dtype;
  p.world_size = 1;
  p.geometry.slice_elements = args.rows * args.hidden;
  return LaunchForDtype(args.dtype, [&](auto element) {
    RmsNormAloneKernel<decltype(element)><<<blocks, kReduceThreads, 0, stream>>>(p);
  });
}

cudaError_t LoadReduceKernel(int* resident_blocks_per_sm) {
  for (const cudaError_t error :
       {LoadKernel(ReduceKernel<BFloat16Element>, kReduceThreads, resident_blocks_per_sm),
        LoadKernel(ReduceKernel<Float16Element>, kReduceThreads, resident_blocks_per_sm),
        LoadKernel(ReduceKernel<Float32Element>, kReduceThreads, resident_blocks_per_sm),
        LoadKernel(RmsNormKernel<BFloat16Element>, kReduceThreads, resident_blocks_per_sm),
        LoadKernel(RmsNormKernel<Float16Element>, kReduceThreads, resident_blocks_per_sm),
        LoadKernel(RmsNormKernel<Float32Element>, kReduceThreads, resident_blocks_per_sm)}) {
    if (error != cudaSuccess) return error;
  }
  return cudaSuccess;
}

}  // namespace ltx
