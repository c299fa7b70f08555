// GPU tests of the AllReduce and the ReduceScatter (the pull protocol), in both call styles:
// every dtype and reduction, odd counts, any block count, misaligned buffers, in place, uneven
// ReduceScatters with zero counts, null buffers where nothing is read, per-rank calls captured
// into CUDA graphs and replayed with new data, ranks that disagree, and a rank that never
// joins. Random data (never zero), outputs poisoned before every call, every rank's output
// compared bit for bit with the host reference (ranks combined in order, fp32 accumulation).
// The ranks come from the layout switch (tools/testing/test_ranks.h).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ltx/runtime.h"
#include "tools/testing/gpu_fixture.h"
#include "tools/testing/rank_threads.h"
#include "tools/testing/reduce_harness.h"
#include "tools/testing/test_ranks.h"
#include "tools/testing/token_counts.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;

constexpr DataType kReducedTypes[] = {DataType::kBFloat16, DataType::kFloat16,
                                      DataType::kFloat32};
constexpr Reduction kReductions[] = {Reduction::kSum, Reduction::kMax, Reduction::kMin};

// A Runtime on the peer-store transport over `devices` (with `options`) and a harness over the
// same GPUs; null members where the test has already failed.
struct ReduceFixture {
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<ReduceHarness> harness;
};

ReduceFixture MakeReduceFixture(const std::vector<int>& devices, RuntimeOptions options = {}) {
  ReduceFixture f;
  options.devices = devices;
  absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(OnPeerStores(options));
  EXPECT_TRUE(runtime.ok()) << runtime.status();
  absl::StatusOr<std::unique_ptr<ReduceHarness>> harness =
      ReduceHarness::Create(devices, int64_t{8} << 20, /*seed=*/26);
  EXPECT_TRUE(harness.ok()) << harness.status();
  if (!runtime.ok() || !harness.ok()) return f;
  f.runtime = std::move(*runtime);
  f.harness = std::move(*harness);
  return f;
}

ReduceCase AllReduceCase(DataType dtype, Reduction reduction, int64_t count) {
  ReduceCase c;
  c.collective = Collective::kAllReduce;
  c.dtype = dtype;
  c.reduction = reduction;
  c.count = count;
  return c;
}

ReduceCase ReduceScatterCase(DataType dtype, Reduction reduction, int64_t batch, int64_t hidden,
                             std::vector<int64_t> counts) {
  ReduceCase c;
  c.collective = Collective::kReduceScatter;
  c.dtype = dtype;
  c.reduction = reduction;
  c.batch = batch;
  c.hidden = hidden;
  c.token_counts = std::move(counts);
  return c;
}

// Each test on a fresh fixture of two ranks or more.
class AllReduceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LTX_REQUIRE_RANKS(2);
    f_ = MakeReduceFixture(TestRankDevices(2));
    ASSERT_NE(f_.runtime, nullptr);
  }
  int world() const { return f_.runtime->world_size(); }

  ReduceFixture f_;
};

// The matrix runs in both call styles.
class ReduceStyleTest : public AllReduceTest, public ::testing::WithParamInterface<CallStyle> {
 protected:
  // Runs `c` in this test's call style and expects every rank's output bitwise right.
  void Expect(const ReduceCase& c, const CallOptions& call = {}) {
    const absl::Status status = RunAndVerify(*f_.runtime, *f_.harness, c, GetParam(), call);
    EXPECT_TRUE(status.ok()) << c.ToString() << ": " << status;
  }
};

TEST_P(ReduceStyleTest, EveryDtypeAndReduction) {
  for (DataType dtype : kReducedTypes) {
    for (Reduction reduction : kReductions) {
      Expect(AllReduceCase(dtype, reduction, 1001));
      Expect(AllReduceCase(dtype, reduction, 65536 + 3));
      Expect(ReduceScatterCase(dtype, reduction, 2, 33, UnevenCounts(world(), 5)));
    }
  }
}

TEST_P(ReduceStyleTest, OddCountsAndAnyBlockCount) {
  for (int64_t count : {0, 1, 2, 7, 8, 9, 15, 17, 4095, 100003}) {
    for (int blocks : {0, 1, 3, 8, 133}) {
      CallOptions call;
      call.blocks = blocks;
      Expect(AllReduceCase(DataType::kBFloat16, Reduction::kSum, count), call);
    }
  }
}

