// Programmatic dependent launch (sm_90 and later), as the one-trip kernel uses it. A kernel
// launched with programmatic stream serialization may have its blocks scheduled while the kernel
// before it on the stream is still finishing; AwaitPriorGrids holds such a block until that
// kernel has completed and its memory operations are visible, so everything after it runs as if
// the launch had been an ordinary one. AllowDependentLaunch lets the kernel after this one be
// scheduled (its blocks then wait in their own AwaitPriorGrids). Both do nothing for a kernel
// launched the ordinary way, or when compiled for GPUs before sm_90.
#ifndef KERNELS_DEVICE_GRID_DEPENDENCY_CUH_
#define KERNELS_DEVICE_GRID_DEPENDENCY_CUH_

namespace ltx {

__device__ __forceinline__ void AwaitPriorGrids() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void AllowDependentLaunch() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

}  // namespace ltx

#endif  // KERNELS_DEVICE_GRID_DEPENDENCY_CUH_
