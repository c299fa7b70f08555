// The AllGather kernel of the direct path: the direct protocol (kernels/direct_protocol.cuh:
// entry barrier, stores, last-block-done exit barrier; kernels/PROTOCOL.md) storing this rank's
// shard into every rank's output over NVLink. The copy plan (kernels/copy_plan.h) decides which
// block stores which bytes.
#include "kernels/allgather_kernel.h"

#include <cstdint>

#include "kernels/block_copy.cuh"
#include "kernels/copy_plan.h"
#include "kernels/direct_protocol.cuh"

namespace ltx {
namespace {

__global__ void __launch_bounds__(kAllGatherThreads) AllGatherKernel(
    const AllGatherKernelParams p) {
  RunDirectOp(p, AnnouncementOf(p, AnnouncedProtocol::kDirect),
              [&p](int lane, int lanes, int /*target*/, uint64_t output) {
                CopyLane(p.geometry, lane, lanes, p.world_size,
                         static_cast<const uint8_t*>(p.input), reinterpret_cast<uint8_t*>(output));
              });
}

}  // namespace

cudaError_t LaunchAllGatherKernel(const AllGatherKernelParams& params, int blocks,
                                  cudaStream_t stream) {
  AllGatherKernel<<<blocks, kAllGatherThreads, 0, stream>>>(params);
  return cudaGetLastError();
}

cudaError_t LoadAllGatherKernel() {
  cudaFuncAttributes attributes;
  return cudaFuncGetAttributes(&attributes, AllGatherKernel);
}

}  // namespace ltx
