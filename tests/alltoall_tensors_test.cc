// GPU tests of all-to-alls that move several tensors of one shape in one op
// (AllToAllShape::tensors: Q, K and V) on the shared fixture (tests/tensors_fixture.h): every
// tensor byte-exact on every rank after each call; both directions, uneven and zero token
// counts, uneven head splits with a rank without heads, odd head_dim and misaligned buffers,
// FP8 on the wire, 2 to kMaxTensors tensors, coordinated and per-rank calls on the direct
// kernel (Protocol::kAuto and kDirect); the one-trip and copy-engine paths refused with
// Unimplemented (the Runtime usable after a coordinated call, stopped until Reset after per-rank
// ones); ranks that pass different tensor counts get
// InvalidArgument, and Reset makes the Runtime usable. The ranks come from the layout switch
// (tools/testing/test_ranks.h), at least two of them.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ltx/runtime.h"
#include "tests/tensors_fixture.h"
#include "tools/testing/alltoall_harness.h"
#include "tools/testing/gpu_fixture.h"
#include "tools/testing/token_counts.h"

namespace ltx {
namespace {

constexpr int64_t kCapacity = int64_t{4} << 20;

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
    // Q, K and V with FP8 on the wire: each tensor's head vectors from peers decoded, its own
    // piece exact; an uneven split with a rank without heads, misaligned by whole elements.
    AllToAllCase fp8 = c;
    fp8.wire = WireFormat::kFp8E4M3;
    fp8.input_misalignment = 2;
    fp8.output_misalignment = 4;
    cases.push_back(fp8);
  }
  return cases;
}

class AllToAllTensorsTest : public ::testing::TestWithParam<std::tuple<CallStyle, Protocol>> {};

TEST_P(AllToAllTensorsTest, EveryTensorArrivesByteExactOnEveryRank) {
  LTX_REQUIRE_RANKS(2);
  ExpectEveryTensorByteExact<AllToAllCalls>(CasesFor(TestRankDevices(2).size()), kCapacity,
                                            std::get<0>(GetParam()), std::get<1>(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(StylesAndProtocols, AllToAllTensorsTest,
                         ::testing::Combine(::testing::Values(CallStyle::kCoordinated,
                                                              CallStyle::kPerRankThreads),
                                            ::testing::Values(Protocol::kAuto, Protocol::kDirect)),
                         StyleAndProtocolName);

// The one-trip kernel and the copy engines refuse several tensors alike on every rank
// (Unimplemented): a coordinated call leaves the Runtime usable, per-rank calls stop it.
TEST(AllToAllTensorsRefusalTest, OneTripAndCopyEnginesAreUnimplementedAlikeOnEveryRank) {
  LTX_REQUIRE_RANKS(2);
  ExpectRefusedPathsUnimplemented<AllToAllCalls>(CasesFor(TestRankDevices(2).size()).front(),
                                                 kCapacity);
}

// Ranks that pass different tensor counts get InvalidArgument; Reset makes the Runtime usable.
TEST(AllToAllTensorsDisagreementTest, RanksWithDifferentTensorCountsGetInvalidArgument) {
  LTX_REQUIRE_RANKS(2);
  ExpectDisagreeingCountsInvalid<AllToAllCalls>(CasesFor(TestRankDevices(2).size()).front(),
                                                kCapacity);
}

}  // namespace
}  // namespace ltx
