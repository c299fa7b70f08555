// GPU tests of the AllReduce and the ReduceScatter (the pull protocol), in both call styles:
// every dtype and reduction, odd counts, any block count, misaligned buffers, in place, uneven
// ReduceScatters with zero counts, null buffers where nothing is read, per-rank calls captured
// into CUDA graphs and replayed with new data, ranks that disagree, and a rank that never
// joins. Random data (never zero), outputs poisoned before every call, every rank's output
// compared bit for bit with the host reference (ranks combined in order, fp32 accumulation).
// Every AllReduce case of the matrix runs on both paths, the one-shot and the two-shot, on the
// same inputs, and their outputs are compared bit for bit with each other too. The ranks come
// from the layout switch (tools/testing/test_ranks.h).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ltx/collectives/reduce_layout.h"
#include "ltx/runtime.h"
#include "tools/testing/gpu_fixture.h"
#include "tools/testing/rank_threads.h"
#include "tools/testing/reduce_harness.h"
#include "tools/testing/reduce_reference.h"
#include "tools/testing/test_ranks.h"
#include "tools/testing/token_counts.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;

constexpr DataType kReducedTypes[] = {DataType::kBFloat16, DataType::kFloat16,
                                      DataType::kFloat32};
constexpr Reduction kReductions[] = {Reduction::kSum, Reduction::kMax, Reduction::kMin};

// The CallOptions of the one-shot and of the two-shot AllReduce (other collectives ignore it).
CallOptions OnPath(CallOptions call, bool two_shot) {
  call.two_shot_min_bytes = two_shot ? 0 : kNeverTwoShot;
  return call;
}

// A Runtime on the peer-store transport over `devices` (with `options`) and two harnesses over
// the same GPUs with the same seed, so that the same cases prepared on both get the same inputs
// (`twin` runs the two-shot where `harness` runs the one-shot); null members where the test has
// already failed.
struct ReduceFixture {
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<ReduceHarness> harness;
  std::unique_ptr<ReduceHarness> twin;
};

ReduceFixture MakeReduceFixture(const std::vector<int>& devices, RuntimeOptions options = {}) {
  ReduceFixture f;
  options.devices = devices;
  absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(OnPeerStores(options));
  EXPECT_TRUE(runtime.ok()) << runtime.status();
  absl::StatusOr<std::unique_ptr<ReduceHarness>> harness =
      ReduceHarness::Create(devices, int64_t{8} << 20, /*seed=*/26);
  EXPECT_TRUE(harness.ok()) << harness.status();
  absl::StatusOr<std::unique_ptr<ReduceHarness>> twin =
      ReduceHarness::Create(devices, int64_t{8} << 20, /*seed=*/26);
  EXPECT_TRUE(twin.ok()) << twin.status();
  if (!runtime.ok() || !harness.ok() || !twin.ok()) return f;
  f.runtime = std::move(*runtime);
  f.harness = std::move(*harness);
  f.twin = std::move(*twin);
  return f;
}

// The bytes of rank `rank`'s output of `c` on `world` ranks.
int64_t OutputBytesOf(const ReduceCase& c, int world, int rank) {
  const absl::StatusOr<ReduceLayout> layout =
      c.collective == Collective::kAllReduce
          ? ComputeAllReduceLayout(c.AllReduceShapeOf(), world)
          : ComputeReduceScatterLayout(c.ReduceScatterShapeOf(), world);
  return layout.ok() ? layout->OutputBytes(rank) : 0;
}

