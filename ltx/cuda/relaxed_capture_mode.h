// A scope in which the calling thread's CUDA calls cannot invalidate a stream capture in progress.
#ifndef LTX_CUDA_RELAXED_CAPTURE_MODE_H_
#define LTX_CUDA_RELAXED_CAPTURE_MODE_H_

#include <cuda_runtime_api.h>

namespace ltx {

// Puts the calling thread in relaxed stream-capture mode (cudaStreamCaptureModeRelaxed) for its
// lifetime and restores the thread's mode after: calls that would otherwise be "potentially
// unsafe" during a capture (a copy from pageable memory, an allocation) then neither fail nor
// invalidate the capture of this thread, or every capture in global mode. For work that is not
// part of the capture (granting peers access to a buffer, telling the GPUs to give up an op).
// Not copyable; use on one thread.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

}  // namespace ltx

#endif  // LTX_CUDA_RELAXED_CAPTURE_MODE_H_
