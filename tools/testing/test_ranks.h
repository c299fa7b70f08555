// The rank layout of the GPU tests, chosen by one switch in the environment, and the rule for
// skipping them. The layout lists the device ordinal of each rank; a GPU may host several ranks:
//   LTX_TEST_DEVICES=0,0,1  that layout (1..8 ranks, repeats allowed);
//   LTX_TEST_RANKS=N        N ranks (1..8) round robin over the visible GPUs (8 on 2: 0,1,0,1,...);
//   neither                 one rank per visible GPU.
// A test that needs n ranks runs on n ranks (shared GPUs where there are fewer), so that every
// multi-rank test runs on one GPU. With LTX_REQUIRE_RUN=1 every skip of a GPU test fails.
#ifndef LTX_TOOLS_TESTING_TEST_RANKS_H_
#define LTX_TOOLS_TESTING_TEST_RANKS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "ltx/runtime/rank_placement.h"

// Skips the current GPU test, saying `reason` (anything GoogleTest can stream, e.g. "a" << n);
// with LTX_REQUIRE_RUN=1 in the environment the test fails instead. (A macro: GTEST_SKIP and
// GTEST_FAIL must return from the function that uses them.)
#define LTX_SKIP_GPU_TEST(reason)                                                           \
  do {                                                                                      \
    if (::ltx::GpuRunRequired()) {                                                          \
      GTEST_FAIL() << "LTX_REQUIRE_RUN=1 forbids skipping this GPU test: " << reason;       \
    }                                                                                       \
    GTEST_SKIP() << reason;                                                                 \
  } while (false)

// Makes the current test ready to run on TestDevices(TestWorldSize(min_ranks)): fails it where
// the layout switch is malformed, skips it (LTX_SKIP_GPU_TEST) where no GPU is visible, and
// prints one line where its ranks share GPUs.
#define LTX_REQUIRE_RANKS(min_ranks)                                                        \
  do {                                                                                      \
    const ::absl::StatusOr<std::vector<int>>& ltx_layout = ::ltx::TestRankLayout();         \
    if (!ltx_layout.ok()) GTEST_FAIL() << ltx_layout.status().message();                    \
    if (ltx_layout->empty()) LTX_SKIP_GPU_TEST("needs a GPU, none is visible");             \
    ::ltx::AnnounceSharedGpus(::ltx::TestRankDevices(min_ranks));                           \
  } while (false)

// Skips the current test, also under LTX_REQUIRE_RUN=1, where a Runtime on `devices` refuses the
// copy engines (CopyEnginesServe); the refusal itself is tested on the CPU and in
// shared_gpu_test.
#define LTX_SKIP_WHERE_COPY_ENGINES_REFUSED(devices)                                        \
  do {                                                                                      \
    if (!::ltx::CopyEnginesServe(devices)) {                                                \
      GTEST_SKIP() << "the Runtime refuses the copy engines for " << (devices).size()        \
                   << " ranks on these GPUs (more copy streams than hardware queues)";      \
    }                                                                                       \
  } while (false)

namespace ltx {

// The layout the switch names: `devices_value` (LTX_TEST_DEVICES) if set, else `ranks_value`
// (LTX_TEST_RANKS) if set, else one rank per GPU; null or empty means unset. With no GPU
// visible the layout is empty (a value is still checked for form). InvalidArgument, naming the
// variable and its value, for a value that is not a list of integers, a rank count or a layout
// length outside 1..kMaxWorldSize, or a device that is not visible. Thread-safe (pure).
absl::StatusOr<std::vector<int>> ParseRankLayout(const char* devices_value,
                                                 const char* ranks_value, int visible_gpus);

// `ranks` ranks of `layout`: its first `ranks`, or, where it has fewer, `ranks` ranks round
// robin over its distinct GPUs in order of appearance ({0,1} and 4: {0,1,0,1}). `layout` must
// not be empty. Thread-safe (pure).
std::vector<int> RanksOfLayout(const std::vector<int>& layout, int ranks);

// This process's layout: ParseRankLayout of its environment and visible GPUs, read once.
const absl::StatusOr<std::vector<int>>& TestRankLayout();

// max(min_ranks, ranks in the layout); min_ranks where the layout is malformed or empty.
int TestWorldSize(int min_ranks);

// RanksOfLayout(layout, ranks); {0, ...} (ranks ranks on GPU 0) where the layout is malformed or
// empty, for tests that have already failed or skipped.
std::vector<int> TestDevices(int ranks);

// TestDevices(TestWorldSize(min_ranks)): the devices of a test that needs `min_ranks` ranks.
std::vector<int> TestRankDevices(int min_ranks);

// Layouts made of `layout`'s ranks, for tests of world sizes and device orders: every prefix
// (world sizes 1..n), then `layout` reversed, its ranks 2, 0, 1 and its ranks 3, 1 (where it has
// that many).
std::vector<std::vector<int>> SubLayouts(const std::vector<int>& layout);

// Rank indices 0..n-1 (for lists of ranks, never of devices).
std::vector<int> RankIndices(int n);

// Whether a Runtime on `devices` serves Protocol::kCopyEngine in this process: false where ranks
// sharing a GPU have more copy streams than it has hardware queues (CopyEnginesFitQueues), where
// the Runtime refuses those calls by design and a test of them has nothing to run.
bool CopyEnginesServe(const std::vector<int>& devices);

// Prints "[ ltx      ] N ranks on GPUs a,b,... (ranks share GPUs)" where ranks of `devices`
// share GPUs; nothing otherwise.
void AnnounceSharedGpus(const std::vector<int>& devices);

// Whether LTX_REQUIRE_RUN=1 is set: GPU tests may not skip.
bool GpuRunRequired();

}  // namespace ltx

#endif  // LTX_TOOLS_TESTING_TEST_RANKS_H_