// DataLoss unless every rank's output of `c` is bitwise the same in `a` and `b` (after their
// calls have completed).
absl::Status ExpectSameOutputs(const ReduceCase& c, const ReduceHarness& a,
                               const ReduceHarness& b) {
  for (int rank = 0; rank < a.world_size(); ++rank) {
    const int64_t bytes = OutputBytesOf(c, a.world_size(), rank);
    std::vector<uint8_t> from_a(bytes);
    std::vector<uint8_t> from_b(bytes);
    if (cudaMemcpy(from_a.data(), a.Buffers(rank).output, bytes, cudaMemcpyDefault) !=
            cudaSuccess ||
        cudaMemcpy(from_b.data(), b.Buffers(rank).output, bytes, cudaMemcpyDefault) !=
            cudaSuccess) {
      return absl::InternalError(absl::StrFormat("rank %d: reading the outputs back", rank));
    }
    if (from_a != from_b) {
      return absl::DataLossError(absl::StrFormat(
          "%s: rank %d's one-shot and two-shot outputs differ", c.ToString(), rank));
    }
  }
  return absl::OkStatus();
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

// The matrix runs in both call styles, and on both AllReduce paths.
class ReduceStyleTest : public AllReduceTest, public ::testing::WithParamInterface<CallStyle> {
 protected:
  // Runs `c` in this test's call style on the one-shot (the harness) and on the two-shot (the
  // twin, same inputs) and expects every rank's output bitwise right on both, and both alike.
  void Expect(const ReduceCase& c, const CallOptions& call = {}) {
    const absl::Status one_shot =
        RunAndVerify(*f_.runtime, *f_.harness, c, GetParam(), OnPath(call, false));
    EXPECT_TRUE(one_shot.ok()) << c.ToString() << " one-shot: " << one_shot;
    const absl::Status two_shot =
        RunAndVerify(*f_.runtime, *f_.twin, c, GetParam(), OnPath(call, true));
    EXPECT_TRUE(two_shot.ok()) << c.ToString() << " two-shot: " << two_shot;
    const absl::Status same = ExpectSameOutputs(c, *f_.harness, *f_.twin);
    EXPECT_TRUE(same.ok()) << same;
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

// In place runs two-shot on either setting of the threshold.
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

// The default threshold (two_shot_min_bytes): AllReduces on both sides of it, right bits.
TEST_P(ReduceStyleTest, DefaultThresholdPicksEitherPathWithTheSameBits) {
  const int64_t threshold = RuntimeOptions().two_shot_min_bytes;
  for (DataType dtype : kReducedTypes) {
    const int64_t size = ElementSize(dtype);
    for (int64_t count : {threshold / size - 1, threshold / size, threshold / size + 7}) {
      const ReduceCase c = AllReduceCase(dtype, Reduction::kSum, count);
      const absl::Status status = RunAndVerify(*f_.runtime, *f_.harness, c, GetParam());
      EXPECT_TRUE(status.ok()) << c.ToString() << ": " << status;
    }
  }
}

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

// Graphs of one-shot and two-shot AllReduces (the two-shot records both of its ops), in place
// and not, and of a ReduceScatter, replayed with new data between eager calls.
TEST_F(AllReduceTest, CapturedRankCallsReplayWithNewData) {
  ReduceCase in_place = AllReduceCase(DataType::kFloat32, Reduction::kMax, 70001);
  in_place.in_place = true;
  for (const ReduceCase& c :
       {AllReduceCase(DataType::kBFloat16, Reduction::kSum, 12345), in_place,
        ReduceScatterCase(DataType::kFloat16, Reduction::kMin, 2, 64, UnevenCounts(world(), 4))}) {
    for (bool two_shot : {false, true}) {
      const CallOptions call = OnPath({}, two_shot);
      const std::string what = absl::StrCat(c.ToString(), two_shot ? " two-shot" : " one-shot");
      ASSERT_TRUE(f_.harness->Prepare(c).ok());
      CapturedRankCalls graphs;
      const std::vector<RankBuffers> buffers = f_.harness->AllBuffers();
      ASSERT_TRUE(
          graphs
              .Capture(f_.runtime->devices(), buffers,
                       [&](int rank) { return f_.harness->RankCall(*f_.runtime, rank, call); })
              .ok());
      // In place, the output holds the result after a call: only the first replay's input is
      // fresh.
      for (int replay = 0; replay < (c.in_place ? 1 : 5); ++replay) {
        if (!c.in_place) {
          ASSERT_TRUE(f_.harness->RefreshInputs().ok());
        }
        ASSERT_TRUE(graphs.Replay(f_.runtime->devices(), buffers).ok());
        const absl::Status status = f_.harness->Verify();
        EXPECT_TRUE(status.ok()) << what << " replay " << replay << ": " << status;
      }
      // Eager calls and replays share the op numbers.
      EXPECT_TRUE(RunAndVerify(*f_.runtime, *f_.harness, c, CallStyle::kCoordinated, call).ok())
          << what;
    }
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
  EXPECT_TRUE(LaunchedOrRefusedForTheDisagreement(launched)) << launched;
  const absl::Status status = f_.runtime->Synchronize(kTestWait);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("all_reduce #1"));
  ASSERT_TRUE(f_.runtime->Reset(kTestWait).ok());
  EXPECT_TRUE(RunAndVerify(*f_.runtime, *f_.harness, sum, CallStyle::kPerRankThreads).ok());
}

// A rank that runs the one-shot against one that runs the two-shot (different thresholds)
// disagrees at entry.
TEST_F(AllReduceTest, RanksThatDisagreeOnThePathFailAndResetRecovers) {
  const ReduceCase sum = AllReduceCase(DataType::kBFloat16, Reduction::kSum, 4096);
  ASSERT_TRUE(f_.harness->Prepare(sum).ok());
  const absl::Status launched = RunOnRankThreads(f_.runtime->world_size(), [&](int rank) {
    return f_.harness->RankCall(*f_.runtime, rank, OnPath({}, /*two_shot=*/rank == 0));
  });
  EXPECT_TRUE(LaunchedOrRefusedForTheDisagreement(launched)) << launched;
  const absl::Status status = f_.runtime->Synchronize(kTestWait);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("all_reduce #1"));
  ASSERT_TRUE(f_.runtime->Reset(kTestWait).ok());
  for (bool two_shot : {false, true}) {
    EXPECT_TRUE(RunAndVerify(*f_.runtime, *f_.harness, sum, CallStyle::kPerRankThreads,
                             OnPath({}, two_shot))
                    .ok());
  }
}

// Two-shot AllReduces, each on buffers allocated just before it (cudaMalloc, 4 bytes into the
// allocation, as a framework's caching allocator hands out new, misaligned views), each
// verified: a rank's second kernel of the call must start on time whatever came before it
// (kernels/PROTOCOL.md, "Ranks that share a GPU": a stall seen only at such first calls).
TEST(AllReduceFreshBuffersTest, TwoShotCallsOnNewMisalignedBuffersEachTime) {
  LTX_REQUIRE_RANKS(2);
  const std::vector<int> devices = TestRankDevices(2);
  RuntimeOptions options = OnPeerStores();
  options.devices = devices;
  options.timeout = absl::Seconds(5);
  absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  const int world = static_cast<int>(devices.size());
  std::vector<cudaStream_t> streams(world);
  for (int rank = 0; rank < world; ++rank) {
    ASSERT_EQ(cudaSetDevice(devices[rank]), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&streams[rank], cudaStreamNonBlocking), cudaSuccess);
  }
  std::mt19937_64 random(31);
  CallOptions two_shot;
  two_shot.two_shot_min_bytes = 0;
  for (int call = 0; call < 24; ++call) {
    AllReduceShape shape;
    shape.dtype = call % 3 == 0 ? DataType::kBFloat16 : DataType::kFloat32;
    shape.count = 1 + static_cast<int64_t>(random() % 20000);
    const int64_t bytes = shape.count * ElementSize(shape.dtype);
    const absl::StatusOr<ReduceLayout> layout = ComputeAllReduceLayout(shape, world);
    ASSERT_TRUE(layout.ok()) << layout.status();
    std::vector<std::vector<uint8_t>> inputs;
    std::vector<void*> allocations;
    std::vector<RankBuffers> buffers(world);
    for (int rank = 0; rank < world; ++rank) {
      inputs.push_back(RandomReduceValues(shape.dtype, shape.count, random));
      ASSERT_EQ(cudaSetDevice(devices[rank]), cudaSuccess);
      void* input = nullptr;
      void* output = nullptr;
      ASSERT_EQ(cudaMalloc(&input, bytes + 4), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&output, bytes + 4), cudaSuccess);
      allocations.push_back(input);
      allocations.push_back(output);
      buffers[rank].input = static_cast<uint8_t*>(input) + 4;
      buffers[rank].output = static_cast<uint8_t*>(output) + 4;
      buffers[rank].stream = streams[rank];
      // Both on the rank's stream, so that they land before the op starts (cudaMemcpy from
      // pageable memory may return before its copy has reached the GPU, and cudaMemset runs on
      // the legacy stream, which the non-blocking streams do not wait for).
      ASSERT_EQ(cudaMemcpyAsync(const_cast<void*>(buffers[rank].input), inputs[rank].data(),
                                bytes, cudaMemcpyHostToDevice, streams[rank]),
                cudaSuccess);
      ASSERT_EQ(cudaMemsetAsync(buffers[rank].output, 0xA5, bytes, streams[rank]), cudaSuccess);
    }
    const absl::Status status = runtime.value()->AllReduceAndWait(shape, buffers, kTestWait,
                                                                  two_shot);
    ASSERT_TRUE(status.ok()) << "call " << call << ": " << status;
    for (int rank = 0; rank < world; ++rank) {
      std::vector<uint8_t> got(bytes);
      ASSERT_EQ(cudaSetDevice(devices[rank]), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(got.data(), buffers[rank].output, bytes, cudaMemcpyDeviceToHost),
                cudaSuccess);
      EXPECT_EQ(got, ReduceReference(*layout, rank, inputs)) << "call " << call << ", rank "
                                                             << rank;
    }
    for (void* allocation : allocations) cudaFree(allocation);
  }
  for (int rank = 0; rank < world; ++rank) {
    cudaSetDevice(devices[rank]);
    cudaStreamDestroy(streams[rank]);
  }
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
  // In place on rank 0 only, below the two-shot size: the ranks would take different paths.
  std::vector<RankBuffers> in_place_on_one = buffers;
  in_place_on_one[0].input = in_place_on_one[0].output;
  status = f_.runtime->AllReduce(c.AllReduceShapeOf(), in_place_on_one).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("different paths"));
  // Rank 1 writes into rank 0's input: memory of another GPU where the two ranks have GPUs of
  // their own, a buffer of another rank where they share one.
  std::vector<RankBuffers> crossed = buffers;
  crossed[1].output = const_cast<void*>(crossed[0].input);
  status = f_.runtime->AllReduce(c.AllReduceShapeOf(), crossed).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  if (f_.runtime->devices()[0] == f_.runtime->devices()[1]) {
    EXPECT_THAT(std::string(status.message()), HasSubstr("share bytes"));
  }
  EXPECT_TRUE(f_.runtime->status().ok());
  EXPECT_TRUE(RunAndVerify(*f_.runtime, *f_.harness, c, CallStyle::kCoordinated).ok());
}

}  // namespace
}  // namespace ltx
