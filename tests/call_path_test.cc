// The choice of an AllGather call's path: explicit protocols, the automatic size thresholds,
// graph capture and the copy-engine transport.
#include "ltx/call_path.h"

#include <cstdint>

#include "gtest/gtest.h"
#include "kernels/one_trip_layout.h"

namespace ltx {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(CallPathTest, AutoPicksByTheLargestShard) {
  RuntimeOptions options;
  options.one_trip_max_bytes = 256 * 1024;
  options.copy_engine_min_bytes = 16 * kMiB;
  auto path = [&](int64_t bytes) {
    return ChooseCallPath(Transport::kPeerStores, options, 4, Protocol::kAuto, bytes,
                          /*capturing=*/false);
  };
  EXPECT_EQ(path(0), CallPath::kOneTrip);
  EXPECT_EQ(path(256 * 1024), CallPath::kOneTrip);
  EXPECT_EQ(path(256 * 1024 + 1), CallPath::kDirect);
  EXPECT_EQ(path(16 * kMiB - 1), CallPath::kDirect);
  EXPECT_EQ(path(16 * kMiB), CallPath::kCopyEngine);
  EXPECT_EQ(path(int64_t{1} << 40), CallPath::kCopyEngine);
}

TEST(CallPathTest, OneTripLimitFollowsTheWorldSizeByDefault) {
  EXPECT_EQ(OneTripLimit(kOneTripLimitByWorldSize, 1), kOneTripMaxShardBytes);
  EXPECT_EQ(OneTripLimit(kOneTripLimitByWorldSize, 2), kOneTripMaxShardBytes);
  EXPECT_EQ(OneTripLimit(kOneTripLimitByWorldSize, 4), 256 * 1024);
  EXPECT_EQ(OneTripLimit(kOneTripLimitByWorldSize, 8), 768 * 1024 / 7);
  EXPECT_EQ(OneTripLimit(0, 4), 0);
  EXPECT_EQ(OneTripLimit(100000, 2), 100000);

  const RuntimeOptions options;  // The defaults.
  auto path = [&](int world, int64_t bytes) {
    return ChooseCallPath(Transport::kPeerStores, options, world, Protocol::kAuto, bytes,
                          /*capturing=*/false);
  };
  EXPECT_EQ(path(2, 512 * 1024), CallPath::kOneTrip);
  EXPECT_EQ(path(2, 512 * 1024 + 1), CallPath::kDirect);
  EXPECT_EQ(path(4, 256 * 1024), CallPath::kOneTrip);
  EXPECT_EQ(path(4, 256 * 1024 + 1), CallPath::kDirect);
}

TEST(CallPathTest, CapturedCallsStayOnKernels) {
  RuntimeOptions options;
  options.copy_engine_min_bytes = 16 * kMiB;
  EXPECT_EQ(ChooseCallPath(Transport::kPeerStores, options, 4, Protocol::kAuto, 64 * kMiB,
                           /*capturing=*/true),
            CallPath::kDirect);
  EXPECT_EQ(ChooseCallPath(Transport::kPeerStores, options, 4, Protocol::kAuto, 1024,
                           /*capturing=*/true),
            CallPath::kOneTrip);
}

TEST(CallPathTest, ZeroThresholdsTurnPathsOff) {
  RuntimeOptions options;
  options.one_trip_max_bytes = 0;
  options.copy_engine_min_bytes = 0;
  for (int64_t bytes : {int64_t{1}, int64_t{4096}, 64 * kMiB}) {
    EXPECT_EQ(ChooseCallPath(Transport::kPeerStores, options, 4, Protocol::kAuto, bytes, false),
              CallPath::kDirect)
        << bytes;
  }
  // An empty op is one-trip even then: nothing exceeds a limit of 0.
  EXPECT_EQ(ChooseCallPath(Transport::kPeerStores, options, 4, Protocol::kAuto, 0, false),
            CallPath::kOneTrip);
}

TEST(CallPathTest, ExplicitProtocolsAreObeyed) {
  const RuntimeOptions options;
  for (bool capturing : {false, true}) {
    auto path = [&](Protocol protocol, int64_t bytes) {
      return ChooseCallPath(Transport::kPeerStores, options, 4, protocol, bytes, capturing);
    };
    EXPECT_EQ(path(Protocol::kDirect, 1), CallPath::kDirect);
    EXPECT_EQ(path(Protocol::kOneTrip, 64 * kMiB), CallPath::kOneTrip);
    EXPECT_EQ(path(Protocol::kCopyEngine, 1), CallPath::kCopyEngine);
  }
}

TEST(CallPathTest, CopyEngineTransportTakesEveryCall) {
  const RuntimeOptions options;
  for (Protocol protocol :
       {Protocol::kAuto, Protocol::kDirect, Protocol::kOneTrip, Protocol::kCopyEngine}) {
    EXPECT_EQ(ChooseCallPath(Transport::kCopyEngine, options, 4, protocol, 1024, false),
              CallPath::kCopyEngine);
  }
}

}  // namespace
}  // namespace ltx
