// The reductions' kernel: the pull protocol (kernels/protocols/pull_protocol.cuh: entry barrier,
// loads of every rank's input through peer pointers, exit barrier) around an element-wise
// reduction in rank order (kernels/reduce/reduce_math.h). The plan (kernels/reduce/reduce_plan.h)
// decides which thread reduces which output elements; the result of an element does not depend
// on it.
#include "kernels/reduce/reduce_kernel.h"

#include <cstdint>

#include "kernels/device/kernel_residency.cuh"
#include "kernels/protocols/pull_protocol.cuh"
#include "kernels/reduce/reduce_math.h"
#include "kernels/reduce/reduce_plan.h"

namespace ltx {
namespace {

// Reduces the `Word` of output elements at byte offset `output_offset` (one element when
// `Word` is the element's bits, a 16-byte vector when it is uint4) from the words at
// `input_offset` of every rank's input. Every rank's word is loaded (L2 only: peers' memory is
// read once) before any is combined; the rank loops run to the constant kMaxWorldSize, so the
// words stay in registers.
template <typename Element, typename Word>
__device__ inline void ReduceWord(const ReduceKernelParams& p, const uint64_t* inputs,
                                  int64_t input_offset, int64_t output_offset) {
  using Bits = typename Element::Bits;
  constexpr int kElements = sizeof(Word) / sizeof(Bits);
  Word loaded[kMaxWorldSize];
#pragma unroll
  for (int s = 0; s < kMaxWorldSize; ++s) {
    if (s < p.world_size) {
      loaded[s] = __ldcg(reinterpret_cast<const Word*>(inputs[s] + input_offset));
    }
  }
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

template <typename Element>
__global__ void __launch_bounds__(kReduceThreads) ReduceKernel(const ReduceKernelParams p) {
  RunPullOp(p, AnnouncementOf(p),
            [&p](const uint64_t* inputs) { ReduceRows<Element>(p, inputs); });
}

}  // namespace

cudaError_t LaunchReduceKernel(const ReduceKernelParams& params, int blocks, cudaStream_t stream) {
  switch (params.dtype) {
    case kReduceBFloat16:
      ReduceKernel<BFloat16Element><<<blocks, kReduceThreads, 0, stream>>>(params);
      break;
    case kReduceFloat16:
      ReduceKernel<Float16Element><<<blocks, kReduceThreads, 0, stream>>>(params);
      break;
    case kReduceFloat32:
      ReduceKernel<Float32Element><<<blocks, kReduceThreads, 0, stream>>>(params);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t LoadReduceKernel(int* resident_blocks_per_sm) {
  for (const cudaError_t error :
       {LoadKernel(ReduceKernel<BFloat16Element>, kReduceThreads, resident_blocks_per_sm),
        LoadKernel(ReduceKernel<Float16Element>, kReduceThreads, resident_blocks_per_sm),
        LoadKernel(ReduceKernel<Float32Element>, kReduceThreads, resident_blocks_per_sm)}) {
    if (error != cudaSuccess) return error;
  }
  return cudaSuccess;
}

}  // namespace ltx
