// The bandwidths of a reduction as nccl-tests defines them: algorithm bandwidth is the input
// bytes per rank over the time, and bus bandwidth scales it by what each rank must move over
// its links, 2(n-1)/n for the AllReduce and (n-1)/n for the ReduceScatter. Pure (no GPU).
#ifndef LTX_TOOLS_LTX_ALLREDUCE_REDUCE_BANDWIDTH_H_
#define LTX_TOOLS_LTX_ALLREDUCE_REDUCE_BANDWIDTH_H_

#include "kernels/wire/collective.h"

namespace ltx {

// busbw / algbw of `collective` (kAllReduce and kAllReduceRmsNorm: 2(n-1)/n; kReduceScatter:
// (n-1)/n) on `world` ranks; 0 on one rank, as in nccl-tests. Thread-safe (pure).
double BusBandwidthFactor(Collective collective, int world);

// One measurement's bandwidths in GB/s (1e9 bytes per second).
struct ReduceBandwidth {
  double algbw = -1;
  double busbw = -1;
};

// The bandwidths of `collective` on `world` ranks moving `input_bytes` per rank in `us`
// microseconds; -1 for both when `us` is not positive (not measured). Thread-safe (pure).
ReduceBandwidth ReduceBandwidthOf(Collective collective, int world, double input_bytes, double us);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLREDUCE_REDUCE_BANDWIDTH_H_
