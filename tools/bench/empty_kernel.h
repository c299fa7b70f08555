// An empty kernel, to measure what launching a grid costs with no work in it: without
// parameters, and with parameter blocks of the sizes a launch of ltx may carry.
#ifndef TOOLS_BENCH_EMPTY_KERNEL_H_
#define TOOLS_BENCH_EMPTY_KERNEL_H_

#include <cuda_runtime_api.h>

namespace ltx {

// Threads per block of the empty kernel: those of ltx's AllGather kernels.
inline constexpr int kEmptyKernelThreads = 512;

// Enqueues the empty kernel as `blocks` x kEmptyKernelThreads on `stream` (of the current
// device). Returns the launch error, if any. Thread-safe.
cudaError_t LaunchEmptyKernel(int blocks, cudaStream_t stream);

// The parameters an empty kernel can be launched with.
enum class EmptyKernelParams {
  kNone,
  kSmall,      // kSmallParamBytes: what the AllGather's would be with its peer tables in device
               // memory.
  kAllGather,  // An AllGatherKernelParams, as the AllGather kernels take.
};

inline constexpr int kSmallParamBytes = 128;

// Bytes of parameters of `params`.
int EmptyKernelParamBytes(EmptyKernelParams params);

// Like LaunchEmptyKernel, with a parameter block of `params` (zeroed).
cudaError_t LaunchEmptyKernelWith(EmptyKernelParams params, int blocks, cudaStream_t stream);

// Like LaunchEmptyKernelWith(kAllGather, ...), launched by cudaLaunchKernelEx with `done` (an
// event of the stream's GPU created with cudaEventDisableTiming) as its programmatic event:
// the event fires once every block has exited, so one call stands for a launch plus a
// cudaEventRecord after it.
cudaError_t LaunchEmptyKernelRecording(int blocks, cudaEvent_t done, cudaStream_t stream);

}  // namespace ltx

#endif  // TOOLS_BENCH_EMPTY_KERNEL_H_
