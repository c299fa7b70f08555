// GPU tests of the Ulysses all-to-all (sequence <-> heads) in both directions, every call style and
// every path (the direct and one-trip kernels, the copy engines as Protocol::kCopyEngine and as the
// copy-engine transport): every dtype, odd head_dim, batch > 1, uneven and zero token counts,
// uneven and zero head splits, misaligned buffers, world size 1, round trips, CUDA graph capture
// and replay, ranks that disagree on heads or on the head split (InvalidArgument, not a hang), ops
// interleaved with AllGathers on one Runtime, a one-trip call too large for the staging
// (InvalidArgument), the own piece beside the sends, early start, the timed direct and one-trip
// kernels (phase records of every block), the one-trip path among three ranks or more, and eight
// ranks with an uneven head split that leaves ranks in the middle without heads. Random data,
// outputs poisoned before every call, byte-exact checks on every rank. The ranks come from the
// layout switch (tools/testing/test_ranks.h), at least two of them.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "kernels/alltoall/alltoall_plan.h"
#include "kernels/wire/one_trip_layout.h"
#include "kernels/wire/phase_timestamps.h"
#include "ltx/runtime.h"
#include "tests/phase_record_buffers.h"
#include "tools/testing/allgather_harness.h"
#include "tools/testing/alltoall_harness.h"
#include "tools/testing/gpu_fixture.h"
#include "tools/testing/harness_ring.h"
#include "tools/testing/rank_threads.h"
#include "tools/testing/token_counts.h"

