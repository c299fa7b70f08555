// Tests of the reductions' bandwidths (tools/ltx_allreduce/reduce_bandwidth.h): nccl-tests'
// bus bandwidth factors, 2(n-1)/n for the AllReduce and (n-1)/n for the ReduceScatter, and
// algorithm bandwidth as input bytes per rank over the time.
#include "tools/ltx_allreduce/reduce_bandwidth.h"

#include "gtest/gtest.h"

namespace ltx {
namespace {

TEST(ReduceBandwidthTest, BusFactorsAreThoseOfNcclTests) {
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kReduceScatter, 2), 0.5);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllReduceRmsNorm, 4), 1.5);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllReduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kReduceScatter, 1), 0.0);
}

TEST(ReduceBandwidthTest, AlgorithmBandwidthIsInputBytesPerRankOverTime) {
  // 256 MB per rank in 1000 us: 268.435456 GB/s.
  const ReduceBandwidth all_reduce =
      ReduceBandwidthOf(Collective::kAllReduce, 4, 268435456.0, 1000.0);
  EXPECT_DOUBLE_EQ(all_reduce.algbw, 268.435456);
  EXPECT_DOUBLE_EQ(all_reduce.busbw, 268.435456 * 1.5);
  const ReduceBandwidth scatter = ReduceBandwidthOf(Collective::kReduceScatter, 2, 8192.0, 4.0);
  EXPECT_DOUBLE_EQ(scatter.algbw, 2.048);
  EXPECT_DOUBLE_EQ(scatter.busbw, 1.024);
}

TEST(ReduceBandwidthTest, NothingMeasuredIsMinusOne) {
  const ReduceBandwidth none = ReduceBandwidthOf(Collective::kAllReduce, 2, 8192.0, -1);
  EXPECT_EQ(none.algbw, -1);
  EXPECT_EQ(none.busbw, -1);
}

}  // namespace
}  // namespace ltx
