// Tests of ltx_allgather's settings from flag values (tools/ltx_allgather/tool_config.h): every
// bad value is InvalidArgument naming its flag, and good values land where they belong.
#include "tools/ltx_allgather/tool_config.h"

#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/flags/byte_size.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;

TEST(ParseBytesTest, SuffixesAndRejections) {
  EXPECT_EQ(ParseBytes("4096").value(), 4096);
  EXPECT_EQ(ParseBytes("16K").value(), 16 << 10);
  EXPECT_EQ(ParseBytes("4m").value(), 4 << 20);
  EXPECT_EQ(ParseBytes("1G").value(), int64_t{1} << 30);
  for (const char* bad : {"", "K", "0", "-1K", "12Q", "1.5M", "99999999999G"}) {
    EXPECT_EQ(ParseBytes(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(ParseDevicesTest, ListsAndRejections) {
  EXPECT_EQ(ParseDevices("").value(), std::vector<int>{});
  EXPECT_EQ(ParseDevices("3,1").value(), (std::vector<int>{3, 1}));
  EXPECT_EQ(ParseDevices("a").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseDevices("-1").status().code(), absl::StatusCode::kInvalidArgument);
}

// The message of MakeToolConfig's error for `flags`, which must be InvalidArgument.
std::string ErrorOf(const FlagValues& flags) {
  const absl::StatusOr<ToolConfig> config = MakeToolConfig(flags);
  EXPECT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(config.status().message());
}

TEST(MakeToolConfigTest, DefaultsMakeASmokeRunOverEveryGpuAndDtype) {
  const absl::StatusOr<ToolConfig> config = MakeToolConfig(FlagValues());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->mode, ToolMode::kSmoke);
  EXPECT_TRUE(config->smoke.runtime.devices.empty());
  EXPECT_FALSE(config->smoke.dtype.has_value());
  EXPECT_EQ(config->smoke.call.protocol, Protocol::kAuto);
  EXPECT_EQ(config->smoke.host_wait, kHostWaitFactor * RuntimeOptions().timeout);
}

TEST(MakeToolConfigTest, SmokeTakesDtypeProtocolBlocksGpusAndTimeout) {
  FlagValues flags;
  flags.dtype = "fp8_e5m2";
  flags.protocol = "one_trip";
  flags.blocks = 8;
  flags.gpus = 2;
  flags.timeout = absl::Seconds(2);
  const absl::StatusOr<ToolConfig> config = MakeToolConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->smoke.dtype, DataType::kFloat8E5M2);
  EXPECT_EQ(config->smoke.call.protocol, Protocol::kOneTrip);
  EXPECT_EQ(config->smoke.call.blocks, 8);
  EXPECT_EQ(config->smoke.runtime.devices, (std::vector<int>{0, 1}));
  EXPECT_EQ(config->smoke.runtime.timeout, absl::Seconds(2));
  EXPECT_EQ(config->smoke.host_wait, absl::Seconds(6));
}

TEST(MakeToolConfigTest, BenchTakesItsSweep) {
  FlagValues flags;
  flags.bench = true;
  flags.min_bytes = "8K";
  flags.max_bytes = "4M";
  flags.step_factor = 2;
  flags.iters = 7;
  flags.warmup = 3;
  flags.style = "graph";
  flags.check = false;
  flags.devices = "3,1";
  const absl::StatusOr<ToolConfig> config = MakeToolConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  const BenchConfig& bench = config->bench_config;
  EXPECT_EQ(config->mode, ToolMode::kBench);
  EXPECT_EQ(bench.min_bytes, 8 << 10);
  EXPECT_EQ(bench.max_bytes, 4 << 20);
  EXPECT_EQ(bench.factor, 2);
  EXPECT_EQ(bench.timing.iterations, 7);
  EXPECT_EQ(bench.timing.warmup, 3);
  EXPECT_EQ(bench.style, BenchStyle::kGraph);
  EXPECT_EQ(bench.dtype, DataType::kBFloat16);
  EXPECT_FALSE(bench.check);
  EXPECT_EQ(bench.runtime.devices, (std::vector<int>{3, 1}));
}

// --wire: native by default, fp8_e4m3 for bf16 and fp16 rows of at least 8 elements, one
// tensor, not in place, on auto or direct; refused otherwise, and outside --bench.
TEST(MakeToolConfigTest, BenchTakesTheWireFormat) {
  FlagValues flags;
  flags.bench = true;
  EXPECT_EQ(MakeToolConfig(flags)->bench_config.wire, WireFormat::kNative);
  flags.wire = "fp8_e4m3";
  const absl::StatusOr<ToolConfig> config = MakeToolConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->bench_config.wire, WireFormat::kFp8E4M3);
  flags.dtype = "fp16";
  EXPECT_TRUE(MakeToolConfig(flags).ok());
  auto refused = [](const FlagValues& bad, const char* what) {
    const absl::Status status = MakeToolConfig(bad).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << what << ": " << status;
    EXPECT_NE(std::string(status.message()).find("--wire"), std::string::npos) << status;
  };
  FlagValues bad = flags;
  bad.dtype = "fp32";
  refused(bad, "fp32");
  bad = flags;
  bad.hidden = 7;
  refused(bad, "hidden 7");
  bad = flags;
  bad.in_place = true;
  refused(bad, "in place");
  bad = flags;
  bad.tensors = 3;
  refused(bad, "3 tensors");
  bad = flags;
  bad.protocol = "one_trip";
  refused(bad, "one-trip");
  bad = flags;
  bad.wire = "fp4";
  refused(bad, "fp4");
  bad = flags;
  bad.bench = false;
  refused(bad, "smoke run");
}

TEST(MakeToolConfigTest, GraphReplaysOfCopyEngineCallsOnThePeerStoreTransport) {
  FlagValues flags;
  flags.bench = true;
  flags.style = "graph";
  flags.protocol = "copy_engine";
  const absl::StatusOr<ToolConfig> config = MakeToolConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->bench_config.style, BenchStyle::kGraph);
  EXPECT_EQ(config->bench_config.call.protocol, Protocol::kCopyEngine);
}

