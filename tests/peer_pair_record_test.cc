// Tests of ltx/cuda/peer_pair_record.h with made-up context ids: each pair of contexts is enabled
// once, a pair is enabled again once either GPU has a new context (after a cudaDeviceReset),
// and failures are returned and not recorded. Needs no GPU.
#include "ltx/cuda/peer_pair_record.h"

#include <map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ltx {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

// Made-up GPUs: each has a context id, which a "reset" changes, and every enable is logged.
class FakeGpus {
 public:
  explicit FakeGpus(int count) {
    for (int device = 0; device < count; ++device) context_[device] = 100 + device;
  }
  void Reset(int device) { context_[device] += 1000; }

  absl::Status Enable(PeerPairRecord& record, int device, const std::vector<int>& peers) {
    return record.EnableMissing(
        device, peers,
        [this](int d) -> absl::StatusOr<uint64_t> {
          if (d == failing_context_) return absl::InternalError("no context id");
          return context_.at(d);
        },
        [this](int d, int peer) {
          if (std::make_pair(d, peer) == failing_pair_) return absl::InternalError("refused");
          enabled_.emplace_back(d, peer);
          return absl::OkStatus();
        });
  }

  std::vector<std::pair<int, int>> TakeEnabled() { return std::exchange(enabled_, {}); }
  void FailContextOf(int device) { failing_context_ = device; }
  void FailPair(int device, int peer) { failing_pair_ = {device, peer}; }

 private:
  std::map<int, uint64_t> context_;
  std::vector<std::pair<int, int>> enabled_;
  int failing_context_ = -1;
  std::pair<int, int> failing_pair_ = {-1, -1};
};

TEST(PeerPairRecordTest, EnablesEachPairOnceAndSkipsTheDeviceItself) {
  PeerPairRecord record;
  FakeGpus gpus(3);
  ASSERT_TRUE(gpus.Enable(record, 0, {0, 1, 2}).ok());
  EXPECT_THAT(gpus.TakeEnabled(), ElementsAre(Pair(0, 1), Pair(0, 2)));
  ASSERT_TRUE(gpus.Enable(record, 1, {0, 1, 2}).ok());
  EXPECT_THAT(gpus.TakeEnabled(), ElementsAre(Pair(1, 0), Pair(1, 2)));
  // A second Runtime over the same GPUs asks for nothing.
  ASSERT_TRUE(gpus.Enable(record, 0, {0, 1, 2}).ok());
  ASSERT_TRUE(gpus.Enable(record, 1, {1, 0}).ok());
  EXPECT_THAT(gpus.TakeEnabled(), ElementsAre());
}

TEST(PeerPairRecordTest, EnablesAgainEveryPairOfAResetGpu) {
  PeerPairRecord record;
  FakeGpus gpus(3);
  for (int device = 0; device < 3; ++device)
    ASSERT_TRUE(gpus.Enable(record, device, {0, 1, 2}).ok());
  gpus.TakeEnabled();
  gpus.Reset(1);
  for (int device = 0; device < 3; ++device)
    ASSERT_TRUE(gpus.Enable(record, device, {0, 1, 2}).ok());
  // Both directions of every pair with GPU 1, and nothing else.
  EXPECT_THAT(gpus.TakeEnabled(), ElementsAre(Pair(0, 1), Pair(1, 0), Pair(1, 2), Pair(2, 1)));
  for (int device = 0; device < 3; ++device)
    ASSERT_TRUE(gpus.Enable(record, device, {0, 1, 2}).ok());
  EXPECT_THAT(gpus.TakeEnabled(), ElementsAre());
}

TEST(PeerPairRecordTest, AFailedPairIsReturnedAndTriedAgain) {
  PeerPairRecord record;
  FakeGpus gpus(3);
  gpus.FailPair(0, 1);
  const absl::Status status = gpus.Enable(record, 0, {1, 2});
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(status.message(), "refused");
  // It stopped at the failure: 0 -> 2 was not asked.
  EXPECT_THAT(gpus.TakeEnabled(), ElementsAre());
  gpus.FailPair(-1, -1);
  ASSERT_TRUE(gpus.Enable(record, 0, {1, 2}).ok());
  EXPECT_THAT(gpus.TakeEnabled(), ElementsAre(Pair(0, 1), Pair(0, 2)));
}

TEST(PeerPairRecordTest, AContextIdErrorIsReturnedAndNothingIsEnabled) {
  PeerPairRecord record;
  FakeGpus gpus(2);
  gpus.FailContextOf(1);
  EXPECT_EQ(gpus.Enable(record, 0, {1}).code(), absl::StatusCode::kInternal);
  EXPECT_EQ(gpus.Enable(record, 1, {0}).code(), absl::StatusCode::kInternal);
  EXPECT_THAT(gpus.TakeEnabled(), ElementsAre());
  // A world of one asks for no context id but its own.
  gpus.FailContextOf(-1);
  ASSERT_TRUE(gpus.Enable(record, 0, {0}).ok());
  EXPECT_THAT(gpus.TakeEnabled(), ElementsAre());
}

}  // namespace
}  // namespace ltx
