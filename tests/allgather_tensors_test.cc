// GPU tests of AllGathers that move several tensors of one shape in one op
// (AllGatherShape::tensors) on the shared fixture (tests/tensors_fixture.h): every tensor's
// random input gathered byte-exact into its poisoned outputs on every rank; uneven and zero
// token counts, batch > 1, odd rows on misaligned buffers, inputs in place in their own outputs,
// 2 to kMaxTensors tensors, coordinated and per-rank calls on the direct kernel
// (Protocol::kAuto and kDirect); the one-trip and copy-engine paths refused with Unimplemented
// (the Runtime usable after a coordinated call, stopped until Reset after per-rank ones); ranks
// that pass different tensor counts get InvalidArgument, and Reset makes the Runtime usable. The
// ranks come from the layout switch
// (tools/testing/test_ranks.h), at least two of them.
#include <cstdint>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ltx/runtime.h"
#include "tests/tensors_fixture.h"
#include "tools/testing/allgather_harness.h"
#include "tools/testing/gpu_fixture.h"
#include "tools/testing/token_counts.h"

namespace ltx {
namespace {

constexpr int64_t kCapacity = int64_t{4} << 20;

// The cases of `world` ranks: uneven token counts with batch 1 and 3, token counts with zeros,
// odd rows of bytes on misaligned buffers, and inputs in place in their outputs.
std::vector<AllGatherCase> CasesFor(int world) {
  std::vector<AllGatherCase> cases;
  AllGatherCase c;
  c.hidden = 512;
  for (int64_t batch : {1, 3}) {
    c.batch = batch;
    c.token_counts = UnevenCounts(world, 5);
    cases.push_back(c);
  }
  c.batch = 2;
  for (const std::vector<int64_t>& counts : ZeroTokenPatterns(world, 3, 9)) {
    c.token_counts = counts;
    cases.push_back(c);
  }
  AllGatherCase odd;
  odd.dtype = DataType::kUint8;
  odd.batch = 2;
  odd.hidden = 7;
  odd.token_counts = UnevenCounts(world, 2);
  odd.input_misalignment = 3;
  odd.output_misalignment = 5;
  cases.push_back(odd);
  AllGatherCase in_place;
  in_place.hidden = 256;
  in_place.token_counts = UnevenCounts(world, 4);
  in_place.in_place = true;
  cases.push_back(in_place);
  return cases;
}

class AllGatherTensorsTest : public ::testing::TestWithParam<std::tuple<CallStyle, Protocol>> {};

TEST_P(AllGatherTensorsTest, EveryTensorArrivesByteExactOnEveryRank) {
  LTX_REQUIRE_RANKS(2);
  ExpectEveryTensorByteExact<AllGatherCalls>(CasesFor(TestRankDevices(2).size()), kCapacity,
                                             std::get<0>(GetParam()), std::get<1>(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(StylesAndProtocols, AllGatherTensorsTest,
                         ::testing::Combine(::testing::Values(CallStyle::kCoordinated,
                                                              CallStyle::kPerRankThreads),
                                            ::testing::Values(Protocol::kAuto, Protocol::kDirect)),
                         StyleAndProtocolName);

// The one-trip kernel and the copy engines refuse several tensors alike on every rank
// (Unimplemented): a coordinated call leaves the Runtime usable, per-rank calls stop it.
TEST(AllGatherTensorsRefusalTest, OneTripAndCopyEnginesAreUnimplementedAlikeOnEveryRank) {
  LTX_REQUIRE_RANKS(2);
  ExpectRefusedPathsUnimplemented<AllGatherCalls>(CasesFor(TestRankDevices(2).size()).front(),
                                                  kCapacity);
}

// Ranks that pass different tensor counts get InvalidArgument; Reset makes the Runtime usable.
TEST(AllGatherTensorsDisagreementTest, RanksWithDifferentTensorCountsGetInvalidArgument) {
  LTX_REQUIRE_RANKS(2);
  ExpectDisagreeingCountsInvalid<AllGatherCalls>(CasesFor(TestRankDevices(2).size()).front(),
                                                 kCapacity);
}

}  // namespace
}  // namespace ltx