TEST(MakeToolConfigTest, BadValuesNameTheirFlag) {
  FlagValues flags;
  flags.dtype = "fp128";
  EXPECT_THAT(ErrorOf(flags), HasSubstr("-d/--dtype: unknown dtype 'fp128'"));
  flags = FlagValues();
  flags.protocol = "ll";
  EXPECT_THAT(ErrorOf(flags), HasSubstr("--protocol: unknown protocol 'll'; expected one of"));
  flags = FlagValues();
  flags.transport = "ib";
  EXPECT_THAT(ErrorOf(flags), HasSubstr("--transport: unknown transport 'ib'"));
  flags = FlagValues();
  flags.gpus = 2;
  flags.devices = "0,1";
  EXPECT_THAT(ErrorOf(flags), HasSubstr("not both"));
  flags = FlagValues();
  flags.blocks = -1;
  EXPECT_THAT(ErrorOf(flags), HasSubstr("--blocks"));
  flags = FlagValues();
  flags.timeout = absl::ZeroDuration();
  EXPECT_THAT(ErrorOf(flags), HasSubstr("--timeout"));
  flags = FlagValues();
  flags.one_trip_max_bytes = 1 << 20;
  EXPECT_THAT(ErrorOf(flags), HasSubstr("--one_trip_max_bytes"));
}

// The smoke run refuses the benchmark's flags (it reads none of them); with --bench their
// values are checked.
TEST(MakeToolConfigTest, BenchFlagsAreRefusedBySmokeRunAndCheckedByBench) {
  FlagValues flags;
  flags.min_bytes = "lots";
  flags.style = "fast";
  EXPECT_THAT(ErrorOf(flags), HasSubstr("-b/--min_bytes: only --bench takes it"));
  flags.min_bytes.clear();
  EXPECT_THAT(ErrorOf(flags), HasSubstr("--style: only --bench takes it"));
  flags.style = "rank";
  for (auto set : std::vector<std::function<void(FlagValues&)>>{
           [](FlagValues& f) { f.json = "out.json"; }, [](FlagValues& f) { f.hidden = 64; },
           [](FlagValues& f) { f.split = "uneven"; }, [](FlagValues& f) { f.in_place = true; },
           [](FlagValues& f) { f.iters = 7; }, [](FlagValues& f) { f.step_factor = 2; }}) {
    FlagValues bench_only = flags;
    set(bench_only);
    EXPECT_THAT(ErrorOf(bench_only), HasSubstr("only --bench takes it"));
  }
  EXPECT_TRUE(MakeToolConfig(flags).ok());
  flags.min_bytes = "lots";
  flags.style = "fast";
  flags.bench = true;
  EXPECT_THAT(ErrorOf(flags), HasSubstr("-b/--min_bytes: 'lots' is not a byte size"));
  flags.min_bytes = "1M";
  flags.max_bytes = "1K";
  flags.style = "rank";
  EXPECT_THAT(ErrorOf(flags), HasSubstr("-b"));
  flags.max_bytes = "1G";
  flags.style = "fast";
  EXPECT_THAT(ErrorOf(flags), HasSubstr("--style: unknown style 'fast'"));
  flags.style = "graph";
  flags.transport = "copy_engine";
  EXPECT_THAT(ErrorOf(flags), HasSubstr("--style=graph"));
}

