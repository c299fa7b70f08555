// Rank placement: the GPU of each rank, co-located ranks, and their block budgets.
#include "ltx/runtime/rank_placement.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "kernels/wire/signal_layout.h"
#include "ltx/status_macros.h"

namespace ltx {

std::vector<int> DistinctDevices(absl::Span<const int> devices) {
  std::vector<int> distinct;
  for (int device : devices) {
    if (std::find(distinct.begin(), distinct.end(), device) == distinct.end()) {
      distinct.push_back(device);
    }
  }
  return distinct;
}

bool RanksShareGpus(absl::Span<const int> devices) {
  return DistinctDevices(devices).size() < devices.size();
}

RankPlacement::RankPlacement(std::vector<int> devices)
    : devices_(std::move(devices)), distinct_(DistinctDevices(devices_)) {}

absl::Status RankPlacement::CheckListed(absl::Span<const int> devices) {
  if (static_cast<int>(devices.size()) > kMaxWorldSize) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "devices: %d ranks given (or GPUs visible), at most %d per Runtime; list them in "
        "RuntimeOptions::devices",
        devices.size(), kMaxWorldSize));
  }
  for (size_t rank = 0; rank < devices.size(); ++rank) {
    if (devices[rank] < 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("devices[%d] = %d: a GPU ordinal is >= 0", rank, devices[rank]));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<RankPlacement> RankPlacement::Resolve(absl::Span<const int> devices,
                                                     int visible) {
  std::vector<int> resolved(devices.begin(), devices.end());
  if (resolved.empty()) {
    for (int device = 0; device < visible; ++device) resolved.push_back(device);
  }
  if (resolved.empty()) {
    return absl::InvalidArgumentError("devices: no GPU to place a rank on (none visible)");
  }
  LTX_RETURN_IF_ERROR(CheckListed(resolved));
  for (size_t rank = 0; rank < resolved.size(); ++rank) {
    if (resolved[rank] >= visible) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "devices[%d] = %d: no such GPU (%d visible)", rank, resolved[rank], visible));
    }
  }
  return RankPlacement(std::move(resolved));
}

std::vector<int> RankPlacement::PeersOf(int device) const {
  std::vector<int> peers;
  for (int other : distinct_) {
    if (other != device) peers.push_back(other);
  }
  return peers;
}

std::vector<int> RankPlacement::CoLocatedRanks(int rank) const {
  std::vector<int> ranks;
  for (int other = 0; other < world_size(); ++other) {
    if (other != rank && devices_[other] == devices_[rank]) ranks.push_back(other);
  }
  return ranks;
}

int RankPlacement::RanksOnGpuOf(int rank) const {
  return static_cast<int>(std::count(devices_.begin(), devices_.end(), devices_[rank]));
}

std::string RankPlacement::Describe() const { return absl::StrJoin(devices_, ","); }

int RankBlockBudget(int max_blocks, const GpuBlockCapacity& capacity, int ranks_on_gpu) {
  const int sm_count = std::max(capacity.sm_count, 1);
  if (ranks_on_gpu <= 1) return max_blocks > 0 ? max_blocks : sm_count;
  const int resident = sm_count * std::max(capacity.resident_blocks_per_sm, 1);
  const int share = std::max(resident / ranks_on_gpu, 1);
  // By default the other ranks' kernels, all waiting for this rank's, touch at most half the
  // SMs: this rank's own compute, queued before its collective, finds the rest free.
  const int wanted =
      max_blocks > 0 ? max_blocks : std::max(sm_count / (2 * (ranks_on_gpu - 1)), 1);
  return std::min(wanted, share);
}

int HardwareQueuesOf(const char* value) {
  constexpr int kCudaDefault = 8;
  constexpr int kCudaMost = 32;
  int queues = 0;
  if (value == nullptr || !absl::SimpleAtoi(value, &queues)) return kCudaDefault;
  return std::clamp(queues, 1, kCudaMost);
}

absl::Status CopyEnginesFitQueues(const RankPlacement& placement, int queues) {
  if (!placement.ranks_share_gpus()) return absl::OkStatus();
  const int world = placement.world_size();
  for (int rank = 0; rank < world; ++rank) {
    const int streams = placement.RanksOnGpuOf(rank) * world;
    if (streams > queues) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "the copy engines cannot serve %d ranks on GPU %d: with %d ranks each of them keeps "
          "%d streams busy (its own and one copy stream per other rank), %d on that GPU, which "
          "has %d hardware queues (CUDA_DEVICE_MAX_CONNECTIONS); a stream queued behind a "
          "co-located rank's waiting kernel would never run. Use the kernels (Protocol::kAuto, "
          "kDirect or kOneTrip), fewer ranks per GPU, or CUDA_DEVICE_MAX_CONNECTIONS=32 set "
          "before CUDA starts",
          placement.RanksOnGpuOf(rank), placement.device(rank), world, world, streams, queues));
    }
  }
  return absl::OkStatus();
}

}  // namespace ltx
