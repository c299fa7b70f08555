// How many CUDA GPUs this process sees, for the tools and tests that must decide whether there
// is anything to run on.
#ifndef LTX_TOOLS_TESTING_VISIBLE_GPUS_H_
#define LTX_TOOLS_TESTING_VISIBLE_GPUS_H_

namespace ltx {

// Number of GPUs this process sees; 0 when there are none or no driver (the CUDA error that
// says so is cleared). Thread-safe.
int VisibleGpuCount();

}  // namespace ltx

#endif  // LTX_TOOLS_TESTING_VISIBLE_GPUS_H_
