// Portability shim for code shared by host (g++) and device (nvcc) compilation: the copy plan
// and the signal-memory layout are plain arithmetic that both sides must agree on bit for bit.
#ifndef KERNELS_WIRE_HOST_DEVICE_H_
#define KERNELS_WIRE_HOST_DEVICE_H_

#if defined(__CUDACC__)
#define LTX_HOST_DEVICE __host__ __device__
#else
#define LTX_HOST_DEVICE
#endif

#endif  // KERNELS_WIRE_HOST_DEVICE_H_