TEST(MakeToolConfigTest, BenchSmallestSizeDefaultsTo32K) {
  FlagValues flags;
  flags.bench = true;
  const absl::StatusOr<ToolConfig> config = MakeToolConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->bench_config.min_bytes, 32 << 10);
}

TEST(MakeToolConfigTest, OverlapDefaultsCompareEveryStyleAt64MPerRank) {
  FlagValues flags;
  flags.overlap = true;
  const absl::StatusOr<ToolConfig> config = MakeToolConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->mode, ToolMode::kOverlap);
  const OverlapConfig& overlap = config->overlap_config;
  EXPECT_EQ(overlap.per_rank_bytes, int64_t{64} << 20);
  EXPECT_EQ(overlap.gemm.m, 8192);
  EXPECT_EQ(overlap.gemm.n, 8192);
  EXPECT_EQ(overlap.gemm.k, 8192);
  EXPECT_EQ(overlap.styles,
            (std::vector<OverlapStyle>{OverlapStyle::kSm, OverlapStyle::kSmBudget,
                                       OverlapStyle::kCopyEngine, OverlapStyle::kNccl}));
  EXPECT_EQ(overlap.block_budget, kDefaultBlockBudget);
  EXPECT_EQ(overlap.dtype, DataType::kBFloat16);
  EXPECT_EQ(overlap.runtime.max_blocks, 0);
  EXPECT_EQ(OverlapTokensPerRank(overlap), (int64_t{64} << 20) / (4096 * 2));
}

TEST(MakeToolConfigTest, BreakdownTimesOneTripAt8KPerRankOverBlockCounts) {
  FlagValues flags;
  flags.breakdown = true;
  absl::StatusOr<ToolConfig> config = MakeToolConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->mode, ToolMode::kBreakdown);
  EXPECT_EQ(config->breakdown.per_rank_bytes, 8 << 10);
  EXPECT_EQ(config->breakdown.protocol, Protocol::kOneTrip);
  EXPECT_EQ(config->breakdown.blocks, (std::vector<int>{0, 1, 2, 4}));
  flags.min_bytes = "32K";
  flags.breakdown_blocks = "1,8";
  flags.protocol = "one_trip";
  flags.max_blocks = 16;
  config = MakeToolConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->breakdown.per_rank_bytes, 32 << 10);
  EXPECT_EQ(config->breakdown.blocks, (std::vector<int>{1, 8}));
  EXPECT_EQ(config->breakdown.runtime.max_blocks, 16);
}

// --protocol=direct times the direct kernel at any size; auto takes it above the one-trip limit.
TEST(MakeToolConfigTest, BreakdownTimesDirectWhenAskedOrTooLargeForOneTrip) {
  FlagValues flags;
  flags.breakdown = true;
  flags.protocol = "direct";
  absl::StatusOr<ToolConfig> config = MakeToolConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->breakdown.protocol, Protocol::kDirect);
  EXPECT_EQ(config->breakdown.per_rank_bytes, 8 << 10);
  flags.min_bytes = "4M";
  config = MakeToolConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->breakdown.per_rank_bytes, 4 << 20);
  flags.protocol = "auto";
  config = MakeToolConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->breakdown.protocol, Protocol::kDirect);
  flags.min_bytes = "512K";
  config = MakeToolConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->breakdown.protocol, Protocol::kOneTrip);
}

TEST(MakeToolConfigTest, BadBreakdownValuesNameTheirFlag) {
  FlagValues flags;
  flags.breakdown = true;
  flags.bench = true;
  EXPECT_THAT(ErrorOf(flags), HasSubstr("--breakdown, --bench and --overlap"));
  flags.bench = false;
  flags.breakdown_blocks = "1,x";
  EXPECT_THAT(ErrorOf(flags), HasSubstr("--breakdown_blocks: 'x'"));
  flags.breakdown_blocks = "1";
  flags.blocks = 2;
  EXPECT_THAT(ErrorOf(flags), HasSubstr("--breakdown_blocks lists"));
  flags.blocks = 0;
  flags.protocol = "copy_engine";
  EXPECT_THAT(ErrorOf(flags), HasSubstr("--protocol as auto, one_trip or direct"));
  flags.protocol = "one_trip";
  flags.min_bytes = "1M";
  EXPECT_THAT(ErrorOf(flags), HasSubstr("-b 1048576"));
  flags.protocol = "direct";
  flags.min_bytes = "2G";
  EXPECT_THAT(ErrorOf(flags), HasSubstr("the direct kernel"));
}

