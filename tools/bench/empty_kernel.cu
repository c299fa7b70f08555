// The empty kernel of the launch floor, bare and with parameter blocks of chosen sizes.
#include "kernels/allgather/allgather_kernel.h"
#include "tools/bench/empty_kernel.h"

namespace ltx {
namespace {

// A parameter block of `kBytes` bytes.
template <int kBytes>
struct ParamBytes {
  unsigned char bytes[kBytes];
};

__global__ void EmptyKernel() {}

template <typename Params>
__global__ void EmptyKernelWith(const Params) {}

template <typename Params>
cudaError_t LaunchWith(int blocks, cudaStream_t stream) {
  EmptyKernelWith<<<blocks, kEmptyKernelThreads, 0, stream>>>(Params{});
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchEmptyKernel(int blocks, cudaStream_t stream) {
  EmptyKernel<<<blocks, kEmptyKernelThreads, 0, stream>>>();
  return cudaGetLastError();
}

int EmptyKernelParamBytes(EmptyKernelParams params) {
  switch (params) {
    case EmptyKernelParams::kNone:
      break;
    case EmptyKernelParams::kSmall:
      return kSmallParamBytes;
    case EmptyKernelParams::kAllGather:
      return static_cast<int>(sizeof(AllGatherKernelParams));
  }
  return 0;
}

cudaError_t LaunchEmptyKernelWith(EmptyKernelParams params, int blocks, cudaStream_t stream) {
  switch (params) {
    case EmptyKernelParams::kNone:
      break;
    case EmptyKernelParams::kSmall:
      return LaunchWith<ParamBytes<kSmallParamBytes>>(blocks, stream);
    case EmptyKernelParams::kAllGather:
      return LaunchWith<AllGatherKernelParams>(blocks, stream);
  }
  return LaunchEmptyKernel(blocks, stream);
}

cudaError_t LaunchEmptyKernelRecording(int blocks, cudaEvent_t done, cudaStream_t stream) {
  cudaLaunchAttribute attribute;
  attribute.id = cudaLaunchAttributeProgrammaticEvent;
  attribute.val.programmaticEvent.event = done;
  attribute.val.programmaticEvent.flags = 0;
  attribute.val.programmaticEvent.triggerAtBlockStart = 0;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(kEmptyKernelThreads);
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, EmptyKernelWith<AllGatherKernelParams>,
                            AllGatherKernelParams{});
}

}  // namespace ltx