TEST_P(ReduceStyleTest, MisalignedBuffersTakeTheScalarPath) {
  for (DataType dtype : kReducedTypes) {
    const int size = ElementSize(dtype);
    for (int in : {0, 1, 3}) {
      for (int out : {0, 1, 2, 5}) {
        ReduceCase all = AllReduceCase(dtype, Reduction::kSum, 3000);
        all.input_misalignment = in * size;
        all.output_misalignment = out * size;
        Expect(all);
        ReduceCase scatter =
            ReduceScatterCase(dtype, Reduction::kMax, 3, 17, UnevenCounts(world(), 3));
        scatter.input_misalignment = in * size;
        scatter.output_misalignment = out * size;
        Expect(scatter);
      }
    }
  }
}

TEST_P(ReduceStyleTest, InPlaceAllReduceGivesTheSameBits) {
  for (DataType dtype : kReducedTypes) {
    for (int64_t count : {1, 5, 64, 1001, 262147}) {
      for (int misalignment : {0, 4}) {
        ReduceCase c = AllReduceCase(dtype, Reduction::kSum, count);
        c.in_place = true;
        c.output_misalignment = misalignment;
        Expect(c);
      }
    }
  }
}

TEST_P(ReduceStyleTest, UnevenReduceScatterWithZeroCounts) {
  for (const std::vector<int64_t>& counts : ZeroTokenPatterns(world(), 9, 33)) {
    for (int64_t hidden : {1, 8, 96, 4096}) {
      Expect(ReduceScatterCase(DataType::kBFloat16, Reduction::kSum, 3, hidden, counts));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(CallStyles, ReduceStyleTest,
                         ::testing::Values(CallStyle::kCoordinated, CallStyle::kPerRankThreads),
                         [](const ::testing::TestParamInfo<CallStyle>& info) {
                           return std::string(info.param == CallStyle::kCoordinated
                                                  ? "Coordinated"
                                                  : "PerRankThreads");
                         });

// Ranks with nothing to read or write may pass null buffers (an empty tensor's address): the op
// completes on every rank, as the ops around it do.
TEST_F(AllReduceTest, ZeroCountsWithNullBuffersComplete) {
  const ReduceCase c = AllReduceCase(DataType::kBFloat16, Reduction::kSum, 4096);
  ASSERT_TRUE(f_.harness->Prepare(c).ok());
  std::vector<RankBuffers> null_buffers = f_.harness->AllBuffers();
  for (RankBuffers& buffers : null_buffers) buffers.input = buffers.output = nullptr;
  AllReduceShape empty = c.AllReduceShapeOf();
  empty.count = 0;
  absl::Status status = f_.runtime->AllReduceAndWait(empty, null_buffers, kTestWait);
  EXPECT_TRUE(status.ok()) << status;
  // The shape refers to the case's counts.
  const ReduceCase nothing = ReduceScatterCase(DataType::kFloat32, Reduction::kMax, 2, 64,
                                               std::vector<int64_t>(world(), 0));
  status = f_.runtime->ReduceScatterAndWait(nothing.ReduceScatterShapeOf(), null_buffers,
                                            kTestWait);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_TRUE(f_.runtime->status().ok()) << f_.runtime->status();
  EXPECT_TRUE(RunAndVerify(*f_.runtime, *f_.harness, c, CallStyle::kCoordinated).ok());
}

// The same inputs give the same bits on every run, whatever the block count: the outputs of
// every run are compared with the one reference.
TEST_F(AllReduceTest, EveryRunAndBlockCountGivesTheSameBits) {
  ASSERT_TRUE(f_.harness->Prepare(AllReduceCase(DataType::kFloat32, Reduction::kSum, 50001)).ok());
  for (int blocks : {1, 2, 7, 64, 0, 1}) {
    CallOptions call;
    call.blocks = blocks;
    ASSERT_TRUE(f_.harness->Launch(*f_.runtime, CallStyle::kCoordinated, call).ok());
    ASSERT_TRUE(f_.runtime->Synchronize(kTestWait).ok());
    const absl::Status status = f_.harness->Verify();
    EXPECT_TRUE(status.ok()) << "blocks=" << blocks << ": " << status;
  }
}

TEST_F(AllReduceTest, CapturedRankCallsReplayWithNewData) {
  for (const ReduceCase& c :
       {AllReduceCase(DataType::kBFloat16, Reduction::kSum, 12345),
        ReduceScatterCase(DataType::kFloat16, Reduction::kMin, 2, 64, UnevenCounts(world(), 4))}) {
    ASSERT_TRUE(f_.harness->Prepare(c).ok());
    CapturedRankCalls graphs;
    const std::vector<RankBuffers> buffers = f_.harness->AllBuffers();
    ASSERT_TRUE(graphs
                    .Capture(f_.runtime->devices(), buffers,
                             [&](int rank) { return f_.harness->RankCall(*f_.runtime, rank, {}); })
                    .ok());
    for (int replay = 0; replay < 5; ++replay) {
      ASSERT_TRUE(f_.harness->RefreshInputs().ok());
      ASSERT_TRUE(graphs.Replay(f_.runtime->devices(), buffers).ok());
      const absl::Status status = f_.harness->Verify();
      EXPECT_TRUE(status.ok()) << c.ToString() << " replay " << replay << ": " << status;
    }
    // Eager calls and replays share the op numbers.
    EXPECT_TRUE(RunAndVerify(*f_.runtime, *f_.harness, c, CallStyle::kCoordinated).ok());
  }
}

TEST_F(AllReduceTest, RanksThatDisagreeOnTheReductionFailAndResetRecovers) {
  const ReduceCase sum = AllReduceCase(DataType::kBFloat16, Reduction::kSum, 4096);
  ASSERT_TRUE(f_.harness->Prepare(sum).ok());
  const std::vector<RankBuffers> buffers = f_.harness->AllBuffers();
  const absl::Status launched = RunOnRankThreads(f_.runtime->world_size(), [&](int rank) {
    AllReduceShape shape = sum.AllReduceShapeOf();
    if (rank == 0) shape.reduction = Reduction::kMax;
    return f_.runtime->AllReduceRank(rank, shape, buffers[rank]);
  });
  ASSERT_TRUE(launched.ok()) << launched;
  const absl::Status status = f_.runtime->Synchronize(kTestWait);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("all_reduce #1"));
  ASSERT_TRUE(f_.runtime->Reset(kTestWait).ok());
  EXPECT_TRUE(RunAndVerify(*f_.runtime, *f_.harness, sum, CallStyle::kPerRankThreads).ok());
}

TEST(AllReduceFaultTest, RankThatNeverJoinsTimesOutAndResetRecovers) {
  LTX_REQUIRE_RANKS(2);
  RuntimeOptions options;
  options.timeout = absl::Seconds(1);
  ReduceFixture f = MakeReduceFixture(TestRankDevices(2), options);
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  for (const ReduceCase& c :
       {AllReduceCase(DataType::kFloat32, Reduction::kSum, 10000),
        ReduceScatterCase(DataType::kBFloat16, Reduction::kSum, 1, 256, UnevenCounts(world, 2))}) {
    ASSERT_TRUE(RunAndVerify(*f.runtime, *f.harness, c, CallStyle::kPerRankThreads).ok());
    ASSERT_TRUE(f.harness->Prepare(c).ok());
    const absl::Time start = absl::Now();
    ASSERT_TRUE(
        f.harness->Launch(*f.runtime, CallStyle::kPerRankThreads, {}, RankIndices(world - 1))
            .ok());
    const absl::Status status = f.runtime->Synchronize(absl::Seconds(30));
    EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
    EXPECT_THAT(std::string(status.message()),
                HasSubstr(absl::StrCat("at entry for rank ", world - 1)));
    EXPECT_LT(absl::Now() - start, absl::Seconds(3));
    const absl::Status refused = f.harness->Launch(*f.runtime, CallStyle::kCoordinated);
    EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
    ASSERT_TRUE(f.runtime->Reset(kTestWait).ok());
    for (CallStyle style : {CallStyle::kCoordinated, CallStyle::kPerRankThreads}) {
      const absl::Status recovered = RunAndVerify(*f.runtime, *f.harness, c, style);
      EXPECT_TRUE(recovered.ok()) << c.ToString() << ": " << recovered;
    }
  }
}

// What the Runtime refuses before anything runs, with a clear message.
TEST_F(AllReduceTest, BadArgumentsAreRefusedAndTheRuntimeStaysUsable) {
  const ReduceCase c = AllReduceCase(DataType::kFloat16, Reduction::kSum, 1000);
  ASSERT_TRUE(f_.harness->Prepare(c).ok());
  std::vector<RankBuffers> buffers = f_.harness->AllBuffers();
  AllReduceShape shape = c.AllReduceShapeOf();
  shape.dtype = DataType::kInt32;
  absl::Status status = f_.runtime->AllReduce(shape, buffers).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("cannot be reduced"));
  CallOptions one_trip;
  one_trip.protocol = Protocol::kOneTrip;
  status = f_.runtime->AllReduce(c.AllReduceShapeOf(), buffers, one_trip).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("kernels only"));
  std::vector<RankBuffers> misaligned = buffers;
  misaligned[0].output = static_cast<uint8_t*>(misaligned[0].output) + 1;
  status = f_.runtime->AllReduce(c.AllReduceShapeOf(), misaligned).status();
  EXPECT_THAT(std::string(status.message()), HasSubstr("not aligned"));
  EXPECT_TRUE(f_.runtime->status().ok());
  EXPECT_TRUE(RunAndVerify(*f_.runtime, *f_.harness, c, CallStyle::kCoordinated).ok());
}

}  // namespace
}  // namespace ltx
