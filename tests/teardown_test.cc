// Tearing a Runtime down: destroying it never waits for the user's own work on its GPUs, and a
// cudaDeviceReset of its GPUs between Runtimes leaves the next Runtime over them fully working
// (peer access enabled again, no stale pinned memory). Each case runs in a child process of this
// binary (tests/child_process.h): a reset, or a teardown that frees memory under a kernel,
// would otherwise take the rest of the suite with it.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "ltx/cuda/primary_context.h"
#include "ltx/runtime.h"
#include "tests/busy_kernel.h"
#include "tests/child_process.h"
#include "tools/testing/gpu_fixture.h"

namespace ltx {
namespace {

// Selects what the child does ("busy" or "reset"); unset in the parent.
constexpr char kModeVariable[] = "LTX_TEARDOWN_TEST_CHILD";
constexpr char kChildSuite[] = "TeardownChild";
constexpr char kChildTest[] = "Run";
constexpr absl::Duration kChildTimeout = absl::Seconds(120);
// Lines the children print for the parent to repeat.
constexpr char kSummaryPrefix[] = "teardown: ";

// How long the user's kernel keeps every GPU busy, and how long destroying a Runtime may take
// meanwhile.
constexpr absl::Duration kBusyFor = absl::Seconds(2);
constexpr absl::Duration kDestroyLimit = absl::Milliseconds(100);

// A case small enough for the one-trip protocol and one for the direct protocol, on every rank.
AllGatherCase SmallCase(int world) {
  AllGatherCase c;
  c.hidden = 1000;  // 2000-byte rows: not a multiple of 16 bytes.
  for (int rank = 0; rank < world; ++rank) c.token_counts.push_back(3 + 2 * rank);
  return c;
}

AllGatherCase LargeCase(int world) {
  AllGatherCase c;
  c.hidden = 4096;
  for (int rank = 0; rank < world; ++rank) c.token_counts.push_back(70 + rank);  // > 512 KiB.
  c.output_misalignment = 2;
  return c;
}

// Runs both cases byte-exact on `f`, with the protocol each is meant for, in both call styles.
void ExpectGathersByteExact(GpuFixture& f, const std::string& when) {
  const int world = f.runtime->world_size();
  CallOptions one_trip;
  one_trip.protocol = Protocol::kOneTrip;
  CallOptions direct;
  direct.protocol = Protocol::kDirect;
  for (CallStyle style : {CallStyle::kCoordinated, CallStyle::kPerRankThreads}) {
    const absl::Status small = RunAndVerify(f, SmallCase(world), style, one_trip);
    EXPECT_TRUE(small.ok()) << when << ": one-trip: " << small;
    const absl::Status large = RunAndVerify(f, LargeCase(world), style, direct);
    EXPECT_TRUE(large.ok()) << when << ": direct: " << large;
  }
}

// Enqueues a kernel that spins for kBusyFor on `streams[i]` of every GPU gpus[i], creating the
// non-blocking streams on first use.
void KeepGpusBusy(const std::vector<int>& gpus, std::vector<cudaStream_t>& streams) {
  for (size_t i = 0; i < gpus.size(); ++i) {
    ASSERT_EQ(cudaSetDevice(gpus[i]), cudaSuccess);
    if (streams[i] == nullptr) {
      ASSERT_EQ(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking), cudaSuccess);
    }
    ASSERT_EQ(LaunchBusyKernel(absl::ToInt64Nanoseconds(kBusyFor), streams[i]), cudaSuccess);
  }
}

// True while the kernel on every stream still runs.
bool AllStillBusy(const std::vector<cudaStream_t>& streams) {
  for (cudaStream_t stream : streams) {
    if (cudaStreamQuery(stream) != cudaErrorNotReady) return false;
  }
  return true;
}

// Destroys `runtime` while every GPU is busy, and expects that to take less than kDestroyLimit.
absl::Duration TimeDestroyWhileBusy(std::unique_ptr<Runtime>& runtime,
                                    const std::vector<cudaStream_t>& busy, const char* which) {
  EXPECT_TRUE(AllStillBusy(busy)) << "the user's kernels ended before the " << which
                                  << " Runtime was destroyed: the timing would prove nothing";
  const absl::Time start = absl::Now();
  runtime.reset();
  const absl::Duration took = absl::Now() - start;
  EXPECT_LT(took, kDestroyLimit) << "destroying the " << which << " Runtime waited "
                                 << absl::FormatDuration(took)
                                 << " while a kernel of the user's ran on another stream";
  EXPECT_TRUE(AllStillBusy(busy)) << "the user's kernels ended while the " << which
                                  << " Runtime was being destroyed";
  return took;
}

// Child "busy": a Runtime over the layout's ranks gathers, then each of their GPUs gets a
// kBusyFor kernel on a stream of the user's; destroying the Runtime returns at once, a second
// Runtime is created and gathers byte-exact meanwhile, and destroying it returns at once too.
void DestroyWhileTheGpusAreBusy() {
  LTX_REQUIRE_RANKS(2);
  const std::vector<int> devices = TestRankDevices(2);
  const std::vector<int> gpus = DistinctDevices(devices);
  GpuFixture f = MakeGpuFixture(devices, OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  ExpectGathersByteExact(f, "before the GPUs were busy");
  std::vector<cudaStream_t> busy(gpus.size(), nullptr);
  KeepGpusBusy(gpus, busy);
  if (::testing::Test::HasFatalFailure()) return;
  const absl::Duration first = TimeDestroyWhileBusy(f.runtime, busy, "first");
  RuntimeOptions options = OnPeerStores();
  options.devices = devices;
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<Runtime>> second = Runtime::Create(options);
  const absl::Duration created = absl::Now() - start;
  ASSERT_TRUE(second.ok()) << second.status();
  f.runtime = std::move(*second);
  ExpectGathersByteExact(f, "with the GPUs busy");
  // A fresh round, so that the GPUs are surely still busy when the second Runtime goes.
  KeepGpusBusy(gpus, busy);
  if (::testing::Test::HasFatalFailure()) return;
  const absl::Duration last = TimeDestroyWhileBusy(f.runtime, busy, "second");
  std::cout << kSummaryPrefix << devices.size() << " rank(s) on " << gpus.size()
            << " GPU(s) busy with a " << absl::FormatDuration(kBusyFor)
            << " kernel each: destroying took " << absl::FormatDuration(first) << " and "
            << absl::FormatDuration(last) << ", creating the second Runtime "
            << absl::FormatDuration(created) << std::endl;
  for (size_t i = 0; i < gpus.size(); ++i) {
    cudaSetDevice(gpus[i]);
    EXPECT_EQ(cudaStreamSynchronize(busy[i]), cudaSuccess);
    cudaStreamDestroy(busy[i]);
  }
}

// Resets every GPU of `devices` (their primary contexts, and everything in them, are gone).
void ResetGpus(const std::vector<int>& devices) {
  for (int device : devices) {
    ASSERT_EQ(cudaSetDevice(device), cudaSuccess);
    ASSERT_EQ(cudaDeviceReset(), cudaSuccess) << "GPU " << device;
  }
}

// The primary context id of every GPU of `devices` (0 where it cannot be read).
std::vector<uint64_t> ContextIds(const std::vector<int>& devices) {
  std::vector<uint64_t> ids;
  for (int device : devices) {
    const absl::StatusOr<uint64_t> id = PrimaryContextId(device);
    EXPECT_TRUE(id.ok()) << id.status();
    ids.push_back(id.ok() ? *id : 0);
  }
  return ids;
}

// Child "reset": a Runtime over the layout's ranks gathers and is destroyed; each of their GPUs
// is reset; a new Runtime over the same ranks gathers byte-exact (peer access was enabled again,
// and no error record of the old contexts was reused). Then only the last GPU is reset, and once
// more.
void GatherAfterDeviceReset() {
  LTX_REQUIRE_RANKS(2);
  const std::vector<int> devices = TestRankDevices(2);
  const std::vector<int> gpus = DistinctDevices(devices);
  const std::vector<std::pair<std::string, std::vector<int>>> rounds = {
      {"before any reset", {}},
      {"after every GPU was reset", gpus},
      {"after the last GPU was reset", {gpus.back()}}};
  std::vector<uint64_t> contexts = ContextIds(gpus);
  for (const auto& [when, reset] : rounds) {
    ResetGpus(reset);
    if (::testing::Test::HasFatalFailure()) return;
    // What the process-wide records are keyed by: a new context for each reset GPU only.
    const std::vector<uint64_t> now = ContextIds(gpus);
    for (size_t i = 0; i < gpus.size(); ++i) {
      const bool was_reset = std::find(reset.begin(), reset.end(), gpus[i]) != reset.end();
      EXPECT_EQ(now[i] != contexts[i], was_reset) << when << ": GPU " << gpus[i];
    }
    contexts = now;
    GpuFixture f = MakeGpuFixture(devices, OnPeerStores());
    ASSERT_NE(f.runtime, nullptr) << when;
    ExpectGathersByteExact(f, when);
    // The harness and the Runtime go before the next reset.
  }
  std::cout << kSummaryPrefix << devices.size() << " rank(s) on " << gpus.size()
            << " GPU(s): byte-exact one-trip and direct gathers before and after resets"
            << std::endl;
}

class TeardownChildTest : public ::testing::Test {
 public:
  explicit TeardownChildTest(std::string mode) : mode_(std::move(mode)) {}
  void TestBody() override {
    if (mode_ == "busy") {
      DestroyWhileTheGpusAreBusy();
    } else if (mode_ == "reset") {
      GatherAfterDeviceReset();
    } else {
      ADD_FAILURE() << "unknown mode " << mode_;
    }
  }

 private:
  const std::string mode_;
};

// The child test exists only in the child processes, where kModeVariable is set.
[[maybe_unused]] const bool kChildRegistered = [] {
  const char* mode = std::getenv(kModeVariable);
  if (mode == nullptr) return false;
  ::testing::RegisterTest(kChildSuite, kChildTest, nullptr, mode, __FILE__, __LINE__,
                          [mode]() -> ::testing::Test* { return new TeardownChildTest(mode); });
  return true;
}();

// Runs the child `mode` (which inherits the layout switch) and expects it to pass; skips as the
// child did.
void ExpectChildPasses(const std::string& mode) {
  absl::StatusOr<ChildResult> child = RunSelfAsChild(
      {absl::StrCat("--gtest_filter=", kChildSuite, ".", kChildTest), "--gtest_color=no"},
      {{kModeVariable, mode}}, kChildTimeout);
  ASSERT_TRUE(child.ok()) << child.status();
  const std::string context = absl::StrCat("child ", mode, "; its output:\n", child->output);
  if (absl::StrContains(child->output, "[  SKIPPED ]")) LTX_SKIP_GPU_TEST(context);
  EXPECT_FALSE(child->timed_out) << "killed after " << kChildTimeout << "; " << context;
  EXPECT_EQ(child->signal, 0) << context;
  EXPECT_EQ(child->exit_code, 0) << context;
  EXPECT_TRUE(absl::StrContains(child->output, "[  PASSED  ] 1 test")) << context;
  for (absl::string_view line : absl::StrSplit(child->output, '\n')) {
    if (absl::StartsWith(line, kSummaryPrefix)) std::cout << line << std::endl;
  }
}

TEST(TeardownTest, DestroyingDoesNotWaitForOtherKernels) {
  LTX_REQUIRE_RANKS(2);
  ExpectChildPasses("busy");
}

TEST(TeardownTest, NewRuntimeGathersAfterDeviceReset) {
  LTX_REQUIRE_RANKS(2);
  ExpectChildPasses("reset");
}

}  // namespace
}  // namespace ltx
