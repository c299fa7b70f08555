// The GPU test fixture of calls that move several tensors of one shape in one op (the
// all-to-all's and the AllGather's `tensors`): a Runtime on the peer-store transport and one
// harness per tensor (its own random input, poisoned output and host reference) over the same
// GPUs, tensor j's buffers passed as RankBuffers' tensor j; every tensor verified byte-exact on
// every rank after each call. `Calls` names the collective (AllToAllCalls, AllGatherCalls).
// The scenarios both collectives' tests run on it follow the fixture.
#ifndef LTX_TESTS_TENSORS_FIXTURE_H_
#define LTX_TESTS_TENSORS_FIXTURE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "ltx/runtime.h"
#include "ltx/status_macros.h"
#include "tools/testing/allgather_harness.h"
#include "tools/testing/alltoall_harness.h"
#include "tools/testing/gpu_fixture.h"
#include "tools/testing/harness_set.h"
#include "tools/testing/rank_threads.h"
#include "tools/testing/test_ranks.h"

namespace ltx {

// The all-to-all's harness, case, shape and calls.
struct AllToAllCalls {
  using Harness = AllToAllHarness;
  using Case = AllToAllCase;
  using Shape = AllToAllShape;
  static absl::Status AndWait(Runtime& runtime, const Shape& shape,
                              absl::Span<const RankBuffers> buffers, const CallOptions& call) {
    return runtime.AllToAllAndWait(shape, buffers, kTestWait, call);
  }
  static absl::Status OnRank(Runtime& runtime, int rank, const Shape& shape,
                             const RankBuffers& buffers, const CallOptions& call) {
    return runtime.AllToAllRank(rank, shape, buffers, call);
  }
};

// The AllGather's harness, case, shape and calls.
struct AllGatherCalls {
  using Harness = AllGatherHarness;
  using Case = AllGatherCase;
  using Shape = AllGatherShape;
  static absl::Status AndWait(Runtime& runtime, const Shape& shape,
                              absl::Span<const RankBuffers> buffers, const CallOptions& call) {
    return runtime.AllGatherAndWait(shape, buffers, kTestWait, call);
  }
  static absl::Status OnRank(Runtime& runtime, int rank, const Shape& shape,
                             const RankBuffers& buffers, const CallOptions& call) {
    return runtime.AllGatherRank(rank, shape, buffers, call);
  }
};

template <typename Calls>
class TensorsFixture {
 public:
  using Case = typename Calls::Case;
  using Shape = typename Calls::Shape;

  // Harnesses of `capacity` bytes per input and output. Null runtime after a (reported)
  // failure.
  TensorsFixture(const std::vector<int>& devices, int64_t capacity,
                 RuntimeOptions options = OnPeerStores()) {
    options.devices = devices;
    absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
    EXPECT_TRUE(runtime.ok()) << runtime.status();
    // On harness 0's streams (HarnessSet).
    auto harnesses = HarnessSet<typename Calls::Harness>::Create(
        devices, kMaxTensors, capacity, capacity,
        [&](int tensor) { return devices.size() * 7919 + tensor * 104729; });
    EXPECT_TRUE(harnesses.ok()) << harnesses.status();
    if (!harnesses.ok()) return;
    harnesses_ = std::move(*harnesses);
    if (runtime.ok()) runtime_ = std::move(*runtime);
  }

  Runtime* runtime() const { return runtime_.get(); }
  int world_size() const { return runtime_->world_size(); }

  // Makes `c` current in every harness (fresh inputs, poisoned outputs).
  absl::Status Prepare(const Case& c) {
    case_ = c;
    for (int tensor = 0; tensor < harnesses_.size(); ++tensor) {
      LTX_RETURN_IF_ERROR(harnesses_[tensor].Prepare(case_));
    }
    return absl::OkStatus();
  }

  // The shape of the current case with `tensors` tensors.
  Shape ShapeOf(int tensors) const {
    Shape shape = case_.Shape();
    shape.tensors = tensors;
    return shape;
  }

  // Rank `rank`'s buffers for `tensors` tensors: harness j's buffers as tensor j's.
  RankBuffers Buffers(int rank, int tensors) const {
    RankBuffers buffers = harnesses_[0].Buffers(rank);
    for (int tensor = 1; tensor < tensors; ++tensor) {
      const RankBuffers own = harnesses_[tensor].Buffers(rank);
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
          tensor < tensors ? harnesses_[tensor].Verify() : harnesses_[tensor].VerifyGuards();
      if (!status.ok()) {
        return absl::Status(status.code(), absl::StrCat("tensor ", tensor, ": ", status.message()));
      }
    }
    return absl::OkStatus();
  }

  // Runs the current case with `tensors` tensors in `style` with `call`, waits and verifies.
  absl::Status Run(int tensors, CallStyle style, const CallOptions& call = {}) {
    const Shape shape = ShapeOf(tensors);
    absl::Status status;
    if (style == CallStyle::kCoordinated) {
      status = Calls::AndWait(*runtime_, shape, AllBuffers(tensors), call);
    } else {
      status = RunOnRankThreads(world_size(), [&](int rank) {
        return Calls::OnRank(*runtime_, rank, shape, Buffers(rank, tensors), call);
      });
      if (status.ok()) status = runtime_->Synchronize(kTestWait);
    }
    if (status.ok()) status = Verify(tensors);
    return status;
  }

