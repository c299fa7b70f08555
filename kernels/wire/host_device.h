// Portability shim for code shared by host (g++) and device (nvcc) compilation: the copy plan
// and the signal-memory layout are plain arithmetic that both sides must agree on bit for bit.
#ifndef KERNELS_WIRE_HOST_DEVICE_H_
#define KERNELS_WIRE_HOST_DEVICE_H_

#if defined(__CUDACC__)
#define LTX_HOST_DEVICE __host__ __device__
#else
#define LTX_HOST_DEVICE
#endif

// Before a loop of constant trip count in shared code: unrolled by nvcc (so that the arrays it
// indexes stay in registers), left alone by the host compiler, which knows no such pragma.
#if defined(__CUDACC__)
#define LTX_UNROLL _Pragma("unroll")
#else
#define LTX_UNROLL
#endif

#endif  // KERNELS_WIRE_HOST_DEVICE_H_
