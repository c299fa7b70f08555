// GPU correctness matrix of the AllGather, for every protocol (direct, one-trip, copy engines)
// and both call styles: every dtype, odd and huge hidden sizes, batch > 1, uneven and zero
// token counts, misaligned buffers, fewer blocks than ranks, world sizes 1..N and device
// subsets in any order, long runs of back-to-back calls into re-used buffers, one-trip
// kernels launched early, and the timed kernels of both protocols (phase records of every
// block); the one-trip path among three ranks or more. Random data, outputs poisoned before
// every call, byte-exact checks on every rank. The ranks come from the layout switch
// (tools/testing/test_ranks.h).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "kernels/wire/one_trip_layout.h"
#include "kernels/wire/phase_timestamps.h"
#include "ltx/runtime.h"
#include "tests/phase_record_buffers.h"
#include "tools/testing/allgather_harness.h"
#include "tools/testing/gpu_fixture.h"
#include "tools/testing/harness_ring.h"
#include "tools/testing/token_counts.h"

namespace ltx {
namespace {

// Whether protocol `protocol` can carry case `c` (the one-trip path has a size limit).
bool Fits(const AllGatherCase& c, Protocol protocol) {
  if (protocol != Protocol::kOneTrip) return true;
  const int64_t row = c.hidden * ElementSize(c.dtype);
  for (int64_t count : c.token_counts) {
    if (c.batch * count * row > kOneTripMaxShardBytes) return false;
  }
  return true;
}

// The matrix runs in both call styles and with each protocol.
class AllGatherMatrixTest : public ::testing::TestWithParam<std::tuple<CallStyle, Protocol>> {
 protected:
  void SetUp() override {
    if (call().protocol == Protocol::kCopyEngine) {
      LTX_SKIP_WHERE_COPY_ENGINES_REFUSED(TestRankDevices(2));
    }
  }
  CallStyle style() const { return std::get<0>(GetParam()); }
  CallOptions call() const {
    CallOptions call;
    call.protocol = std::get<1>(GetParam());
    return call;
  }
  // Runs `c` if the protocol can carry it; returns whether it ran.
  bool RunIfFits(GpuFixture& f, const AllGatherCase& c) {
    if (!Fits(c, call().protocol)) return false;
    const absl::Status status = RunAndVerify(f, c, style(), call());
    EXPECT_TRUE(status.ok()) << status;
    return true;
  }
};

TEST_P(AllGatherMatrixTest, EveryDtype) {
  LTX_REQUIRE_RANKS(2);
  GpuFixture f = MakeGpuFixture(TestRankDevices(2), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  for (DataType dtype : kAllDataTypes) {
    AllGatherCase c;
    c.dtype = dtype;
    c.batch = 2;
    // Rows of at most 8000 bytes: every shard fits the one-trip staging up to 8 ranks.
    c.hidden = ElementSize(dtype) > 8 ? 500 : 1000;
    c.token_counts = UnevenCounts(f.runtime->world_size(), 5);
    EXPECT_TRUE(RunIfFits(f, c)) << c.ToString();
  }
}

TEST_P(AllGatherMatrixTest, HiddenSizesAndBatches) {
  LTX_REQUIRE_RANKS(2);
  GpuFixture f = MakeGpuFixture(TestRankDevices(2), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  for (int64_t hidden : {1, 7, 64, 1000, 4096, 8192, 12288, 65536}) {
    for (int64_t batch : {1, 3}) {
      AllGatherCase c;
      c.dtype = DataType::kBFloat16;
      c.batch = batch;
      c.hidden = hidden;
      c.token_counts = UnevenCounts(f.runtime->world_size(), 4);
      RunIfFits(f, c);
    }
  }
}

TEST_P(AllGatherMatrixTest, ZeroTokenRanks) {
  LTX_REQUIRE_RANKS(2);
  GpuFixture f = MakeGpuFixture(TestRankDevices(2), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  const std::vector<std::vector<int64_t>> patterns = ZeroTokenPatterns(world, 9, 33);
  for (const auto& counts : patterns) {
    AllGatherCase c;
    c.dtype = DataType::kFloat16;
    c.batch = 3;
    c.hidden = 96;
    c.token_counts = counts;
    EXPECT_TRUE(RunIfFits(f, c));
  }
}

INSTANTIATE_TEST_SUITE_P(
    StylesAndProtocols, AllGatherMatrixTest,
    ::testing::Combine(::testing::Values(CallStyle::kCoordinated, CallStyle::kPerRankThreads),
                       ::testing::Values(Protocol::kAuto, Protocol::kDirect, Protocol::kOneTrip,
                                         Protocol::kCopyEngine)),
    [](const ::testing::TestParamInfo<std::tuple<CallStyle, Protocol>>& info) {
      const CallStyle style = std::get<0>(info.param);
      const Protocol protocol = std::get<1>(info.param);
      return std::string(style == CallStyle::kCoordinated ? "Coordinated" : "PerRankThreads") +
             (protocol == Protocol::kAuto      ? "Auto"
              : protocol == Protocol::kDirect  ? "Direct"
              : protocol == Protocol::kOneTrip ? "OneTrip"
                                               : "CopyEngine");
    });

TEST(AllGatherTest, MisalignedBuffersTakeTheNarrowPath) {
  LTX_REQUIRE_RANKS(2);
  GpuFixture f = MakeGpuFixture(TestRankDevices(2), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  for (int in_off : {0, 1, 3, 8}) {
    for (int out_off : {0, 2, 5, 8, 13}) {
      AllGatherCase c;
      c.dtype = DataType::kUint8;
      c.batch = 2;
      c.hidden = 333;
      c.token_counts = UnevenCounts(f.runtime->world_size(), 3);
      c.input_misalignment = in_off;
      c.output_misalignment = out_off;
      for (Protocol protocol : {Protocol::kDirect, Protocol::kOneTrip}) {
        CallOptions call;
        call.protocol = protocol;
        const absl::Status status = RunAndVerify(f, c, CallStyle::kCoordinated, call);
        EXPECT_TRUE(status.ok()) << status;
      }
    }
  }
}

// Each rank's input is its own tokens inside its output (NCCL's in-place AllGather), on every
// protocol and in both call styles, small (one-trip sizes) and large (copy-engine sizes), with
// a rank without tokens.
TEST(AllGatherTest, InPlaceInputs) {
  LTX_REQUIRE_RANKS(2);
  GpuFixture f = MakeGpuFixture(TestRankDevices(2), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  std::vector<int64_t> with_zero = UnevenCounts(world, 7);
  with_zero[world - 1] = 0;
  for (const std::vector<int64_t>& counts : {UnevenCounts(world, 5), with_zero,
                                             std::vector<int64_t>(world, 1100)}) {
    for (CallStyle style : {CallStyle::kCoordinated, CallStyle::kPerRankThreads}) {
      for (Protocol protocol :
           {Protocol::kAuto, Protocol::kDirect, Protocol::kOneTrip, Protocol::kCopyEngine}) {
        AllGatherCase c;
        c.dtype = DataType::kBFloat16;
        c.hidden = 4096;
        c.token_counts = counts;
        c.in_place = true;
        if (!Fits(c, protocol)) continue;
        if (protocol == Protocol::kCopyEngine && !CopyEnginesServe(f.runtime->devices())) continue;
        CallOptions call;
        call.protocol = protocol;
        const absl::Status status = RunAndVerify(f, c, style, call);
        EXPECT_TRUE(status.ok()) << c.ToString() << ": " << status;
      }
    }
  }
}

TEST(AllGatherTest, AnyBlockCountIncludingFewerBlocksThanRanks) {
  LTX_REQUIRE_RANKS(2);
  GpuFixture f = MakeGpuFixture(TestRankDevices(2), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  for (int blocks : {1, 2, 3, 5, 8, 33, 132}) {
    AllGatherCase c;
    c.dtype = DataType::kBFloat16;
    c.batch = 2;
    c.hidden = 2048;
    c.token_counts = UnevenCounts(f.runtime->world_size(), 20);
    for (Protocol protocol : {Protocol::kDirect, Protocol::kOneTrip}) {
      CallOptions call;
      call.blocks = blocks;
      call.protocol = protocol;
      const absl::Status status = RunAndVerify(f, c, CallStyle::kCoordinated, call);
      EXPECT_TRUE(status.ok()) << "blocks=" << blocks << ": " << status;
    }
  }
}

// Early start (programmatic dependent launch) changes when blocks are scheduled, not what they
// store: back-to-back one-trip calls of changing shapes, both call styles, several block counts.
TEST(AllGatherTest, OneTripEarlyStartGathersAlike) {
  LTX_REQUIRE_RANKS(2);
  GpuFixture f = MakeGpuFixture(TestRankDevices(2), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  for (int blocks : {0, 1, 3}) {
    for (int64_t tokens : {1, 7, 40}) {
      AllGatherCase c;
      c.dtype = DataType::kBFloat16;
      c.hidden = 1024;
      c.token_counts = UnevenCounts(f.runtime->world_size(), tokens);
      CallOptions call;
      call.protocol = Protocol::kOneTrip;
      call.blocks = blocks;
      call.early_start = true;
      for (CallStyle style : {CallStyle::kPerRankThreads, CallStyle::kCoordinated}) {
        const absl::Status status = RunAndVerify(f, c, style, call);
        EXPECT_TRUE(status.ok()) << "blocks=" << blocks << " tokens=" << tokens << ": " << status;
      }
    }
  }
}

// The timed kernel of `protocol` (kDirect or kOneTrip) gathers alike (every op into buffers of
// its own, with its own random data) and records every block of every op, each phase from the
// block's start to its end where it was reached; a coordinated call, which would hand one rank's
// buffer to every GPU, refuses timestamps. On at least `min_ranks` ranks of the layout, `batch`
// slices, uneven counts with none on rank `zero_token_rank` (-1: every rank has tokens).
template <typename Phase>
void ExpectTimedCallsRecordEveryBlock(Protocol protocol, const std::vector<Phase>& reached,
                                      int min_ranks = 2, int64_t batch = 1,
                                      int zero_token_rank = -1) {
  GpuFixture f = MakeGpuFixture(TestRankDevices(min_ranks), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  constexpr int kBlocks = 3;
  constexpr int kOps = 4;
  AllGatherCase c;
  c.dtype = DataType::kFloat32;
  c.batch = batch;
  c.hidden = 512;
  c.token_counts = UnevenCounts(world, 5);
  if (zero_token_rank >= 0) c.token_counts[zero_token_rank] = 0;
  absl::StatusOr<HarnessRing<AllGatherHarness>> ring = HarnessRing<AllGatherHarness>::Create(
      f.runtime->devices(), kOps, int64_t{1} << 20, int64_t{4} << 20, /*seed=*/31);
  ASSERT_TRUE(ring.ok()) << ring.status();
  absl::StatusOr<std::unique_ptr<PhaseRecordBuffers>> records =
      PhaseRecordBuffers::Create(f.runtime->devices(), kOps, kBlocks);
  ASSERT_TRUE(records.ok()) << records.status();
  std::vector<CallOptions> calls;
  for (int rank = 0; rank < world; ++rank) calls.push_back((*records)->TimedCall(rank, protocol));
  // Every slot first: a slot's Prepare waits for the streams, which every slot shares.
  for (int op = 0; op < kOps; ++op) ASSERT_TRUE(ring->slot(op).Prepare(c).ok());
  for (int op = 0; op < kOps; ++op) {
    for (int rank = 0; rank < world; ++rank) {
      ASSERT_TRUE(
          f.runtime->AllGatherRank(rank, c.Shape(), ring->Buffers(op, rank), calls[rank]).ok());
    }
  }
  for (int op = 0; op < kOps; ++op) {
    const absl::Status verified = ring->Verify(op);
    EXPECT_TRUE(verified.ok()) << "op " << op << ": " << verified;
  }
  (*records)->ExpectEveryBlockRecorded(reached);
  EXPECT_EQ(f.runtime->AllGather(c.Shape(), ring->AllBuffers(0), calls[0]).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(AllGatherTest, OneTripTimestampsRecordEveryBlock) {
  LTX_REQUIRE_RANKS(2);
  ExpectTimedCallsRecordEveryBlock(Protocol::kOneTrip,
                                   std::vector<OneTripPhase>{OneTripPhase::kUnpacked});
}

// Every block of the direct kernel reaches every phase but the last block's exit steps.
TEST(AllGatherTest, DirectTimestampsRecordEveryBlock) {
  LTX_REQUIRE_RANKS(2);
  ExpectTimedCallsRecordEveryBlock(
      Protocol::kDirect,
      std::vector<DirectPhase>{DirectPhase::kEntryPublished, DirectPhase::kTargetSeen,
                               DirectPhase::kFirstStore, DirectPhase::kStoresDone,
                               DirectPhase::kFenced, DirectPhase::kCounted});
}

// Three ranks or more on the one-trip path, where every sender's lines go to two or more peers:
// uneven counts with none on rank 1 (between ranks with tokens), batch 2, rows of 16 bytes to
// 4 KiB, both call styles, byte-exact; and the timed kernel on such a case, every block of every
// op recording its sends, its own shard and its unpacking.
TEST(AllGatherTest, OneTripAmongThreeOrMoreRanks) {
  LTX_REQUIRE_RANKS(3);
  ExpectTimedCallsRecordEveryBlock(
      Protocol::kOneTrip,
      std::vector<OneTripPhase>{OneTripPhase::kSent, OneTripPhase::kOwnCopied,
                                OneTripPhase::kUnpacked},
      /*min_ranks=*/3, /*batch=*/2, /*zero_token_rank=*/1);
  GpuFixture f = MakeGpuFixture(TestRankDevices(3), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  CallOptions call;
  call.protocol = Protocol::kOneTrip;
  for (int64_t hidden : {8, 1000, 2048}) {
    AllGatherCase c;
    c.dtype = DataType::kBFloat16;
    c.batch = 2;
    c.hidden = hidden;
    c.token_counts = UnevenCounts(f.runtime->world_size(), 5);
    c.token_counts[1] = 0;
    ASSERT_TRUE(Fits(c, call.protocol)) << c.ToString();
    for (CallStyle style : {CallStyle::kCoordinated, CallStyle::kPerRankThreads}) {
      const absl::Status status = RunAndVerify(f, c, style, call);
      EXPECT_TRUE(status.ok()) << c.ToString() << ": " << status;
    }
  }
}

TEST(AllGatherTest, LargeShards) {
  LTX_REQUIRE_RANKS(2);
  GpuFixture f = MakeGpuFixture(TestRankDevices(2), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  AllGatherCase c;
  c.dtype = DataType::kBFloat16;
  c.batch = 1;
  c.hidden = 8192;
  // About 20 MiB per rank, uneven, and at most about 90 MiB of output (the harness's 96 MiB).
  c.token_counts = UnevenCounts(world, std::min(1200, 5600 / world));
  const absl::Status status = RunAndVerify(f, c, CallStyle::kPerRankThreads);
  EXPECT_TRUE(status.ok()) << status;
}

// World sizes 1..N over prefixes and reordered subsets of the layout's ranks.
TEST(AllGatherTest, WorldSizesAndDeviceOrders) {
  LTX_REQUIRE_RANKS(2);
  const std::vector<std::vector<int>> subsets = SubLayouts(TestRankDevices(2));
  for (const auto& devices : subsets) {
    GpuFixture f = MakeGpuFixture(devices);
    ASSERT_NE(f.runtime, nullptr);
    for (CallStyle style : {CallStyle::kCoordinated, CallStyle::kPerRankThreads}) {
      AllGatherCase c;
      c.dtype = DataType::kFloat32;
      c.batch = 2;
      c.hidden = 515;
      c.token_counts = UnevenCounts(static_cast<int>(devices.size()), 6);
      const absl::Status status = RunAndVerify(f, c, style);
      EXPECT_TRUE(status.ok()) << "devices " << ::testing::PrintToString(devices) << ": " << status;
    }
  }
}

// 1000 calls back to back with changing shapes into the same buffers, each one verified,
// alternating the call styles.
TEST(AllGatherTest, ThousandBackToBackCallsWithChangingShapes) {
  LTX_REQUIRE_RANKS(2);
  GpuFixture f = MakeGpuFixture(TestRankDevices(2), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  std::mt19937_64 random(1234);
  const int64_t hiddens[] = {1, 3, 8, 64, 100, 1024, 4096, 12288};
  for (int i = 0; i < 1000; ++i) {
    AllGatherCase c;
    c.dtype = kAllDataTypes[random() % (sizeof(kAllDataTypes) / sizeof(kAllDataTypes[0]))];
    c.batch = 1 + random() % 3;
    c.hidden = hiddens[random() % (sizeof(hiddens) / sizeof(hiddens[0]))];
    for (int rank = 0; rank < world; ++rank) {
      c.token_counts.push_back(random() % 4 == 0 ? 0 : random() % 40);
    }
    // At most 12288 x 8 bytes per token and 8 ranks' tokens in the harness's 96 MiB.
    if (c.hidden * ElementSize(c.dtype) > 12288 * 8) c.hidden /= 2;
    c.input_misalignment = random() % 4 == 0 ? random() % 16 : 0;
    c.output_misalignment = random() % 4 == 0 ? random() % 16 : 0;
    const CallStyle style = i % 2 == 0 ? CallStyle::kCoordinated : CallStyle::kPerRankThreads;
    // Switching protocols between calls exercises the hand-over of staging, flags and events.
    CallOptions call;
    call.protocol = static_cast<Protocol>(random() % 4);
    if (!Fits(c, call.protocol) ||
        (call.protocol == Protocol::kCopyEngine && !CopyEnginesServe(f.runtime->devices()))) {
      call.protocol = Protocol::kDirect;
    }
    const absl::Status status = RunAndVerify(f, c, style, call);
    ASSERT_TRUE(status.ok()) << "call " << i << ": " << status;
  }
}

// Rank 0's per-rank call on `rank0` is refused with InvalidArgument naming the stream. A
// rejected per-rank call may leave peers that already launched waiting, so it stops the Runtime:
// rank 1's call is refused with FailedPrecondition until Reset.
void ExpectStreamRefusedUntilReset(GpuFixture& f, const AllGatherShape& shape,
                                   const RankBuffers& rank0) {
  const absl::Status status = f.runtime->AllGatherRank(0, shape, rank0);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("stream"), absl::string_view::npos) << status;
  EXPECT_EQ(f.runtime->AllGatherRank(1, shape, f.harness->Buffers(1)).code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(f.runtime->Reset(kTestWait).ok());
}

// Buffers the Runtime must refuse: an output on another rank's GPU (where the two ranks are on
// two GPUs), host memory, null, too few buffers, too many counts; per rank, a stream of another
// GPU, or, on a GPU that hosts both ranks, the legacy default stream and one stream for both.
TEST(AllGatherTest, RejectsOutputOnAnotherGpuAndOtherBadBuffers) {
  LTX_REQUIRE_RANKS(2);
  GpuFixture f = MakeGpuFixture(TestDevices(2));
  ASSERT_NE(f.runtime, nullptr);
  const std::vector<int> devices = f.runtime->devices();
  AllGatherCase c;
  c.hidden = 64;
  c.token_counts = {4, 4};
  ASSERT_TRUE(f.harness->Prepare(c).ok());
  const AllGatherShape shape = c.Shape();
  std::vector<RankBuffers> buffers = f.harness->AllBuffers();

  absl::Status status;
  if (devices[0] != devices[1]) {
    std::vector<RankBuffers> swapped = buffers;
    std::swap(swapped[0].output, swapped[1].output);
    status = f.runtime->AllGather(shape, swapped).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_NE(status.message().find("output"), absl::string_view::npos) << status;
    EXPECT_NE(status.message().find(absl::StrCat("GPU ", devices[1])), absl::string_view::npos)
        << status;
  }

  int host_value = 0;
  std::vector<RankBuffers> host_output = buffers;
  host_output[1].output = &host_value;
  status = f.runtime->AllGather(shape, host_output).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;

  std::vector<RankBuffers> null_input = buffers;
  null_input[1].input = nullptr;
  status = f.runtime->AllGather(shape, null_input).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("input"), absl::string_view::npos) << status;

  status = f.runtime->AllGather(shape, absl::MakeSpan(buffers).subspan(0, 1)).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;

  const std::vector<int64_t> three = {1, 2, 3};
  AllGatherShape wrong_length = shape;
  wrong_length.token_counts = three;
  status = f.runtime->AllGather(wrong_length, buffers).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("token_counts"), absl::string_view::npos) << status;

  // Nothing was launched by the rejected coordinated calls: a good call still works.
  EXPECT_TRUE(RunAndVerify(f, c, CallStyle::kCoordinated).ok());

  if (devices[0] != devices[1]) {
    RankBuffers other_gpus_stream = buffers[0];
    other_gpus_stream.stream = buffers[1].stream;
    ExpectStreamRefusedUntilReset(f, shape, other_gpus_stream);
  } else {
    for (cudaStream_t legacy : {cudaStream_t{nullptr}, cudaStreamLegacy}) {
      RankBuffers on_legacy = buffers[0];
      on_legacy.stream = legacy;
      ExpectStreamRefusedUntilReset(f, shape, on_legacy);
    }
    // Rank 1 on rank 0's stream: its call is refused; rank 0's kernel gives up or is aborted.
    RankBuffers on_rank0s_stream = buffers[1];
    on_rank0s_stream.stream = buffers[0].stream;
    const absl::Status first = f.runtime->AllGatherRank(0, shape, buffers[0]);
    EXPECT_TRUE(first.ok()) << first;
    status = f.runtime->AllGatherRank(1, shape, on_rank0s_stream);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_NE(status.message().find("stream"), absl::string_view::npos) << status;
    ASSERT_TRUE(f.runtime->Reset(kTestWait).ok());
  }

  status = f.runtime->AllGatherRank(2, shape, buffers[0]);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  ASSERT_TRUE(f.runtime->Reset(absl::Seconds(10)).ok());

  EXPECT_TRUE(RunAndVerify(f, c, CallStyle::kPerRankThreads).ok());
}

// The copy-engine transport (for GPUs without peer access), forced on GPUs that have it: the
// same shapes, both call styles, byte-exact.
TEST(AllGatherTest, CopyEngineTransportGathersTheSameShapes) {
  LTX_REQUIRE_RANKS(2);
  LTX_SKIP_WHERE_COPY_ENGINES_REFUSED(TestRankDevices(2));
  RuntimeOptions options;
  options.transport = Transport::kCopyEngine;
  GpuFixture f = MakeGpuFixture(TestRankDevices(2), options);
  ASSERT_NE(f.runtime, nullptr);
  EXPECT_EQ(f.runtime->transport(), Transport::kCopyEngine);
  const int world = f.runtime->world_size();
  std::vector<AllGatherCase> cases;
  for (DataType dtype : kAllDataTypes) {
    AllGatherCase c;
    c.dtype = dtype;
    c.batch = 3;
    c.hidden = 1000;
    c.token_counts = UnevenCounts(world, 2);
    c.token_counts[1] = 0;
    cases.push_back(c);
  }
  for (int64_t hidden : {1, 7, 65536}) {
    AllGatherCase c;
    c.hidden = hidden;
    c.token_counts = UnevenCounts(world, 3);
    c.output_misalignment = 5;
    cases.push_back(c);
  }
  for (int i = 0; i < 20; ++i) {
    for (const AllGatherCase& c : cases) {
      const CallStyle style = i % 2 ? CallStyle::kCoordinated : CallStyle::kPerRankThreads;
      const absl::Status status = RunAndVerify(f, c, style);
      ASSERT_TRUE(status.ok()) << "round " << i << ": " << status;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Copy engines: a shard goes into each output as one strided copy of `batch` rows (one copy per
// row where a pitch is too large for the GPUs, and for batch 1).

// Batches of odd-sized rows at odd offsets, with ranks that send nothing, on both transports
// and in both call styles: every row lands at its pitch in every output.
TEST(CopyEngineStridedTest, BatchesOfOddRowsAtOddOffsets) {
  LTX_REQUIRE_RANKS(2);
  LTX_SKIP_WHERE_COPY_ENGINES_REFUSED(TestRankDevices(2));
  for (Transport transport : {Transport::kCopyEngine, Transport::kPeerStores}) {
    RuntimeOptions options;
    options.transport = transport;
    GpuFixture f = MakeGpuFixture(TestRankDevices(2), options);
    ASSERT_NE(f.runtime, nullptr);
    CallOptions call;
    call.protocol = Protocol::kCopyEngine;
    const int world = f.runtime->world_size();
    for (int64_t batch : {1, 2, 5, 17}) {
      for (int64_t hidden : {1, 7, 333, 4099}) {
        for (int misalignment : {0, 3}) {
          AllGatherCase c;
          c.dtype = DataType::kUint8;
          c.batch = batch;
          c.hidden = hidden;
          c.token_counts = UnevenCounts(world, 1);
          if (batch == 5) c.token_counts[world - 1] = 0;
          c.input_misalignment = misalignment;
          c.output_misalignment = misalignment == 0 ? 0 : 5;
          for (CallStyle style : {CallStyle::kPerRankThreads, CallStyle::kCoordinated}) {
            const absl::Status status = RunAndVerify(f, c, style, call);
            ASSERT_TRUE(status.ok())
                << (transport == Transport::kCopyEngine ? "copy-engine " : "peer-store ")
                << "transport, " << c.ToString() << ": " << status;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace ltx
