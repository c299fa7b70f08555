// GPU tests of all-to-alls that move several tensors of one shape in one op
// (AllToAllShape::tensors: Q, K and V): one harness per tensor (its own random input, poisoned
// output and host reference), every tensor byte-exact on every rank after each call; both
// directions, uneven and zero token counts, uneven head splits with a rank without heads, odd
// head_dim and misaligned buffers, 2 to kMaxTensors tensors, coordinated and per-rank calls on
// the direct kernel (Protocol::kAuto and kDirect); the one-trip and copy-engine paths refused
// with Unimplemented, the Runtime usable after; ranks that pass different tensor counts get
// InvalidArgument, and Reset makes the Runtime usable. The ranks come from the layout switch
// (tools/testing/test_ranks.h), at least two of them.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "ltx/runtime.h"
#include "tools/testing/alltoall_harness.h"
#include "tools/testing/gpu_fixture.h"
#include "tools/testing/rank_threads.h"
#include "tools/testing/token_counts.h"

namespace ltx {
namespace {

constexpr int64_t kCapacity = int64_t{4} << 20;

// A Runtime on the peer-store transport and one all-to-all harness per tensor over the same
// GPUs; the calls run on the first harness's streams.
class TensorsFixture {
 public:
  // Null runtime after a (reported) failure.
  explicit TensorsFixture(const std::vector<int>& devices,
                          RuntimeOptions options = OnPeerStores()) {
    options.devices = devices;
    absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
    EXPECT_TRUE(runtime.ok()) << runtime.status();
    for (int tensor = 0; tensor < kMaxTensors; ++tensor) {
      auto harness = AllToAllHarness::Create(devices, kCapacity, kCapacity,
                                             /*seed=*/devices.size() * 7919 + tensor * 104729);
      EXPECT_TRUE(harness.ok()) << harness.status();
      if (!harness.ok()) return;
      harnesses_.push_back(std::move(*harness));
    }
    if (runtime.ok()) runtime_ = std::move(*runtime);
  }

  Runtime* runtime() const { return runtime_.get(); }
  int world_size() const { return runtime_->world_size(); }

  // Makes `c` current in every harness (fresh inputs, poisoned outputs).
  absl::Status Prepare(const AllToAllCase& c) {
    for (const auto& harness : harnesses_) LTX_RETURN_IF_ERROR(harness->Prepare(c));
    return absl::OkStatus();
  }

  // The shape of the current case with `tensors` tensors.
  AllToAllShape Shape(int tensors) const {
    AllToAllShape shape = harnesses_[0]->current_case().Shape();
    shape.tensors = tensors;
    return shape;
  }

  // Rank `rank`'s buffers for `tensors` tensors: harness j's buffers as tensor j's.
  RankBuffers Buffers(int rank, int tensors) const {
    RankBuffers buffers = harnesses_[0]->Buffers(rank);
    for (int tensor = 1; tensor < tensors; ++tensor) {
      const RankBuffers own = harnesses_[tensor]->Buffers(rank);
      buffers.more_inputs[tensor - 1] = own.input;
      buffers.more_outputs[tensor - 1] = own.output;
    }
    return buffers;
  }
  std::vector<RankBuffers> AllBuffers(int tensors) const {
    std::vector<RankBuffers> all;
    for (int rank = 0; rank < world_size(); ++rank) all.push_back(Buffers(rank, tensors));
    return all;
  }

  // Checks the first `tensors` tensors' outputs byte-exact on every rank, and the guards of the
  // other harnesses' buffers; the calls must have finished.
  absl::Status Verify(int tensors) {
    for (int tensor = 0; tensor < kMaxTensors; ++tensor) {
      const absl::Status status =
          tensor < tensors ? harnesses_[tensor]->Verify() : harnesses_[tensor]->VerifyGuards();
      if (!status.ok()) {
        return absl::Status(status.code(), absl::StrCat("tensor ", tensor, ": ", status.message()));
      }
    }
    return absl::OkStatus();
  }

  // Runs the current case with `tensors` tensors in `style` with `call`, waits and verifies.
  absl::Status Run(int tensors, CallStyle style, const CallOptions& call = {}) {
    const AllToAllShape shape = Shape(tensors);
    absl::Status status;
    if (style == CallStyle::kCoordinated) {
      status = runtime_->AllToAllAndWait(shape, AllBuffers(tensors), kTestWait, call);
    } else {
      status = RunOnRankThreads(world_size(), [&](int rank) {
        return runtime_->AllToAllRank(rank, shape, Buffers(rank, tensors), call);
      });
      if (status.ok()) status = runtime_->Synchronize(kTestWait);
    }
    if (status.ok()) status = Verify(tensors);
    return status;
  }

