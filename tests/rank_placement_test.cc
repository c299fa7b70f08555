// Tests of ltx/runtime/rank_placement.h: resolving RuntimeOptions::devices into ranks (GPUs named
// more than once included), the co-located ranks and peers of each, and the block budget that lets
// the kernels of every rank of one GPU be resident at once and by default leaves half its SMs free
// of the others' kernels.
#include "ltx/runtime/rank_placement.h"

#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ltx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

RankPlacement Resolved(std::vector<int> devices, int visible) {
  absl::StatusOr<RankPlacement> placement = RankPlacement::Resolve(devices, visible);
  EXPECT_TRUE(placement.ok()) << placement.status();
  return *placement;
}

TEST(RankPlacementTest, EmptyMeansOneRankPerVisibleGpu) {
  const RankPlacement placement = Resolved({}, 3);
  EXPECT_THAT(placement.devices(), ElementsAre(0, 1, 2));
  EXPECT_FALSE(placement.ranks_share_gpus());
  EXPECT_EQ(placement.RanksOnGpuOf(1), 1);
  EXPECT_THAT(placement.CoLocatedRanks(1), IsEmpty());
  EXPECT_THAT(placement.PeersOf(1), ElementsAre(0, 2));
}

TEST(RankPlacementTest, EightRanksOnOneGpu) {
  const RankPlacement placement = Resolved({0, 0, 0, 0, 0, 0, 0, 0}, 1);
  EXPECT_EQ(placement.world_size(), 8);
  EXPECT_TRUE(placement.ranks_share_gpus());
  EXPECT_THAT(placement.distinct_devices(), ElementsAre(0));
  EXPECT_THAT(placement.PeersOf(0), IsEmpty());
  EXPECT_EQ(placement.RanksOnGpuOf(5), 8);
  EXPECT_THAT(placement.CoLocatedRanks(5), ElementsAre(0, 1, 2, 3, 4, 6, 7));
  EXPECT_EQ(placement.Describe(), "0,0,0,0,0,0,0,0");
}

TEST(RankPlacementTest, RanksInterleavedOverTwoGpus) {
  const RankPlacement placement = Resolved({1, 0, 1, 0}, 2);
  EXPECT_THAT(placement.distinct_devices(), ElementsAre(1, 0));
  EXPECT_THAT(placement.CoLocatedRanks(0), ElementsAre(2));
  EXPECT_THAT(placement.CoLocatedRanks(3), ElementsAre(1));
  EXPECT_EQ(placement.RanksOnGpuOf(2), 2);
  // Each GPU pair once, whatever the number of ranks on either side.
  EXPECT_THAT(placement.PeersOf(1), ElementsAre(0));
  EXPECT_THAT(placement.PeersOf(0), ElementsAre(1));
}

TEST(RankPlacementTest, UnevenSharing) {
  const RankPlacement placement = Resolved({0, 0, 0, 1}, 2);
  EXPECT_EQ(placement.RanksOnGpuOf(0), 3);
  EXPECT_EQ(placement.RanksOnGpuOf(3), 1);
  EXPECT_THAT(placement.CoLocatedRanks(3), IsEmpty());
  EXPECT_THAT(placement.CoLocatedRanks(1), ElementsAre(0, 2));
}

TEST(RankPlacementTest, DistinctDevicesAndSharing) {
  EXPECT_THAT(DistinctDevices(std::vector<int>{1, 0, 1, 2}), ElementsAre(1, 0, 2));
  EXPECT_TRUE(RanksShareGpus(std::vector<int>{0, 1, 0}));
  EXPECT_FALSE(RanksShareGpus(std::vector<int>{2, 0, 1}));
}

