// The GPU tests' rank layout switch, read from the environment once.
#include "tools/testing/test_ranks.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "kernels/wire/signal_layout.h"
#include "tools/flags/int_list.h"
#include "tools/testing/visible_gpus.h"

namespace ltx {
namespace {

bool IsSet(const char* value) { return value != nullptr && value[0] != '\0'; }

// Ranks that share a GPU wait for each other inside their kernels and copy-engine streams, so
// every GPU test process sets, before CUDA starts (at static initialisation, unless its
// environment already says otherwise), what kernels/PROTOCOL.md ("Ranks that share a GPU") asks
// of a process whose ranks share GPUs:
// - eager module loading: under lazy loading the first launch of a kernel (a test's pattern,
//   busy or delay kernel) waits until the device is idle, which a GPU whose co-located rank
//   waits in a collective is not before that collective's timeout;
// - the most hardware queues per GPU: the streams of several ranks share fewer queues, and a
//   stream's wait for another rank's event at the head of a shared queue holds every stream
//   behind it.
const bool kSharedGpuEnvironment =
    setenv("CUDA_MODULE_LOADING", "EAGER", /*overwrite=*/0) == 0 &&
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", /*overwrite=*/0) == 0;

// InvalidArgument naming the variable, its value and what is wrong with it.
absl::Status Malformed(const char* variable, const char* value, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s=%s: %s (GPU tests take their rank layout from LTX_TEST_DEVICES, e.g. "
                      "0,0,1, or LTX_TEST_RANKS, e.g. 4)",
                      variable, value, why));
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseRankLayout(const char* devices_value,
                                                 const char* ranks_value, int visible_gpus) {
  if (IsSet(devices_value)) {
    absl::StatusOr<std::vector<int>> devices =
        ParseIntList(devices_value, 0, 1 << 20, "a device ordinal (a number >= 0)");
    if (!devices.ok()) {
      return Malformed("LTX_TEST_DEVICES", devices_value, devices.status().message());
    }
    if (devices->empty() || static_cast<int>(devices->size()) > kMaxWorldSize) {
      return Malformed("LTX_TEST_DEVICES", devices_value,
                       absl::StrFormat("%d ranks, not 1..%d", devices->size(), kMaxWorldSize));
    }
    if (visible_gpus == 0) return std::vector<int>();
    for (int device : *devices) {
      if (device >= visible_gpus) {
        return Malformed("LTX_TEST_DEVICES", devices_value,
                         absl::StrFormat("GPU %d is not visible (%d visible)", device,
                                         visible_gpus));
      }
    }
    return devices;
  }
  int ranks = visible_gpus;
  if (IsSet(ranks_value)) {
    absl::StatusOr<std::vector<int>> count = ParseIntList(
        ranks_value, 1, kMaxWorldSize, absl::StrFormat("a rank count in 1..%d", kMaxWorldSize));
    if (!count.ok()) return Malformed("LTX_TEST_RANKS", ranks_value, count.status().message());
    if (count->size() != 1) return Malformed("LTX_TEST_RANKS", ranks_value, "not one number");
    ranks = count->front();
  }
  std::vector<int> devices;
  for (int rank = 0; visible_gpus > 0 && rank < ranks; ++rank) {
    devices.push_back(rank % visible_gpus);
  }
  return devices;
}

std::vector<int> RanksOfLayout(const std::vector<int>& layout, int ranks) {
  if (ranks <= static_cast<int>(layout.size())) {
    return std::vector<int>(layout.begin(), layout.begin() + ranks);
  }
  const std::vector<int> distinct = DistinctDevices(layout);
  std::vector<int> devices;
  for (int rank = 0; rank < ranks; ++rank) devices.push_back(distinct[rank % distinct.size()]);
  return devices;
}

const absl::StatusOr<std::vector<int>>& TestRankLayout() {
  static const absl::StatusOr<std::vector<int>>* const layout =
      new absl::StatusOr<std::vector<int>>(ParseRankLayout(
          std::getenv("LTX_TEST_DEVICES"), std::getenv("LTX_TEST_RANKS"), VisibleGpuCount()));
  return *layout;
}

int TestWorldSize(int min_ranks) {
  const absl::StatusOr<std::vector<int>>& layout = TestRankLayout();
  if (!layout.ok()) return min_ranks;
  return std::max(min_ranks, static_cast<int>(layout->size()));
}

std::vector<int> TestDevices(int ranks) {
  const absl::StatusOr<std::vector<int>>& layout = TestRankLayout();
  if (!layout.ok() || layout->empty()) return std::vector<int>(ranks, 0);
  return RanksOfLayout(*layout, ranks);
}

std::vector<int> TestRankDevices(int min_ranks) { return TestDevices(TestWorldSize(min_ranks)); }

std::vector<std::vector<int>> SubLayouts(const std::vector<int>& layout) {
  const int n = static_cast<int>(layout.size());
  std::vector<std::vector<int>> subsets;
  for (int size = 1; size <= n; ++size) subsets.push_back(RanksOfLayout(layout, size));
  if (n >= 2) subsets.push_back(std::vector<int>(layout.rbegin(), layout.rend()));
  if (n >= 3) subsets.push_back({layout[2], layout[0], layout[1]});
  if (n >= 4) subsets.push_back({layout[3], layout[1]});
  return subsets;
}

std::vector<int> RankIndices(int n) {
  std::vector<int> ranks;
  for (int rank = 0; rank < n; ++rank) ranks.push_back(rank);
  return ranks;
}

bool CopyEnginesServe(const std::vector<int>& devices) {
  if (devices.empty()) return true;
  const int visible = *std::max_element(devices.begin(), devices.end()) + 1;
  const absl::StatusOr<RankPlacement> placement = RankPlacement::Resolve(devices, visible);
  return placement.ok() &&
         CopyEnginesFitQueues(*placement,
                              HardwareQueuesOf(std::getenv("CUDA_DEVICE_MAX_CONNECTIONS")))
             .ok();
}

void AnnounceSharedGpus(const std::vector<int>& devices) {
  if (!RanksShareGpus(devices)) return;
  std::cout << "[ ltx      ] " << devices.size() << " ranks on GPUs "
            << absl::StrJoin(devices, ",") << " (ranks share GPUs)" << std::endl;
}

bool GpuRunRequired() {
  const char* value = std::getenv("LTX_REQUIRE_RUN");
  return value != nullptr && std::string(value) == "1";
}

}  // namespace ltx
