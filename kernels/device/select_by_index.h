// Reading an element of a small array with an index known only at run time, without indexing:
// a kernel that indexes a local array so keeps the array in local memory (a stack frame, loads
// through L1), on paths such as every op's copy loop; comparing against each constant index
// keeps it in registers. Host and device (the CPU tests call it as the kernels do).
#ifndef KERNELS_DEVICE_SELECT_BY_INDEX_H_
#define KERNELS_DEVICE_SELECT_BY_INDEX_H_

#include <cstdint>

#include "kernels/wire/host_device.h"

namespace ltx {

// values[index] for 0 <= index < N (values[0] for any other index), by N - 1 comparisons.
template <typename T, int N>
LTX_HOST_DEVICE inline T SelectByIndex(const T (&values)[N], int64_t index) {
  T chosen = values[0];
  LTX_UNROLL
  for (int i = 1; i < N; ++i) {
    if (index == i) chosen = values[i];
  }
  return chosen;
}

}  // namespace ltx

#endif  // KERNELS_DEVICE_SELECT_BY_INDEX_H_