TEST(MakeToolConfigTest, OverlapTakesSizeGemmStylesBudgetAndLibraries) {
  FlagValues flags;
  flags.overlap = true;
  flags.min_bytes = "16M";
  flags.gemm = "4096,2048,1024";
  flags.overlap_styles = "copy_engine,sm_budget";
  flags.max_blocks = 8;
  flags.iters = 10;
  flags.gpus = 2;
  flags.dtype = "fp16";
  flags.cublas = "/opt/libcublas.so.13";
  flags.nccl = "";
  const absl::StatusOr<ToolConfig> config = MakeToolConfig(flags);
  ASSERT_TRUE(config.ok()) << config.status();
  const OverlapConfig& overlap = config->overlap_config;
  EXPECT_EQ(overlap.per_rank_bytes, 16 << 20);
  EXPECT_EQ(overlap.gemm.m, 4096);
  EXPECT_EQ(overlap.gemm.n, 2048);
  EXPECT_EQ(overlap.gemm.k, 1024);
  EXPECT_DOUBLE_EQ(overlap.gemm.Flops(), 2.0 * 4096 * 2048 * 1024);
  EXPECT_EQ(overlap.styles,
            (std::vector<OverlapStyle>{OverlapStyle::kCopyEngine, OverlapStyle::kSmBudget}));
  EXPECT_EQ(overlap.block_budget, 8);
  EXPECT_EQ(overlap.runtime.max_blocks, 0);  // The budget applies to the sm_budget style only.
  EXPECT_EQ(overlap.timing.iterations, 10);
  EXPECT_EQ(overlap.dtype, DataType::kFloat16);
  EXPECT_EQ(overlap.runtime.devices, (std::vector<int>{0, 1}));
  EXPECT_EQ(overlap.cublas_path, "/opt/libcublas.so.13");
  EXPECT_EQ(overlap.nccl_path, "");
}

TEST(MakeToolConfigTest, BadOverlapValuesNameTheirFlag) {
  FlagValues flags;
  flags.overlap = true;
  flags.bench = true;
  EXPECT_THAT(ErrorOf(flags), HasSubstr("--bench and --overlap"));
  flags.bench = false;
  for (const char* bad : {"8192,8192", "8192,0,8192", "a,b,c", "1,2,3,4", "4294967296,1,1"}) {
    flags.gemm = bad;
    EXPECT_THAT(ErrorOf(flags), HasSubstr("--gemm: '")) << bad;
  }
  flags.gemm = "1024,1024,1024";
  for (const char* bad : {"", "sm,warp", "sm,sm", ","}) {
    flags.overlap_styles = bad;
    EXPECT_THAT(ErrorOf(flags), HasSubstr("--overlap_styles")) << bad;
  }
  flags.overlap_styles = "sm";
  flags.min_bytes = "4K";  // Below one row of 4096 bf16.
  EXPECT_THAT(ErrorOf(flags), HasSubstr("at least one token row"));
  flags.min_bytes = "64M";
  flags.protocol = "direct";
  EXPECT_THAT(ErrorOf(flags), HasSubstr("--overlap: each style picks"));
  flags.protocol = "auto";
  flags.blocks = 4;
  EXPECT_THAT(ErrorOf(flags), HasSubstr("--overlap: each style picks"));
  flags.blocks = 0;
  flags.transport = "copy_engine";
  EXPECT_THAT(ErrorOf(flags), HasSubstr("--overlap: each style picks"));
  flags.transport = "auto";
  flags.json = "out.json";
  EXPECT_THAT(ErrorOf(flags), HasSubstr("leave --json and --split alone"));
  flags.json = "";
  flags.split = "zeros";
  EXPECT_THAT(ErrorOf(flags), HasSubstr("leave --json and --split alone"));
  flags.split = "even";
  flags.iters = 0;
  EXPECT_THAT(ErrorOf(flags), HasSubstr("-n >= 1"));
  flags.iters = 5;
  flags.max_blocks = -1;
  EXPECT_THAT(ErrorOf(flags), HasSubstr("--max_blocks"));
}

TEST(ParseOverlapStylesTest, NamesRoundTrip) {
  for (OverlapStyle style : {OverlapStyle::kSm, OverlapStyle::kSmBudget, OverlapStyle::kCopyEngine,
                             OverlapStyle::kNccl}) {
    const absl::StatusOr<std::vector<OverlapStyle>> parsed =
        ParseOverlapStyles(OverlapStyleName(style));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, std::vector<OverlapStyle>{style});
  }
}

}  // namespace
}  // namespace ltx
