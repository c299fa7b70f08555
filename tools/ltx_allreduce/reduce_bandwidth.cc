// nccl-tests' bandwidths of the reductions.
#include "tools/ltx_allreduce/reduce_bandwidth.h"

namespace ltx {

double BusBandwidthFactor(Collective collective, int world) {
  const double share = static_cast<double>(world - 1) / world;
  return collective == Collective::kReduceScatter ? share : 2 * share;
}

ReduceBandwidth ReduceBandwidthOf(Collective collective, int world, double input_bytes, double us) {
  if (us <= 0) return ReduceBandwidth{};
  const double algbw = input_bytes / us / 1e3;
  return ReduceBandwidth{algbw, algbw * BusBandwidthFactor(collective, world)};
}

}  // namespace ltx
