// Runtime behaviour that needs no GPU (bad options, no GPUs at all), and device-list checks
// that need some GPUs.
#include "ltx/runtime.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ltx/cuda/driver_api.h"
#include "tools/testing/gpu_fixture.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;

TEST(RuntimeTest, RejectsNonPositiveTimeout) {
  RuntimeOptions options;
  options.timeout = absl::ZeroDuration();
  auto runtime = Runtime::Create(options);
  EXPECT_EQ(runtime.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(runtime.status().message()), HasSubstr("timeout"));
  options.timeout = absl::InfiniteDuration();
  EXPECT_EQ(Runtime::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RuntimeTest, RejectsNegativeMaxBlocks) {
  RuntimeOptions options;
  options.max_blocks = -1;
  auto runtime = Runtime::Create(options);
  EXPECT_EQ(runtime.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(runtime.status().message()), HasSubstr("max_blocks"));
}

TEST(RuntimeTest, RejectsBadSpinAndSizeLimits) {
  RuntimeOptions options;
  options.worker_spin = absl::Microseconds(-1);
  auto runtime = Runtime::Create(options);
  EXPECT_EQ(runtime.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(runtime.status().message()), HasSubstr("worker_spin"));
  options = RuntimeOptions();
  options.one_trip_max_bytes = int64_t{1} << 30;
  runtime = Runtime::Create(options);
  EXPECT_EQ(runtime.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(runtime.status().message()), HasSubstr("one_trip_max_bytes"));
  options = RuntimeOptions();
  options.copy_engine_min_bytes = -1;
  runtime = Runtime::Create(options);
  EXPECT_EQ(runtime.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(runtime.status().message()), HasSubstr("copy_engine_min_bytes"));
  options = RuntimeOptions();
  options.two_shot_min_bytes = -1;
  runtime = Runtime::Create(options);
  EXPECT_EQ(runtime.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(runtime.status().message()), HasSubstr("two_shot_min_bytes"));
}

// Options that need no GPU to be wrong are refused before CUDA is asked for the GPUs, alike on
// a machine with GPUs and one without.
TEST(RuntimeTest, RejectsBadTransportsAndDeviceListsBeforeLookingForGpus) {
  RuntimeOptions options;
  options.transport = static_cast<Transport>(9);
  absl::Status status = Runtime::Create(options).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("transport: unknown value 9"));
  options = RuntimeOptions();
  options.devices.assign(kMaxWorldSize + 1, 0);
  status = Runtime::Create(options).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("at most 8 per Runtime"));
  options.devices = {0, -2};
  status = Runtime::Create(options).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("devices[1] = -2"));
}

TEST(RuntimeTest, WithoutGpusCreateFailsClearly) {
  if (VisibleGpuCount() > 0) GTEST_SKIP() << "GPUs are visible: the no-GPU path is not reachable";
  auto runtime = Runtime::Create({});
  EXPECT_EQ(runtime.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(runtime.status().message()), HasSubstr("no CUDA GPU is visible"));
  if (!CudaDriverInstalled()) {
    // A machine without a driver: the message says so, rather than blaming the driver version.
    EXPECT_THAT(std::string(runtime.status().message()),
                HasSubstr("no CUDA driver is installed"));
  }
}

// A GPU may host several ranks ({0, 0}: two ranks on GPU 0), up to kMaxWorldSize ranks in all.
TEST(RuntimeTest, RejectsUnknownDevicesAndTakesRepeatedOnes) {
  LTX_REQUIRE_RANKS(1);
  RuntimeOptions options;
  options.devices = {VisibleGpuCount()};
  auto runtime = Runtime::Create(options);
  EXPECT_EQ(runtime.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(runtime.status().message()), HasSubstr("no such GPU"));
  options.devices = {-1};
  EXPECT_EQ(Runtime::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.devices.assign(kMaxWorldSize + 1, 0);
  EXPECT_EQ(Runtime::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.devices = {0, 0};
  runtime = Runtime::Create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  EXPECT_EQ((*runtime)->world_size(), 2);
  EXPECT_EQ((*runtime)->devices(), std::vector<int>({0, 0}));
}

TEST(RuntimeTest, RejectsBadCallOptionsAndRanks) {
  LTX_REQUIRE_RANKS(1);
  RuntimeOptions options;
  options.devices = TestDevices(1);
  auto runtime = Runtime::Create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  const std::vector<int64_t> counts = {0};
  AllGatherShape shape;
  shape.hidden = 8;
  shape.token_counts = counts;
  RankBuffers buffers;
  CallOptions call;
  call.timeout = absl::ZeroDuration();
  absl::Status status = (*runtime)->AllGatherRank(0, shape, buffers, call);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_EQ((*runtime)->AllGatherRank(1, shape, buffers).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*runtime)->AllGatherRank(-1, shape, buffers).code(),
            absl::StatusCode::kInvalidArgument);
  // The rejected per-rank call stopped the Runtime (its peers could have launched).
  EXPECT_EQ((*runtime)->status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE((*runtime)->Reset(absl::Seconds(10)).ok());
  // An empty AllGather (no tokens anywhere) is legal with null buffers.
  EXPECT_TRUE((*runtime)->AllGatherRank(0, shape, buffers).ok());
  EXPECT_TRUE((*runtime)->Synchronize(absl::Seconds(10)).ok());
}

}  // namespace
}  // namespace ltx
