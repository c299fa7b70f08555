// The visible GPU count, with "no driver" and "no device" both read as zero.
#include "tools/testing/visible_gpus.h"

#include <cuda_runtime_api.h>

namespace ltx {

int VisibleGpuCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

}  // namespace ltx
