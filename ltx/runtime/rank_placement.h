// Where a Runtime's ranks run: the GPU of each rank, which ranks share a GPU, and how many
// thread blocks each rank's kernel may use so that the kernels of ranks sharing a GPU can all be
// resident at once, leaving by default half its SMs to a rank's compute while the others wait
// (kernels/PROTOCOL.md, "Ranks that share a GPU"). Pure logic: no CUDA call.
#ifndef LTX_RUNTIME_RANK_PLACEMENT_H_
#define LTX_RUNTIME_RANK_PLACEMENT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace ltx {

class RankPlacement {
 public:
  // The placement of RuntimeOptions::devices over `visible` GPUs: empty means one rank per
  // visible GPU, in ordinal order. A GPU may be named more than once ({0, 0, 0, 0}: four ranks
  // on GPU 0). InvalidArgument for an empty result, more than kMaxWorldSize ranks, or an ordinal
  // outside [0, visible). Thread-safe (pure).
  static absl::StatusOr<RankPlacement> Resolve(absl::Span<const int> devices, int visible);

  // What Resolve checks of a listed `devices` without knowing the GPUs: InvalidArgument for more
  // than kMaxWorldSize ranks or a negative ordinal; OK otherwise (an empty list too). Lets
  // Runtime::Create refuse them before it asks CUDA for the GPUs. Thread-safe (pure).
  static absl::Status CheckListed(absl::Span<const int> devices);

  // The GPU of each rank, in rank order.
  const std::vector<int>& devices() const { return devices_; }
  int world_size() const { return static_cast<int>(devices_.size()); }
  int device(int rank) const { return devices_[rank]; }

  // The distinct GPUs, in the order of their first rank.
  const std::vector<int>& distinct_devices() const { return distinct_; }

  // The distinct GPUs other than `device`, in the order of their first rank: the GPUs that need
  // access to memory of `device` (peer access, pool and virtual-memory grants: once per pair).
  std::vector<int> PeersOf(int device) const;

  // The other ranks on rank `rank`'s GPU, in rank order (empty: it has the GPU to itself).
  std::vector<int> CoLocatedRanks(int rank) const;

  // How many ranks run on rank `rank`'s GPU (1 when it has it to itself).
  int RanksOnGpuOf(int rank) const;

  // Whether some GPU hosts more than one rank.
  bool ranks_share_gpus() const { return distinct_.size() < devices_.size(); }

  // "0,0,1": the GPU of each rank, for messages.
  std::string Describe() const;

 private:
  explicit RankPlacement(std::vector<int> devices);

  std::vector<int> devices_;
  std::vector<int> distinct_;
};

// The distinct GPUs of `devices` (rank order), in the order of their first rank. Thread-safe.
std::vector<int> DistinctDevices(absl::Span<const int> devices);

// Whether some GPU of `devices` hosts more than one rank. Thread-safe.
bool RanksShareGpus(absl::Span<const int> devices);

// What one GPU offers the kernels of the ranks on it.
struct GpuBlockCapacity {
  int sm_count = 1;
  // The fewest blocks of any of ltx's kernels that one SM keeps resident (the occupancy API,
  // minimum over the kernels), >= 1.
  int resident_blocks_per_sm = 1;
};

// Most blocks one kernel of a rank may use (RuntimeOptions::max_blocks, 0: automatic), given
// that `ranks_on_gpu` ranks share its GPU. A rank alone on its GPU gets `max_blocks`, or one
// block per SM. Ranks sharing a GPU split it: each gets at most the share
// sm_count * resident_blocks_per_sm / ranks_on_gpu of what the GPU keeps resident (so that all of
// their kernels fit at once, whatever the mix), and by default sm_count / (2 * (ranks_on_gpu - 1))
// (half of its SMs for ranks_on_gpu - 1 ranks: the SMs that the other ranks' kernels, waiting for
// this rank's, can touch; the rest stay free for the compute this rank queued before its
// collective); at least 1. Thread-safe (pure).
int RankBlockBudget(int max_blocks, const GpuBlockCapacity& capacity, int ranks_on_gpu);

// The hardware queues a GPU gives the streams of this process: CUDA_DEVICE_MAX_CONNECTIONS as
// `value` (null when unset) names them, CUDA's default 8 when unset or not a number, clamped to
// CUDA's range [1, 32]. Thread-safe (pure).
int HardwareQueuesOf(const char* value);

// Whether the copy engines can serve `placement` on GPUs of `queues` hardware queues each
// (kernels/PROTOCOL.md, "Ranks that share a GPU"). A rank on the copy engines keeps its own stream
// and one copy stream per other rank busy, and on a GPU that hosts several ranks one rank's
// waiting kernel stalls every stream queued behind it: with more such streams than queues on one
// GPU, two of them must share a queue. OK when no GPU hosts two ranks or every GPU's ranks fit
// (ranks on it x world size <= queues); FailedPrecondition naming the GPU, the counts and what
// to do otherwise. Thread-safe (pure).
absl::Status CopyEnginesFitQueues(const RankPlacement& placement, int queues);

}  // namespace ltx

#endif  // LTX_RUNTIME_RANK_PLACEMENT_H_