 private:
  std::unique_ptr<Runtime> runtime_;
  std::vector<std::unique_ptr<AllToAllHarness>> harnesses_;
};

// The cases of `world` ranks: both directions over uneven token counts, token counts with zeros,
// an uneven head split with a rank without heads, and odd head_dim on misaligned bytes.
std::vector<AllToAllCase> CasesFor(int world) {
  std::vector<AllToAllCase> cases;
  for (AllToAllDirection direction :
       {AllToAllDirection::kSeqToHeads, AllToAllDirection::kHeadsToSeq}) {
    AllToAllCase c;
    c.direction = direction;
    c.heads = 2 * world;
    c.head_dim = 64;
    c.token_counts = UnevenCounts(world, 5);
    cases.push_back(c);
    for (const std::vector<int64_t>& counts : ZeroTokenPatterns(world, 3, 9)) {
      c.token_counts = counts;
      cases.push_back(c);
    }
    c.token_counts = UnevenCounts(world, 4);
    c.head_counts.assign(world, 2);
    c.head_counts[world / 2] = 0;
    c.head_counts[0] = 3;
    c.heads = 2 * world - 1;
    cases.push_back(c);
    AllToAllCase odd;
    odd.direction = direction;
    odd.dtype = DataType::kUint8;
    odd.heads = world;
    odd.head_dim = 7;
    odd.token_counts = UnevenCounts(world, 2);
    odd.input_misalignment = 3;
    odd.output_misalignment = 5;
    cases.push_back(odd);
  }
  return cases;
}

class AllToAllTensorsTest
    : public ::testing::TestWithParam<std::tuple<CallStyle, Protocol>> {};

TEST_P(AllToAllTensorsTest, EveryTensorArrivesByteExactOnEveryRank) {
  LTX_REQUIRE_RANKS(2);
  TensorsFixture f(TestRankDevices(2));
  ASSERT_NE(f.runtime(), nullptr);
  CallOptions call;
  call.protocol = std::get<1>(GetParam());
  for (const AllToAllCase& c : CasesFor(f.world_size())) {
    for (int tensors = 2; tensors <= kMaxTensors; ++tensors) {
      SCOPED_TRACE(absl::StrCat(c.ToString(), " tensors=", tensors));
      ASSERT_TRUE(f.Prepare(c).ok());
      const absl::Status status = f.Run(tensors, std::get<0>(GetParam()), call);
      ASSERT_TRUE(status.ok()) << status;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    StylesAndProtocols, AllToAllTensorsTest,
    ::testing::Combine(::testing::Values(CallStyle::kCoordinated, CallStyle::kPerRankThreads),
                       ::testing::Values(Protocol::kAuto, Protocol::kDirect)),
    [](const ::testing::TestParamInfo<std::tuple<CallStyle, Protocol>>& info) {
      return absl::StrCat(
          std::get<0>(info.param) == CallStyle::kCoordinated ? "Coordinated" : "PerRankThreads",
          std::get<1>(info.param) == Protocol::kAuto ? "Auto" : "Direct");
    });

// The one-trip kernel and the copy engines do not move several tensors in one op: every rank
// refuses alike with Unimplemented before any launch, in both call styles, and the Runtime stays
// usable.
TEST(AllToAllTensorsRefusalTest, OneTripAndCopyEnginesAreUnimplementedAndTheRuntimeStaysUsable) {
  LTX_REQUIRE_RANKS(2);
  TensorsFixture f(TestRankDevices(2));
  ASSERT_NE(f.runtime(), nullptr);
  const AllToAllCase c = CasesFor(f.world_size()).front();
  for (Protocol protocol : {Protocol::kOneTrip, Protocol::kCopyEngine}) {
    CallOptions call;
    call.protocol = protocol;
    for (CallStyle style : {CallStyle::kCoordinated, CallStyle::kPerRankThreads}) {
      ASSERT_TRUE(f.Prepare(c).ok());
      const absl::Status status = f.Run(3, style, call);
      EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << status;
      EXPECT_TRUE(f.runtime()->status().ok()) << f.runtime()->status();
      ASSERT_TRUE(f.Prepare(c).ok());
      EXPECT_TRUE(f.Run(3, style).ok());
    }
  }
}

// Ranks that pass different tensor counts disagree on the op's digest: InvalidArgument from the
// device, not a hang and no stores; Reset makes the Runtime usable.
TEST(AllToAllTensorsDisagreementTest, RanksWithDifferentTensorCountsGetInvalidArgument) {
  LTX_REQUIRE_RANKS(2);
  RuntimeOptions options = OnPeerStores();
  options.timeout = absl::Seconds(5);
  TensorsFixture f(TestRankDevices(2), options);
  ASSERT_NE(f.runtime(), nullptr);
  const int world = f.world_size();
  const AllToAllCase c = CasesFor(world).front();
  CallOptions call;
  call.protocol = Protocol::kDirect;
  for (int rank_zero_tensors : {1, 3}) {
    SCOPED_TRACE(absl::StrCat("rank 0 moves ", rank_zero_tensors, " tensors, the others 2"));
    ASSERT_TRUE(f.Prepare(c).ok());
    const absl::Status launched = RunOnRankThreads(world, [&](int rank) {
      const int tensors = rank == 0 ? rank_zero_tensors : 2;
      return f.runtime()->AllToAllRank(rank, f.Shape(tensors), f.Buffers(rank, tensors), call);
    });
    ASSERT_TRUE(launched.ok()) << launched;
    const absl::Status status = f.runtime()->Synchronize(kTestWait);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_NE(std::string(status.message()).find("tensor count"), std::string::npos) << status;
    ASSERT_TRUE(f.runtime()->Reset(kTestWait).ok());
    ASSERT_TRUE(f.Prepare(c).ok());
    EXPECT_TRUE(f.Run(3, CallStyle::kCoordinated).ok());
  }
}

}  // namespace
}  // namespace ltx