  // Per-rank calls in which rank 0 moves `rank_zero_tensors` tensors and the others
  // `other_tensors`, with `call`; returns what Synchronize reports.
  absl::Status RunDisagreeing(int rank_zero_tensors, int other_tensors, const CallOptions& call) {
    const absl::Status launched = RunOnRankThreads(world_size(), [&](int rank) {
      const int tensors = rank == 0 ? rank_zero_tensors : other_tensors;
      return Calls::OnRank(*runtime_, rank, ShapeOf(tensors), Buffers(rank, tensors), call);
    });
    if (!launched.ok()) return launched;
    return runtime_->Synchronize(kTestWait);
  }

 private:
  std::unique_ptr<Runtime> runtime_;
  HarnessSet<typename Calls::Harness> harnesses_;
  Case case_;
};

// The name of a test of a call style and a protocol (kAuto or kDirect): "CoordinatedAuto", ...
inline std::string StyleAndProtocolName(
    const ::testing::TestParamInfo<std::tuple<CallStyle, Protocol>>& info) {
  return absl::StrCat(
      std::get<0>(info.param) == CallStyle::kCoordinated ? "Coordinated" : "PerRankThreads",
      std::get<1>(info.param) == Protocol::kAuto ? "Auto" : "Direct");
}

// Every case of `cases` with 2 to kMaxTensors tensors in `style` with `protocol`: every tensor
// byte-exact on every rank.
template <typename Calls>
void ExpectEveryTensorByteExact(const std::vector<typename Calls::Case>& cases, int64_t capacity,
                                CallStyle style, Protocol protocol) {
  TensorsFixture<Calls> f(TestRankDevices(2), capacity);
  ASSERT_NE(f.runtime(), nullptr);
  CallOptions call;
  call.protocol = protocol;
  for (const typename Calls::Case& c : cases) {
    for (int tensors = 2; tensors <= kMaxTensors; ++tensors) {
      SCOPED_TRACE(absl::StrCat(c.ToString(), " tensors=", tensors));
      ASSERT_TRUE(f.Prepare(c).ok());
      const absl::Status status = f.Run(tensors, style, call);
      ASSERT_TRUE(status.ok()) << status;
    }
  }
}

// The one-trip kernel and the copy engines do not move several tensors in one op: every rank
// refuses `c` of three tensors alike with Unimplemented before any launch, in both call styles;
// a coordinated call leaves the Runtime usable, per-rank calls stop it until Reset.
template <typename Calls>
void ExpectRefusedPathsUnimplemented(const typename Calls::Case& c, int64_t capacity) {
  TensorsFixture<Calls> f(TestRankDevices(2), capacity);
  ASSERT_NE(f.runtime(), nullptr);
  for (Protocol protocol : {Protocol::kOneTrip, Protocol::kCopyEngine}) {
    CallOptions call;
    call.protocol = protocol;
    for (CallStyle style : {CallStyle::kCoordinated, CallStyle::kPerRankThreads}) {
      ASSERT_TRUE(f.Prepare(c).ok());
      const absl::Status status = f.Run(3, style, call);
      if (style == CallStyle::kCoordinated) {
        EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << status;
        EXPECT_TRUE(f.runtime()->status().ok()) << f.runtime()->status();
      } else {
        // A rank cannot know that its peers refused alike: the first refusal stops the Runtime,
        // and a rank that calls after it finds it stopped (FailedPrecondition naming the error).
        EXPECT_TRUE(absl::IsUnimplemented(status) || absl::IsFailedPrecondition(status)) << status;
        EXPECT_EQ(f.runtime()->status().code(), absl::StatusCode::kUnimplemented)
            << f.runtime()->status();
        ASSERT_TRUE(f.runtime()->Reset(kTestWait).ok());
      }
      ASSERT_TRUE(f.Prepare(c).ok());
      EXPECT_TRUE(f.Run(3, style).ok());
    }
  }
}

// Ranks that pass different tensor counts for `c` disagree on the op's digest: InvalidArgument
// from the device, not a hang and no stores; Reset makes the Runtime usable.
template <typename Calls>
void ExpectDisagreeingCountsInvalid(const typename Calls::Case& c, int64_t capacity) {
  RuntimeOptions options = OnPeerStores();
  options.timeout = absl::Seconds(5);
  TensorsFixture<Calls> f(TestRankDevices(2), capacity, options);
  ASSERT_NE(f.runtime(), nullptr);
  CallOptions call;
  call.protocol = Protocol::kDirect;
  for (int rank_zero_tensors : {1, 3}) {
    SCOPED_TRACE(absl::StrCat("rank 0 moves ", rank_zero_tensors, " tensors, the others 2"));
    ASSERT_TRUE(f.Prepare(c).ok());
    const absl::Status status = f.RunDisagreeing(rank_zero_tensors, 2, call);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_NE(std::string(status.message()).find("tensor count"), std::string::npos) << status;
    ASSERT_TRUE(f.runtime()->Reset(kTestWait).ok());
    ASSERT_TRUE(f.Prepare(c).ok());
    EXPECT_TRUE(f.Run(3, CallStyle::kCoordinated).ok());
  }
}

}  // namespace ltx

#endif  // LTX_TESTS_TENSORS_FIXTURE_H_