TEST(RankPlacementTest, RefusesBadLayouts) {
  const absl::StatusOr<RankPlacement> nine = RankPlacement::Resolve({0, 0, 0, 0, 0, 0, 0, 0, 0}, 1);
  EXPECT_EQ(nine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(nine.status().message(), HasSubstr("9 ranks given"));
  const absl::StatusOr<RankPlacement> unknown = RankPlacement::Resolve({0, 2}, 2);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("devices[1] = 2: no such GPU (2 visible)"));
  const absl::StatusOr<RankPlacement> negative = RankPlacement::Resolve({-1}, 2);
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument);
  const absl::StatusOr<RankPlacement> none = RankPlacement::Resolve({}, 0);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RankPlacementTest, ChecksListedDevicesWithoutKnowingTheGpus) {
  EXPECT_TRUE(RankPlacement::CheckListed({}).ok());
  EXPECT_TRUE(RankPlacement::CheckListed({0, 0, 0, 0, 0, 0, 0, 0}).ok());
  EXPECT_TRUE(RankPlacement::CheckListed({99}).ok());  // Whether it exists is Resolve's to say.
  EXPECT_THAT(RankPlacement::CheckListed({0, 0, 0, 0, 0, 0, 0, 0, 0}).message(),
              HasSubstr("9 ranks given"));
  const absl::Status negative = RankPlacement::CheckListed({1, -3});
  EXPECT_EQ(negative.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(negative.message(), HasSubstr("devices[1] = -3: a GPU ordinal is >= 0"));
}

TEST(RankBlockBudgetTest, ARankAloneKeepsMaxBlocksOrOnePerSm) {
  const GpuBlockCapacity h200{132, 4};
  EXPECT_EQ(RankBlockBudget(0, h200, 1), 132);
  EXPECT_EQ(RankBlockBudget(16, h200, 1), 16);
  // More than one block per SM stays allowed for a rank alone.
  EXPECT_EQ(RankBlockBudget(1000, h200, 1), 1000);
}

TEST(RankBlockBudgetTest, SharedGpusSplitTheSmsAndNeverExceedWhatIsResident) {
  const GpuBlockCapacity h200{132, 4};
  // By default the other k - 1 ranks' kernels hold at most half the SMs: 132 / (2 (k - 1)).
  EXPECT_EQ(RankBlockBudget(0, h200, 2), 66);
  EXPECT_EQ(RankBlockBudget(0, h200, 3), 33);
  EXPECT_EQ(RankBlockBudget(0, h200, 4), 22);
  EXPECT_EQ(RankBlockBudget(0, h200, 8), 9);
  EXPECT_EQ(RankBlockBudget(8, h200, 8), 8);
  EXPECT_EQ(RankBlockBudget(16, h200, 8), 16);
  // An explicit budget is capped at the rank's share of the resident blocks: 8 x 66 = 528.
  EXPECT_EQ(RankBlockBudget(132, h200, 8), 66);
  // Every combination: the ranks of one GPU fit at once.
  for (int ranks = 2; ranks <= 8; ++ranks) {
    for (int max_blocks : {0, 1, 7, 64, 132, 10000}) {
      for (int resident : {1, 2, 3, 4}) {
        const GpuBlockCapacity gpu{132, resident};
        const int budget = RankBlockBudget(max_blocks, gpu, ranks);
        EXPECT_GE(budget, 1);
        EXPECT_LE(budget * ranks, gpu.sm_count * resident)
            << ranks << " ranks, max_blocks " << max_blocks << ", " << resident << " per SM";
        if (max_blocks == 0) {  // The default leaves half the SMs free of the others' blocks.
          EXPECT_LE(budget * (ranks - 1) * 2, gpu.sm_count) << ranks << " ranks";
        }
      }
    }
  }
}

TEST(RankBlockBudgetTest, AtLeastOneBlock) {
  EXPECT_EQ(RankBlockBudget(0, GpuBlockCapacity{2, 1}, 8), 1);
  // Fewer SMs than 2 (k - 1): one block each, which no longer leaves half the SMs free.
  EXPECT_EQ(RankBlockBudget(0, GpuBlockCapacity{8, 1}, 8), 1);
}

TEST(HardwareQueuesTest, CudaDefaultAndRange) {
  EXPECT_EQ(HardwareQueuesOf(nullptr), 8);
  EXPECT_EQ(HardwareQueuesOf(""), 8);
  EXPECT_EQ(HardwareQueuesOf("many"), 8);
  EXPECT_EQ(HardwareQueuesOf("32"), 32);
  EXPECT_EQ(HardwareQueuesOf("12"), 12);
  EXPECT_EQ(HardwareQueuesOf("0"), 1);
  EXPECT_EQ(HardwareQueuesOf("64"), 32);
}

RankPlacement PlacementOf(std::vector<int> devices) {
  absl::StatusOr<RankPlacement> placement = RankPlacement::Resolve(devices, 8);
  EXPECT_TRUE(placement.ok()) << placement.status();
  return *placement;
}

TEST(CopyEnginesFitQueuesTest, RanksOnGpusOfTheirOwnAlwaysFit) {
  EXPECT_TRUE(CopyEnginesFitQueues(PlacementOf({0, 1, 2, 3, 4, 5, 6, 7}), 1).ok());
  EXPECT_TRUE(CopyEnginesFitQueues(PlacementOf({3}), 1).ok());
}

TEST(CopyEnginesFitQueuesTest, SharedGpusFitWhileTheirStreamsHaveQueues) {
  // Ranks on the GPU x world size: its ranks' own streams and copy streams.
  EXPECT_TRUE(CopyEnginesFitQueues(PlacementOf({0, 0}), 8).ok());
  EXPECT_TRUE(CopyEnginesFitQueues(PlacementOf({0, 0, 0, 0}), 32).ok());
  EXPECT_TRUE(CopyEnginesFitQueues(PlacementOf({0, 1, 0, 1, 0, 1, 0, 1}), 32).ok());
  EXPECT_FALSE(CopyEnginesFitQueues(PlacementOf({0, 0, 0, 0}), 8).ok());
  const absl::Status eight = CopyEnginesFitQueues(PlacementOf({0, 0, 0, 0, 0, 0, 0, 0}), 32);
  EXPECT_EQ(eight.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(eight.message().find("8 ranks on GPU 0"), absl::string_view::npos) << eight;
  EXPECT_NE(eight.message().find("64 on that GPU"), absl::string_view::npos) << eight;
  EXPECT_NE(eight.message().find("CUDA_DEVICE_MAX_CONNECTIONS"), absl::string_view::npos);
  // The busiest GPU decides.
  const absl::Status uneven = CopyEnginesFitQueues(PlacementOf({0, 1, 1, 1, 1, 1}), 24);
  EXPECT_NE(uneven.message().find("5 ranks on GPU 1"), absl::string_view::npos) << uneven;
}

}  // namespace
}  // namespace ltx
