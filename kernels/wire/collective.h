// Which collective an op belongs to. The host resolves protocols by it, and the devices' error
// records name it, so both sides share this definition.
#ifndef KERNELS_WIRE_COLLECTIVE_H_
#define KERNELS_WIRE_COLLECTIVE_H_

#include <cstdint>

namespace ltx {

enum class Collective : uint32_t {
  kAllGather = 1,
  // The Ulysses all-to-all: every protocol, chosen by its largest piece.
  kAllToAll = 2,
  // The reductions: every rank reads the rows it reduces from every rank's input (the pull
  // protocol over the direct protocol's barriers).
  kAllReduce = 3,
  kReduceScatter = 4,
  // The AllReduce with the fused residual-add + RMSNorm epilogue (one-shot: every rank reduces
  // every row).
  kAllReduceRmsNorm = 5,
};

// Whether `collective` reduces (its peers read its input instead of storing into its output).
constexpr bool IsReduction(Collective collective) {
  return collective == Collective::kAllReduce || collective == Collective::kReduceScatter ||
         collective == Collective::kAllReduceRmsNorm;
}

// "all_gather", "all_to_all", "all_reduce", "reduce_scatter" or "all_reduce_rmsnorm"; "op" for a
// value outside the enum (an error record without a collective).
constexpr const char* CollectiveName(Collective collective) {
  switch (collective) {
    case Collective::kAllGather:
      return "all_gather";
    case Collective::kAllToAll:
      return "all_to_all";
    case Collective::kAllReduce:
      return "all_reduce";
    case Collective::kReduceScatter:
      return "reduce_scatter";
    case Collective::kAllReduceRmsNorm:
      return "all_reduce_rmsnorm";
  }
  return "op";
}

}  // namespace ltx

#endif  // KERNELS_WIRE_COLLECTIVE_H_