namespace ltx {
namespace {

constexpr int64_t kCapacity = int64_t{32} << 20;

struct AllToAllFixture {
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<AllToAllHarness> harness;
};

// A Runtime and an all-to-all harness over `devices`; null members after a (reported) failure.
AllToAllFixture MakeFixture(std::vector<int> devices, RuntimeOptions options = {}) {
  AllToAllFixture f;
  options.devices = devices;
  auto runtime = Runtime::Create(options);
  EXPECT_TRUE(runtime.ok()) << runtime.status();
  auto harness = AllToAllHarness::Create(devices, kCapacity, kCapacity,
                                         /*seed=*/devices.size() * 104729 + devices[0]);
  EXPECT_TRUE(harness.ok()) << harness.status();
  if (runtime.ok() && harness.ok()) {
    f.runtime = std::move(*runtime);
    f.harness = std::move(*harness);
  }
  return f;
}

// Runs the harness's current case on `runtime` from one thread per rank, rank r with
// `calls[r]`, waits, and verifies every rank's output.
absl::Status RunCurrentPerRank(Runtime& runtime, AllToAllHarness& harness,
                               const std::vector<CallOptions>& calls) {
  const AllToAllShape shape = harness.current_case().Shape();
  absl::Status status = RunOnRankThreads(runtime.world_size(), [&](int rank) {
    return runtime.AllToAllRank(rank, shape, harness.Buffers(rank), calls[rank]);
  });
  if (status.ok()) status = runtime.Synchronize(kTestWait);
  if (status.ok()) status = harness.Verify();
  return status;
}

// Runs the harness's current case on `runtime` in `style` with `call`, waits, and verifies
// every rank's output.
absl::Status RunCurrent(Runtime& runtime, AllToAllHarness& harness, CallStyle style,
                        const CallOptions& call = {}) {
  if (style == CallStyle::kPerRankThreads) {
    return RunCurrentPerRank(runtime, harness,
                             std::vector<CallOptions>(runtime.world_size(), call));
  }
  absl::Status status = runtime.AllToAllAndWait(harness.current_case().Shape(),
                                                harness.AllBuffers(), kTestWait, call);
  if (status.ok()) status = harness.Verify();
  return status;
}
absl::Status RunCurrent(AllToAllFixture& f, CallStyle style, const CallOptions& call = {}) {
  return RunCurrent(*f.runtime, *f.harness, style, call);
}

// Whether every piece of the harness's current case fits the one-trip staging.
bool FitsOneTrip(const AllToAllHarness& harness) {
  const AllToAllGeometry& g = harness.layout().geometry;
  for (int rank = 0; rank < g.world_size; ++rank) {
    if (LargestPieceBytes(g, rank) > kOneTripMaxShardBytes) return false;
  }
  return true;
}

// Runs `c` in `style` with `call` and verifies it. On Protocol::kOneTrip, a case with a piece
// over the staging must instead be refused with InvalidArgument by a coordinated call, before
// any launch, leaving the Runtime usable.
absl::Status RunAndVerify(AllToAllFixture& f, const AllToAllCase& c, CallStyle style,
                          const CallOptions& call = {}) {
  absl::Status status = f.harness->Prepare(c);
  if (!status.ok()) return status;
  if (call.protocol == Protocol::kOneTrip && !FitsOneTrip(*f.harness)) {
    status = f.runtime->AllToAll(c.Shape(), f.harness->AllBuffers(), call).status();
    if (status.code() != absl::StatusCode::kInvalidArgument) {
      return absl::InternalError(
          absl::StrCat("a one-trip call too large for the staging gave ", status.ToString()));
    }
    return f.runtime->status();
  }
  return RunCurrent(f, style, call);
}

// The protocols of the peer-store transport.
constexpr Protocol kProtocols[] = {Protocol::kDirect, Protocol::kOneTrip, Protocol::kCopyEngine};

std::string ProtocolTestName(Protocol protocol) {
  switch (protocol) {
    case Protocol::kOneTrip:
      return "OneTrip";
    case Protocol::kCopyEngine:
      return "CopyEngine";
    default:
      return "Direct";
  }
}

// How a test's calls travel: a protocol on a transport (any protocol takes the copy engines on
// the copy-engine transport).
struct Path {
  Protocol protocol = Protocol::kAuto;
  Transport transport = Transport::kPeerStores;
};
constexpr Path kPaths[] = {{Protocol::kDirect, Transport::kPeerStores},
                           {Protocol::kOneTrip, Transport::kPeerStores},
                           {Protocol::kCopyEngine, Transport::kPeerStores},
                           {Protocol::kAuto, Transport::kCopyEngine}};

std::string PathTestName(const Path& path) {
  return path.transport == Transport::kCopyEngine ? "CopyEngineTransport"
                                                  : ProtocolTestName(path.protocol);
}

// Head splits for `world` ranks, each with its sum of heads: uneven (heads not divisible by the
// world size for most sizes), one rank without heads (for two ranks or more: the middle rank,
// world / 2, so rank 0 always holds heads), and every head on the last rank.
std::vector<std::pair<int64_t, std::vector<int64_t>>> HeadSplits(int world) {
  std::vector<std::vector<int64_t>> splits;
  std::vector<int64_t> uneven;
  for (int rank = 0; rank < world; ++rank) uneven.push_back(1 + (2 * rank) % 3);
  splits.push_back(uneven);
  if (world > 1) {
    uneven[world / 2] = 0;
    splits.push_back(uneven);
  }
  std::vector<int64_t> last_only(world, 0);
  last_only[world - 1] = 3;
  splits.push_back(last_only);
  std::vector<std::pair<int64_t, std::vector<int64_t>>> with_heads;
  for (const std::vector<int64_t>& split : splits) {
    with_heads.push_back({std::accumulate(split.begin(), split.end(), int64_t{0}), split});
  }
  return with_heads;
}

// `heads` heads over `world` ranks: empty (the even split) where `world` divides them, else
// heads / world on every rank and one more on each of the first heads % world ranks.
std::vector<int64_t> NearlyEvenSplit(int64_t heads, int world) {
  std::vector<int64_t> split;
  if (heads % world == 0) return split;
  for (int rank = 0; rank < world; ++rank) split.push_back(heads / world + (rank < heads % world));
  return split;
}

// The even split of `even_heads` heads, then an uneven one (HeadSplits) with a rank without
// heads where there are two ranks.
std::vector<std::pair<int64_t, std::vector<int64_t>>> EvenThenUnevenSplits(int64_t even_heads,
                                                                         int world) {
  return {{even_heads, {}}, HeadSplits(world)[world > 1 ? 1 : 0]};
}

constexpr AllToAllDirection kDirections[] = {AllToAllDirection::kSeqToHeads,
                                             AllToAllDirection::kHeadsToSeq};

// Parameterized by call style and path.
class AllToAllMatrixTest : public ::testing::TestWithParam<std::tuple<CallStyle, Path>> {
 protected:
  void SetUp() override {
    if (UsesCopyEngines()) LTX_SKIP_WHERE_COPY_ENGINES_REFUSED(TestRankDevices(2));
  }
  bool UsesCopyEngines() const {
    const Path& path = std::get<1>(GetParam());
    return path.protocol == Protocol::kCopyEngine || path.transport == Transport::kCopyEngine;
  }
  CallStyle style() const { return std::get<0>(GetParam()); }
  CallOptions call() const {
    CallOptions options;
    options.protocol = std::get<1>(GetParam()).protocol;
    return options;
  }
  // A fixture on the layout's ranks (at least `min_ranks`) and the path's transport.
  AllToAllFixture Fixture(int min_ranks = 2) const {
    RuntimeOptions options;
    options.transport = std::get<1>(GetParam()).transport;
    return MakeFixture(TestRankDevices(min_ranks), options);
  }
};

TEST_P(AllToAllMatrixTest, EveryDtypeBothDirections) {
  LTX_REQUIRE_RANKS(2);
  AllToAllFixture f = Fixture();
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  for (AllToAllDirection direction : kDirections) {
    for (DataType dtype : kAllDataTypes) {
      AllToAllCase c;
      c.dtype = dtype;
      c.batch = 2;
      c.heads = 2 * world;
      c.head_dim = 64;
      c.token_counts = UnevenCounts(world, 5);
      c.direction = direction;
      const absl::Status status = RunAndVerify(f, c, style(), call());
      EXPECT_TRUE(status.ok()) << c.ToString() << ": " << status;
    }
  }
}

TEST_P(AllToAllMatrixTest, OddHeadDimsBatchesAndMisalignment) {
  LTX_REQUIRE_RANKS(2);
  AllToAllFixture f = Fixture();
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  for (AllToAllDirection direction : kDirections) {
    for (int64_t head_dim : {1, 3, 7, 64, 128, 129}) {
      for (int64_t batch : {1, 3}) {
        for (int misalignment : {0, 2, 5}) {
          AllToAllCase c;
          c.dtype = head_dim % 2 == 0 ? DataType::kBFloat16 : DataType::kFloat8E4M3;
          c.batch = batch;
          c.heads = world * (head_dim == 1 ? 3 : 1);
          c.head_dim = head_dim;
          c.token_counts = UnevenCounts(world, 7);
          c.direction = direction;
          c.input_misalignment = misalignment;
          c.output_misalignment = misalignment == 0 ? 0 : misalignment + 3;
          const absl::Status status = RunAndVerify(f, c, style(), call());
          EXPECT_TRUE(status.ok()) << c.ToString() << ": " << status;
        }
      }
    }
  }
}

TEST_P(AllToAllMatrixTest, UnevenAndZeroTokenCounts) {
  LTX_REQUIRE_RANKS(2);
  AllToAllFixture f = Fixture();
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  const std::vector<std::vector<int64_t>> patterns = ZeroTokenPatterns(world, 9, 333);
  for (AllToAllDirection direction : kDirections) {
    for (const auto& counts : patterns) {
      AllToAllCase c;
      c.dtype = DataType::kFloat16;
      c.batch = 3;
      c.heads = 4 * world;
      c.head_dim = 96;
      c.token_counts = counts;
      c.direction = direction;
      const absl::Status status = RunAndVerify(f, c, style(), call());
      EXPECT_TRUE(status.ok()) << c.ToString() << ": " << status;
    }
  }
}

TEST_P(AllToAllMatrixTest, UnevenAndZeroHeadSplits) {
  LTX_REQUIRE_RANKS(2);
  AllToAllFixture f = Fixture();
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  for (AllToAllDirection direction : kDirections) {
    for (const auto& [heads, split] : HeadSplits(world)) {
      for (int64_t head_dim : {3, 128}) {
        AllToAllCase c;
        c.dtype = head_dim == 3 ? DataType::kFloat8E4M3 : DataType::kBFloat16;
        c.batch = 2;
        c.heads = heads;
        c.head_dim = head_dim;
        c.token_counts = UnevenCounts(world, 13);
        c.direction = direction;
        c.head_counts = split;
        c.output_misalignment = head_dim == 3 ? 1 : 0;
        const absl::Status status = RunAndVerify(f, c, style(), call());
        EXPECT_TRUE(status.ok()) << c.ToString() << ": " << status;
      }
    }
  }
}

TEST_P(AllToAllMatrixTest, ModelShapes) {
  LTX_REQUIRE_RANKS(2);
  AllToAllFixture f = Fixture();
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  // Total tokens x 32 heads x head_dim, bf16, batch 1, tokens and heads split as evenly as
  // possible: the even split where the world size divides 32, else one head more on the first
  // 32 % world ranks (the largest is a quarter of 15360 x 32 x 128, to fit one GPU's buffers).
  for (const auto& [tokens, head_dim] :
       {std::pair<int64_t, int64_t>{1024, 128}, std::pair<int64_t, int64_t>{6144, 64},
        std::pair<int64_t, int64_t>{3840, 128}}) {
    for (AllToAllDirection direction : kDirections) {
      AllToAllCase c;
      c.heads = 32;
      c.head_dim = head_dim;
      for (int rank = 0; rank < world; ++rank) {
        c.token_counts.push_back(tokens / world + (rank < tokens % world ? 1 : 0));
      }
      c.direction = direction;
      c.head_counts = NearlyEvenSplit(c.heads, world);
      const absl::Status status = RunAndVerify(f, c, style(), call());
      EXPECT_TRUE(status.ok()) << c.ToString() << ": " << status;
    }
  }
}

// Sequence -> heads, then heads -> sequence on its output, returns the input byte-exact.
TEST_P(AllToAllMatrixTest, RoundTripReturnsTheInput) {
  LTX_REQUIRE_RANKS(2);
  AllToAllFixture f = Fixture();
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  for (AllToAllDirection direction : kDirections) {
    for (const auto& [heads, split] : EvenThenUnevenSplits(3 * world, world)) {
      AllToAllCase c;
      c.dtype = DataType::kFloat32;
      c.batch = 2;
      c.heads = heads;
      c.head_dim = 5;
      c.token_counts = UnevenCounts(world, 11);
      c.token_counts[0] = 0;
      c.direction = direction;
      c.head_counts = split;
      c.output_misalignment = 4;
      ASSERT_TRUE(RunAndVerify(f, c, style(), call()).ok()) << c.ToString();
      ASSERT_TRUE(f.harness->PrepareInverse().ok());
      const absl::Status status = RunCurrent(f, style(), call());
      EXPECT_TRUE(status.ok()) << "inverse of " << c.ToString() << ": " << status;
    }
  }
}

// Eight ranks (shared GPUs where there are fewer) with heads split {3,0,2,5,1,0,4,1}: ranks
// without heads in the middle, neither of them rank 0; token counts uneven with zeros (ranks 1
// and 4); both directions, odd and wide heads, batch 2, each op followed by its inverse, which
// must return the input byte-exact.
TEST_P(AllToAllMatrixTest, EightRanksWithUnevenHeadSplitsAndZeros) {
  LTX_REQUIRE_RANKS(8);
  if (UsesCopyEngines()) LTX_SKIP_WHERE_COPY_ENGINES_REFUSED(TestRankDevices(8));
  AllToAllFixture f = Fixture(8);
  ASSERT_NE(f.runtime, nullptr);
  const std::vector<int64_t> split = {3, 0, 2, 5, 1, 0, 4, 1};
  ASSERT_EQ(f.runtime->world_size(), static_cast<int>(split.size()));
  for (AllToAllDirection direction : kDirections) {
    for (int64_t head_dim : {3, 128}) {
      AllToAllCase c;
      c.dtype = head_dim == 3 ? DataType::kFloat8E4M3 : DataType::kBFloat16;
      c.batch = 2;
      c.heads = std::accumulate(split.begin(), split.end(), int64_t{0});
      c.head_counts = split;
      c.head_dim = head_dim;
      c.token_counts = {7, 0, 12, 5, 0, 9, 1, 20};
      c.direction = direction;
      c.output_misalignment = head_dim == 3 ? 1 : 0;
      const absl::Status status = RunAndVerify(f, c, style(), call());
      ASSERT_TRUE(status.ok()) << c.ToString() << ": " << status;
      ASSERT_TRUE(f.harness->PrepareInverse().ok());
      const absl::Status back = RunCurrent(f, style(), call());
      EXPECT_TRUE(back.ok()) << "inverse of " << c.ToString() << ": " << back;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    StylesAndPaths, AllToAllMatrixTest,
    ::testing::Combine(::testing::Values(CallStyle::kCoordinated, CallStyle::kPerRankThreads),
                       ::testing::ValuesIn(kPaths)),
    [](const ::testing::TestParamInfo<std::tuple<CallStyle, Path>>& info) {
      return absl::StrCat(
          std::get<0>(info.param) == CallStyle::kCoordinated ? "Coordinated" : "PerRankThreads",
          PathTestName(std::get<1>(info.param)));
    });

// Parameterized by protocol.
class AllToAllProtocolTest : public ::testing::TestWithParam<Protocol> {
 protected:
  void SetUp() override {
    if (GetParam() == Protocol::kCopyEngine) {
      LTX_SKIP_WHERE_COPY_ENGINES_REFUSED(TestRankDevices(3));
    }
  }
  CallOptions call() const {
    CallOptions options;
    options.protocol = GetParam();
    return options;
  }
};

TEST_P(AllToAllProtocolTest, WorldSizeOneIsACopy) {
  LTX_REQUIRE_RANKS(1);
  AllToAllFixture f = MakeFixture(TestDevices(1), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  for (AllToAllDirection direction : kDirections) {
    for (CallStyle style : {CallStyle::kCoordinated, CallStyle::kPerRankThreads}) {
      AllToAllCase c;
      c.batch = 2;
      c.heads = 3;
      c.head_dim = 7;
      c.token_counts = {50};
      c.direction = direction;
      const absl::Status status = RunAndVerify(f, c, style, call());
      EXPECT_TRUE(status.ok()) << c.ToString() << ": " << status;
    }
  }
}

// Every rank's per-rank call captured from its own thread (as the copy engines need), even and
// uneven head splits, batch 2: every replay byte-exact with new data.
TEST_P(AllToAllProtocolTest, CapturedCallsReplayWithNewData) {
  LTX_REQUIRE_RANKS(2);
  AllToAllFixture f = MakeFixture(TestRankDevices(2), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  for (const auto& [heads, split] : EvenThenUnevenSplits(2 * world, world)) {
    for (AllToAllDirection direction : kDirections) {
      AllToAllCase c;
      c.batch = 2;
      c.heads = heads;
      c.head_counts = split;
      c.head_dim = 128;
      c.token_counts = UnevenCounts(world, 40);
      c.direction = direction;
      SCOPED_TRACE(c.ToString());
      ASSERT_TRUE(f.harness->Prepare(c).ok());
      const std::vector<RankBuffers> buffers = f.harness->AllBuffers();
      CapturedRankCalls graphs;
      ASSERT_TRUE(graphs.CaptureAllToAll(*f.runtime, c.Shape(), buffers, call()).ok());
      for (int replay = 0; replay < 200; ++replay) {
        ASSERT_TRUE(f.harness->RefreshInputs().ok());
        ASSERT_TRUE(graphs.Replay(f.runtime->devices(), buffers).ok());
        const absl::Status status = f.harness->Verify();
        ASSERT_TRUE(status.ok()) << "replay " << replay << ": " << status;
      }
      // Eager calls interleave with the replays: the op numbers on the device stay in step.
      EXPECT_TRUE(RunCurrent(f, CallStyle::kPerRankThreads, call()).ok());
      ASSERT_TRUE(f.harness->RefreshInputs().ok());
      ASSERT_TRUE(graphs.Replay(f.runtime->devices(), buffers).ok());
      EXPECT_TRUE(f.harness->Verify().ok());
      EXPECT_TRUE(f.runtime->status().ok());
    }
  }
}

// The timed kernel of `protocol` (kDirect or kOneTrip; CallOptions::phase_timestamps) moves
// the data alike, over changing shapes in both directions from one thread per rank, and records
// every block of every op, each phase of `reached` from the block's start to its end; a
// coordinated call, which would hand one rank's buffer to every GPU, refuses timestamps. On at
// least `min_ranks` ranks of the layout; with `zeros`, batch 2, a rank without heads
// (HeadSplits) and the last rank without tokens.
template <typename Phase>
void ExpectTimedCallsRecordEveryBlock(Protocol protocol, const std::vector<Phase>& reached,
                                      int min_ranks = 2, bool zeros = false) {
  AllToAllFixture f = MakeFixture(TestRankDevices(min_ranks), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  constexpr int kBlocks = 3;
  constexpr int kOps = 4;
  absl::StatusOr<std::unique_ptr<PhaseRecordBuffers>> records =
      PhaseRecordBuffers::Create(f.runtime->devices(), kOps, kBlocks);
  ASSERT_TRUE(records.ok()) << records.status();
  std::vector<CallOptions> calls;
  for (int rank = 0; rank < world; ++rank) calls.push_back((*records)->TimedCall(rank, protocol));
  AllToAllCase c;
  for (int op = 0; op < kOps; ++op) {
    c.dtype = op % 2 == 0 ? DataType::kBFloat16 : DataType::kFloat32;
    c.heads = 2 * world;
    c.head_dim = 64;
    c.token_counts = UnevenCounts(world, 30 + op);
    c.direction = kDirections[op % 2];
    if (zeros) {
      c.batch = 2;
      std::tie(c.heads, c.head_counts) = HeadSplits(world)[1];
      c.token_counts[world - 1] = 0;
    }
    ASSERT_TRUE(f.harness->Prepare(c).ok());
    const absl::Status status = RunCurrentPerRank(*f.runtime, *f.harness, calls);
    ASSERT_TRUE(status.ok()) << "op " << op << " " << c.ToString() << ": " << status;
  }
  (*records)->ExpectEveryBlockRecorded(reached);
  EXPECT_EQ(f.runtime->AllToAll(c.Shape(), f.harness->AllBuffers(), calls[0]).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Every block of the direct kernel reaches every phase up to its stores' fence.
TEST(AllToAllTest, DirectTimestampsRecordEveryBlock) {
  LTX_REQUIRE_RANKS(2);
  ExpectTimedCallsRecordEveryBlock(
      Protocol::kDirect,
      std::vector<DirectPhase>{DirectPhase::kEntryPublished, DirectPhase::kTargetSeen,
                               DirectPhase::kFirstStore, DirectPhase::kStoresDone,
                               DirectPhase::kFenced});
}

// AllGathers (one-trip and direct) and all-to-alls alternate on one Runtime, in both call
// styles; every op is verified.
TEST(AllToAllTest, InterleavesWithAllGathersOnOneRuntime) {
  LTX_REQUIRE_RANKS(2);
  GpuFixture gather = MakeGpuFixture(TestRankDevices(2), OnPeerStores());
  ASSERT_NE(gather.runtime, nullptr);
  const int world = gather.runtime->world_size();
  auto harness = AllToAllHarness::Create(gather.runtime->devices(), kCapacity, kCapacity, 17);
  ASSERT_TRUE(harness.ok());
  for (int round = 0; round < 20; ++round) {
    const CallStyle style = round % 2 == 0 ? CallStyle::kCoordinated : CallStyle::kPerRankThreads;
    AllGatherCase g;
    g.hidden = round % 3 == 0 ? 64 : 4096;  // One-trip, then direct.
    g.token_counts = UnevenCounts(world, round);
    absl::Status status = RunAndVerify(gather, g, style);
    ASSERT_TRUE(status.ok()) << "round " << round << " " << g.ToString() << ": " << status;
    AllToAllCase c;
    c.heads = 2 * world;
    c.head_dim = 32 + round;
    c.token_counts = UnevenCounts(world, 3 + round);
    c.direction = kDirections[round % 2];
    status = (*harness)->Prepare(c);
    if (status.ok()) status = RunCurrent(*gather.runtime, **harness, style);
    ASSERT_TRUE(status.ok()) << "round " << round << " " << c.ToString() << ": " << status;
  }
}

// Ranks that pass different heads or head splits, or call an AllGather where others call an
// all-to-all, at the same op number and on the same protocol: InvalidArgument from the device
// (the entry announcements of the direct path, the header lines of the one-trip path) or from
// the rank that pairs them on the copy engines, no hang; Reset makes the Runtime usable.
TEST_P(AllToAllProtocolTest, RanksThatDisagreeGetInvalidArgument) {
  LTX_REQUIRE_RANKS(2);
  RuntimeOptions options = OnPeerStores();
  options.timeout = absl::Seconds(5);
  AllToAllFixture f = MakeFixture(TestRankDevices(2), options);
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  AllToAllCase c;
  c.heads = 4 * world;
  c.head_dim = 64;
  c.token_counts = UnevenCounts(world, 8);
  ASSERT_TRUE(f.harness->Prepare(c).ok());
  AllToAllShape fewer_heads = c.Shape();
  fewer_heads.heads = 2 * world;
  // The same heads, one moved from rank 0's group to rank 1's (rank 0's output shrinks, so it
  // stays inside the buffer whatever rank 0 writes).
  std::vector<int64_t> other_split(world, 4);
  other_split[0] = 3;
  other_split[1] = 5;
  AllToAllShape other_heads_split = c.Shape();
  other_heads_split.head_counts = other_split;
  AllGatherShape gather;
  gather.hidden = 64;
  gather.token_counts = c.token_counts;
  constexpr const char* kVariants[] = {"different heads", "different head splits",
                                       "AllGather against all-to-all"};
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE(kVariants[variant]);
    const absl::Status launched = RunOnRankThreads(world, [&](int rank) {
      if (rank != 0) {
        return f.runtime->AllToAllRank(rank, c.Shape(), f.harness->Buffers(rank), call());
      }
      if (variant == 2) return f.runtime->AllGatherRank(0, gather, f.harness->Buffers(0), call());
      return f.runtime->AllToAllRank(0, variant == 0 ? fewer_heads : other_heads_split,
                                     f.harness->Buffers(0), call());
    });
    // A rank whose call comes after a peer found the disagreement gets it at once (the copy
    // engines' pairing finds it on the host).
    EXPECT_TRUE(LaunchedOrRefusedForTheDisagreement(launched)) << launched;
    const absl::Status status = f.runtime->Synchronize(kTestWait);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    ASSERT_TRUE(f.runtime->Reset(kTestWait).ok());
    EXPECT_TRUE(RunAndVerify(f, c, CallStyle::kCoordinated, call()).ok());
  }
}

INSTANTIATE_TEST_SUITE_P(Protocols, AllToAllProtocolTest, ::testing::ValuesIn(kProtocols),
                         [](const ::testing::TestParamInfo<Protocol>& info) {
                           return ProtocolTestName(info.param);
                         });

// A one-trip call with a piece over the staging is refused alike on every rank, before any
// launch; the Runtime stays usable.
TEST(AllToAllTest, OneTripTooLargeForTheStagingIsInvalidArgument) {
  LTX_REQUIRE_RANKS(2);
  AllToAllFixture f = MakeFixture(TestRankDevices(2), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  AllToAllCase c;
  c.heads = 2 * world;
  c.head_dim = 128;
  // 2 heads of 256 bytes per token: 1025 tokens make a piece of just over 512 KiB.
  c.token_counts.assign(world, kOneTripMaxShardBytes / 512 + 1);
  ASSERT_TRUE(f.harness->Prepare(c).ok());
  ASSERT_FALSE(FitsOneTrip(*f.harness));
  CallOptions one_trip;
  one_trip.protocol = Protocol::kOneTrip;
  const absl::Status status =
      f.runtime->AllToAll(c.Shape(), f.harness->AllBuffers(), one_trip).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_TRUE(f.runtime->status().ok());
  // The automatic choice takes the direct kernel.
  EXPECT_TRUE(RunCurrent(f, CallStyle::kCoordinated).ok());
}

// The own piece travels beside the line stores: rank 0 holding most tokens makes its own piece
// (heads -> sequence) larger than any piece it sends. Early start (programmatic dependent
// launch) changes when blocks are scheduled, not what they store: back-to-back one-trip calls
// of changing shapes, rows that are not multiples of 8 bytes, misaligned buffers, both call
// styles, several block counts.
TEST(AllToAllTest, OneTripOwnPieceAndEarlyStartMoveAlike) {
  LTX_REQUIRE_RANKS(2);
  AllToAllFixture f = MakeFixture(TestRankDevices(2), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  for (bool early : {false, true}) {
    for (int blocks : {0, 1, 3}) {
      for (AllToAllDirection direction : kDirections) {
        for (int64_t head_dim : {3, 128}) {
          AllToAllCase c;
          c.dtype = DataType::kFloat16;
          c.batch = head_dim == 3 ? 2 : 1;
          c.heads = 2 * world;
          c.head_dim = head_dim;
          c.token_counts.assign(world, 2);
          c.token_counts[0] = 77;
          c.direction = direction;
          c.input_misalignment = head_dim == 3 ? 2 : 0;
          c.output_misalignment = head_dim == 3 ? 6 : 0;
          CallOptions call;
          call.protocol = Protocol::kOneTrip;
          call.blocks = blocks;
          call.early_start = early;
          for (CallStyle style : {CallStyle::kPerRankThreads, CallStyle::kCoordinated}) {
            const absl::Status status = RunAndVerify(f, c, style, call);
            EXPECT_TRUE(status.ok()) << c.ToString() << " blocks=" << blocks
                                     << " early=" << early << ": " << status;
          }
        }
      }
    }
  }
}

// Every block of the one-trip kernel sends, stores its own part and unpacks.
TEST(AllToAllTest, OneTripTimestampsRecordEveryBlock) {
  LTX_REQUIRE_RANKS(2);
  ExpectTimedCallsRecordEveryBlock(
      Protocol::kOneTrip, std::vector<OneTripPhase>{OneTripPhase::kSent, OneTripPhase::kOwnCopied,
                                                    OneTripPhase::kUnpacked});
}

// Three ranks or more on the one-trip path, where every sender packs a different piece for each
// of two or more peers: uneven head and token splits with a rank without heads (HeadSplits: the
// middle rank) and the last rank without tokens, batch 2, both directions, odd and wide heads,
// both call styles, byte-exact; and the timed kernel on such cases, every block of every op
// recording its sends, its own piece and its unpacking.
TEST(AllToAllTest, OneTripAmongThreeOrMoreRanks) {
  LTX_REQUIRE_RANKS(3);
  ExpectTimedCallsRecordEveryBlock(
      Protocol::kOneTrip,
      std::vector<OneTripPhase>{OneTripPhase::kSent, OneTripPhase::kOwnCopied,
                                OneTripPhase::kUnpacked},
      /*min_ranks=*/3, /*zeros=*/true);
  AllToAllFixture f = MakeFixture(TestRankDevices(3), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  CallOptions call;
  call.protocol = Protocol::kOneTrip;
  for (AllToAllDirection direction : kDirections) {
    for (int64_t head_dim : {3, 128}) {
      AllToAllCase c;
      c.dtype = head_dim == 3 ? DataType::kFloat8E4M3 : DataType::kBFloat16;
      c.batch = 2;
      std::tie(c.heads, c.head_counts) = HeadSplits(world)[1];
      c.head_dim = head_dim;
      c.token_counts = UnevenCounts(world, 6);
      c.token_counts[world - 1] = 0;
      c.direction = direction;
      ASSERT_TRUE(f.harness->Prepare(c).ok());
      ASSERT_TRUE(FitsOneTrip(*f.harness)) << c.ToString();
      for (CallStyle style : {CallStyle::kCoordinated, CallStyle::kPerRankThreads}) {
        const absl::Status status = RunAndVerify(f, c, style, call);
        EXPECT_TRUE(status.ok()) << c.ToString() << ": " << status;
      }
    }
  }
}

// Rounds of all-to-all ops of changing shapes (directions, dtypes, batches, token counts with
// zeros, head splits with a rank without heads) and paths, issued from one thread per rank
// without host synchronisation between the ops of a round; every op has buffers of its own with
// fresh random data, and each is checked byte-exact after its round.
TEST(AllToAllTest, ManyOpsOfChangingShapesWithoutHostSynchronisation) {
  LTX_REQUIRE_RANKS(2);
  constexpr int kOpsPerRound = 16;
  constexpr int kRounds = 8;
  constexpr int64_t kSlotCapacity = int64_t{1} << 20;
  AllToAllFixture f = MakeFixture(TestRankDevices(2), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  absl::StatusOr<HarnessRing<AllToAllHarness>> ring = HarnessRing<AllToAllHarness>::Create(
      f.runtime->devices(), kOpsPerRound, kSlotCapacity, kSlotCapacity, /*seed=*/5);
  ASSERT_TRUE(ring.ok()) << ring.status();
  const std::vector<std::pair<int64_t, std::vector<int64_t>>> splits = HeadSplits(world);
  // Where ranks share a GPU this long mixed run keeps to the kernels: a copy stream there may
  // share a hardware queue with a co-located rank's waiting kernel (kernels/PROTOCOL.md, "Ranks
  // that share a GPU"); the copy engines' own tests run them there.
  const int protocols = RanksShareGpus(f.runtime->devices()) ? 3 : 4;
  constexpr Protocol kAnyProtocol[] = {Protocol::kAuto, Protocol::kDirect, Protocol::kOneTrip,
                                       Protocol::kCopyEngine};
  std::mt19937_64 random(2024);
  for (int round = 0; round < kRounds; ++round) {
    std::vector<AllToAllCase> cases(kOpsPerRound);
    std::vector<CallOptions> calls(kOpsPerRound);
    for (int op = 0; op < kOpsPerRound; ++op) {
      AllToAllCase& c = cases[op];
      c.dtype = random() % 2 ? DataType::kBFloat16 : DataType::kFloat32;
      c.batch = 1 + random() % 2;
      const auto& [heads, split] = splits[random() % splits.size()];
      c.heads = heads;
      c.head_counts = split;
      c.head_dim = 8 + random() % 57;
      for (int rank = 0; rank < world; ++rank) {
        c.token_counts.push_back(random() % 4 == 0 ? 0 : 1 + random() % 16);
      }
      c.direction = kDirections[random() % 2];
      calls[op].protocol = kAnyProtocol[random() % protocols];
      ASSERT_TRUE(ring->slot(op).Prepare(c).ok()) << c.ToString();
    }
    absl::Status status = RunOnRankThreads(world, [&](int rank) {
      for (int op = 0; op < kOpsPerRound; ++op) {
        const absl::Status called = f.runtime->AllToAllRank(rank, cases[op].Shape(),
                                                            ring->Buffers(op, rank), calls[op]);
        if (!called.ok()) return called;
      }
      return absl::OkStatus();
    });
    if (status.ok()) status = f.runtime->Synchronize(kTestWait);
    ASSERT_TRUE(status.ok()) << "round " << round << ": " << status;
    for (int op = 0; op < kOpsPerRound; ++op) {
      const absl::Status verified = ring->Verify(op);
      ASSERT_TRUE(verified.ok()) << "round " << round << ", op " << op << " "
                                 << ProtocolName(calls[op].protocol) << ": " << verified;
    }
  }
}

TEST(AllToAllTest, RejectsBadArgumentsBeforeLaunching) {
  LTX_REQUIRE_RANKS(2);
  AllToAllFixture f = MakeFixture(TestRankDevices(2), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  AllToAllCase c;
  c.heads = world;
  c.head_dim = 8;
  c.token_counts = UnevenCounts(world, 2);
  ASSERT_TRUE(f.harness->Prepare(c).ok());
  AllToAllShape bad = c.Shape();
  bad.heads = 2 * world + 1;
  if (world > 1) {
    EXPECT_EQ(f.runtime->AllToAll(bad, f.harness->AllBuffers()).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
  std::vector<RankBuffers> buffers = f.harness->AllBuffers();
  buffers[0].output = nullptr;
  EXPECT_EQ(f.runtime->AllToAll(c.Shape(), buffers).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(f.runtime->status().ok());
  EXPECT_TRUE(RunAndVerify(f, c, CallStyle::kCoordinated).ok());
}

}  // namespace
}  // namespace ltx
