// Tests of ltx_alltoall's command line (tools/ltx_alltoall/alltoall_flags.h) and settings
// (alltoall_config.h): argument vectors in, the run's settings or one line and its exit code
// out, with no GPU; and the checks and shapes that need the world size.
#include "tools/ltx_alltoall/alltoall_flags.h"

#include <string>
#include <vector>

#include "absl/flags/reflection.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/command_line_error.h"
#include "tools/ltx_alltoall/alltoall_config.h"

namespace ltx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The outcome of `args` after the program name; `config` receives the settings.
CommandLineOutcome Parse(std::vector<std::string> args, AllToAllToolConfig* config) {
  absl::FlagSaver saver;
  args.insert(args.begin(), "ltx_alltoall");
  return ParseAllToAllCommandLine(args, config);
}

// The settings of `args`, which must be accepted.
AllToAllToolConfig ConfigOf(const std::vector<std::string>& args) {
  AllToAllToolConfig config;
  const CommandLineOutcome outcome = Parse(args, &config);
  EXPECT_LT(outcome.exit_code, 0) << outcome.text;
  return config;
}

// The one line `args` are refused with (exit 2), or "" when they are accepted.
std::string ErrorOf(const std::vector<std::string>& args) {
  AllToAllToolConfig config;
  return OneLineError(Parse(args, &config), "ltx_alltoall");
}

TEST(AllToAllCommandLineTest, HelpListsEveryFlagInShortAndLongFormsAndExitsZero) {
  for (const char* help : {"-h", "--help"}) {
    AllToAllToolConfig config;
    const CommandLineOutcome outcome = Parse({"--bench", help}, &config);
    EXPECT_EQ(outcome.exit_code, kExitOk);
    for (const char* flag :
         {"-b, --min_bytes", "-e, --max_bytes", "-f, --step_factor", "-n, --iters",
          "-w, --warmup", "-d, --dtype", "-g, --gpus", "--devices", "--smoke", "--bench",
          "--breakdown", "--breakdown_blocks", "--heads", "--head_dim", "--head_counts",
          "--direction", "--protocol", "--blocks", "--max_blocks", "--windows", "--nccl",
          "--transport", "--style", "--json", "--tensors", "--wire"}) {
      EXPECT_THAT(outcome.text, HasSubstr(flag));
    }
    EXPECT_THAT(outcome.text, HasSubstr("output bytes per rank"));
  }
}

TEST(AllToAllCommandLineTest, DefaultsAreTheSmokeRunOnEveryGpu) {
  const AllToAllToolConfig config = ConfigOf({});
  EXPECT_TRUE(config.smoke);
  EXPECT_FALSE(config.bench);
  EXPECT_FALSE(config.breakdown);
  EXPECT_TRUE(config.devices.empty());
  EXPECT_THAT(config.directions,
              ElementsAre(AllToAllDirection::kSeqToHeads, AllToAllDirection::kHeadsToSeq));
}

TEST(AllToAllCommandLineTest, ShortFlagsMakeASweepOfOutputBytesPerRank) {
  const AllToAllToolConfig config =
      ConfigOf({"--bench", "-b", "1M", "-e", "4M", "-f", "2", "-n", "9", "-w", "3", "-d",
                "fp16", "-g", "2", "--protocol", "direct,one_trip"});
  EXPECT_FALSE(config.smoke);
  EXPECT_EQ(config.min_bytes, 1 << 20);
  EXPECT_EQ(config.max_bytes, 4 << 20);
  EXPECT_EQ(config.timing.iterations, 9);
  EXPECT_EQ(config.timing.warmup, 3);
  EXPECT_EQ(config.dtype, DataType::kFloat16);
  EXPECT_THAT(config.devices, ElementsAre(0, 1));
  EXPECT_THAT(config.protocols, ElementsAre(Protocol::kDirect, Protocol::kOneTrip));
  // 1M, 2M, 4M output bytes per rank on 2 ranks: total tokens = bytes * 2 / (32 * 128 * 2).
  const std::vector<BenchShape> shapes = BenchShapes(config, 2);
  ASSERT_EQ(shapes.size(), 3u);
  EXPECT_EQ(shapes[0].tokens, 256);
  EXPECT_EQ(shapes[2].tokens, 1024);
}

TEST(AllToAllCommandLineTest, WithoutASweepTheBenchmarkRunsTheModelShapes) {
  const AllToAllToolConfig config = ConfigOf({"--bench", "--smoke"});
  EXPECT_TRUE(config.smoke);
  EXPECT_EQ(BenchShapes(config, 4).size(), 4u);
  EXPECT_EQ(BenchShapes(config, 4)[0].tokens, 15360);
}

TEST(AllToAllCommandLineTest, RanksMayShareAGpu) {
  EXPECT_THAT(ConfigOf({"--devices=0,0,0,0"}).devices, ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(ConfigOf({"--devices=0,0", "--head_counts=1,3"}).head_counts, ElementsAre(1, 3));
}

TEST(AllToAllCommandLineTest, BreakdownTakesOneProtocolAndItsSize) {
  const AllToAllToolConfig config =
      ConfigOf({"--breakdown", "-b", "4M", "--breakdown_blocks=0,32"});
  EXPECT_FALSE(config.smoke);
  EXPECT_EQ(config.breakdown_bytes, 4 << 20);
  EXPECT_EQ(config.breakdown_protocol, Protocol::kDirect);
  EXPECT_THAT(config.breakdown_blocks, ElementsAre(0, 32));
  EXPECT_EQ(ConfigOf({"--breakdown"}).breakdown_protocol, Protocol::kOneTrip);
  EXPECT_THAT(ErrorOf({"--breakdown", "--protocol=direct,one_trip"}), HasSubstr("one --protocol"));
  EXPECT_THAT(ErrorOf({"--breakdown", "--protocol=copy_engine"}), HasSubstr("one --protocol"));
}

TEST(AllToAllCommandLineTest, TheBenchmarkTakesACallStyleAJsonFileAndATransport) {
  const AllToAllToolConfig defaults = ConfigOf({"--bench"});
  EXPECT_EQ(defaults.style, BenchStyle::kPerRank);
  EXPECT_EQ(defaults.json_path, "");
  EXPECT_EQ(defaults.transport, Transport::kAuto);
  const AllToAllToolConfig graph = ConfigOf({"--bench", "--style=graph", "--json", "out.json"});
  EXPECT_EQ(graph.style, BenchStyle::kGraph);
  EXPECT_EQ(graph.json_path, "out.json");
  EXPECT_EQ(ConfigOf({"--bench", "--style=coordinated"}).style, BenchStyle::kCoordinated);
  EXPECT_EQ(ConfigOf({"--bench", "--style=rank_one_thread"}).style, BenchStyle::kRankOneThread);
  // The copy-engine protocol on the peer-store transport can be captured.
  const AllToAllToolConfig captured =
      ConfigOf({"--bench", "--style=graph", "--protocol=copy_engine", "--transport=peer_stores"});
  EXPECT_EQ(captured.style, BenchStyle::kGraph);
  EXPECT_THAT(captured.protocols, ElementsAre(Protocol::kCopyEngine));
  EXPECT_EQ(captured.transport, Transport::kPeerStores);
  // The transport serves every mode.
  EXPECT_EQ(ConfigOf({"--transport=copy_engine"}).transport, Transport::kCopyEngine);
  EXPECT_EQ(ConfigOf({"--bench", "--transport=copy_engine"}).transport, Transport::kCopyEngine);
}

TEST(AllToAllCommandLineTest, TheBenchmarkMovesUpToFourTensorsPerCallOnTheDirectKernel) {
  EXPECT_EQ(ConfigOf({"--bench"}).tensors, 1);
  EXPECT_EQ(ConfigOf({"--bench", "--tensors=3"}).tensors, 3);
  EXPECT_EQ(ConfigOf({"--bench", "--tensors", "4", "--protocol=auto,direct"}).tensors, 4);
  EXPECT_EQ(ConfigOf({"--bench", "--tensors=1", "--protocol=one_trip"}).tensors, 1);
  EXPECT_THAT(ErrorOf({"--bench", "--tensors=0"}), HasSubstr("--tensors 0: must be 1 to 4"));
  EXPECT_THAT(ErrorOf({"--bench", "--tensors=5"}), HasSubstr("--tensors 5: must be 1 to 4"));
  EXPECT_THAT(ErrorOf({"--bench", "--tensors=2", "--protocol=direct,one_trip"}),
              HasSubstr("--tensors 2: --protocol one_trip runs one tensor per call"));
  EXPECT_THAT(ErrorOf({"--bench", "--tensors=3", "--protocol=copy_engine"}),
              HasSubstr("--protocol copy_engine runs one tensor per call"));
  EXPECT_THAT(ErrorOf({"--tensors=2"}), HasSubstr("--tensors: only --bench takes it"));
  EXPECT_THAT(ErrorOf({"--breakdown", "--tensors=2"}), HasSubstr("only --bench takes it"));
}

TEST(AllToAllCommandLineTest, TheBenchmarkMovesHeadVectorsInFp8OnRequest) {
  EXPECT_EQ(ConfigOf({"--bench"}).wire, WireFormat::kNative);
  EXPECT_EQ(ConfigOf({"--bench", "--wire=fp8_e4m3"}).wire, WireFormat::kFp8E4M3);
  EXPECT_EQ(ConfigOf({"--bench", "--wire", "fp8_e4m3", "-d", "fp16", "--tensors", "3",
                      "--protocol=auto,direct"})
                .wire,
            WireFormat::kFp8E4M3);
  EXPECT_EQ(ConfigOf({"--wire=native"}).wire, WireFormat::kNative);
  EXPECT_THAT(ErrorOf({"--bench", "--wire=fp4"}), HasSubstr("--wire: 'fp4' is not native"));
  EXPECT_THAT(ErrorOf({"--wire=fp8_e4m3"}), HasSubstr("--wire: only --bench takes it"));
  EXPECT_THAT(ErrorOf({"--bench", "--wire=fp8_e4m3", "-d", "fp32"}),
              HasSubstr("bf16 or fp16 head vectors, not fp32"));
  // --head_dim shapes a sweep (-b); the model shapes have their own (64 and 128).
  EXPECT_THAT(ErrorOf({"--bench", "--wire=fp8_e4m3", "-b", "1M", "--head_dim=4"}),
              HasSubstr("--head_dim >= 8"));
  EXPECT_EQ(ConfigOf({"--bench", "--wire=fp8_e4m3", "--head_dim=4"}).wire,
            WireFormat::kFp8E4M3);
  EXPECT_THAT(ErrorOf({"--bench", "--wire=fp8_e4m3", "--transport=copy_engine"}),
              HasSubstr("not --transport=copy_engine"));
  EXPECT_THAT(ErrorOf({"--bench", "--wire=fp8_e4m3", "--protocol=direct,one_trip"}),
              HasSubstr("--protocol auto or direct, not one_trip"));
}

TEST(AllToAllCommandLineTest, GraphStyleRefusesTheCopyEngineTransport) {
  EXPECT_THAT(ErrorOf({"--bench", "--style=graph", "--transport=copy_engine"}),
              HasSubstr("--style=graph: calls on the copy-engine transport cannot be captured "
                        "into CUDA graphs"));
}

TEST(AllToAllCommandLineTest, EveryBadFlagIsOneLineBeforeAnyGpu) {
  EXPECT_THAT(ErrorOf({"--bench", "--style=fast"}), HasSubstr("--style: unknown style 'fast'"));
  EXPECT_THAT(ErrorOf({"--style=graph"}), HasSubstr("--style: only --bench takes it"));
  EXPECT_THAT(ErrorOf({"--json=out.json"}), HasSubstr("--json: only --bench takes it"));
  EXPECT_THAT(ErrorOf({"--breakdown", "--json=out.json"}), HasSubstr("only --bench takes them"));
  EXPECT_THAT(ErrorOf({"--bench", "--json"}), HasSubstr("--json needs a value"));
  EXPECT_THAT(ErrorOf({"--transport=fast"}), HasSubstr("--transport: unknown transport 'fast'"));
  EXPECT_THAT(ErrorOf({"--nope"}), HasSubstr("unknown flag '--nope'"));
  EXPECT_THAT(ErrorOf({"--devices=0,x"}), HasSubstr("--devices: 'x'"));
  EXPECT_THAT(ErrorOf({"--devices=0,0,0,0,0,0,0,0,0"}), HasSubstr("at most 8 ranks"));
  EXPECT_THAT(ErrorOf({"-g", "9"}), HasSubstr("-g/--gpus"));
  EXPECT_THAT(ErrorOf({"-b", "1M"}), HasSubstr("-b/--min_bytes: only --bench"));
  EXPECT_THAT(ErrorOf({"-e", "1M"}), HasSubstr("-e/--max_bytes"));
  EXPECT_THAT(ErrorOf({"--bench", "-e", "1M"}), HasSubstr("give -b too"));
  EXPECT_THAT(ErrorOf({"--bench", "-b", "1X"}), HasSubstr("-b/--min_bytes"));
  EXPECT_THAT(ErrorOf({"--bench", "-b", "4M", "-e", "1M"}), HasSubstr("-b <= -e"));
  EXPECT_THAT(ErrorOf({"--bench", "-b", "1M", "-f", "1"}), HasSubstr("-f/--step_factor"));
  EXPECT_THAT(ErrorOf({"--bench", "-b", "1M", "-f", "0"}), HasSubstr("-f/--step_factor 0"));
  // The smoke run alone has its own cases and calls.
  EXPECT_THAT(ErrorOf({"--direction=seq_to_heads"}),
              HasSubstr("--direction: only --bench or --breakdown takes it"));
  EXPECT_THAT(ErrorOf({"--protocol=direct"}), HasSubstr("--protocol: only --bench"));
  EXPECT_THAT(ErrorOf({"-n", "7"}), HasSubstr("-n/--iters: only --bench"));
  EXPECT_EQ(ConfigOf({"--smoke", "--bench", "--direction=seq_to_heads"}).directions.size(), 1u);
  EXPECT_THAT(ErrorOf({"-d", "bf17"}), HasSubstr("-d/--dtype"));
  EXPECT_THAT(ErrorOf({"--bench", "--protocol=fast"}), HasSubstr("--protocol: 'fast'"));
  EXPECT_THAT(ErrorOf({"--bench", "--direction=up"}), HasSubstr("--direction"));
  EXPECT_THAT(ErrorOf({"--head_counts=1,x"}), HasSubstr("--head_counts"));
  EXPECT_THAT(ErrorOf({"--devices=0,0", "--head_counts=1,2,3"}), HasSubstr("--head_counts"));
  EXPECT_THAT(ErrorOf({"--bench", "--head_counts=1,2"}), HasSubstr("the shape has 32"));
  EXPECT_THAT(ErrorOf({"--breakdown", "--head_counts=16,16"}), HasSubstr("--breakdown"));
  EXPECT_THAT(ErrorOf({"--breakdown_blocks=x"}), HasSubstr("--breakdown_blocks"));
  EXPECT_THAT(ErrorOf({"--breakdown", "--blocks=8"}),
              HasSubstr("--blocks: only --bench takes it (--breakdown takes --breakdown_blocks)"));
  EXPECT_THAT(ErrorOf({"--bench", "--blocks=-1"}), HasSubstr("--blocks"));
  EXPECT_THAT(ErrorOf({"--bench", "-n", "0"}), HasSubstr("timing"));
  EXPECT_THAT(ErrorOf({"--heads=0"}), HasSubstr("--heads"));
  EXPECT_THAT(ErrorOf({"-w"}), HasSubstr("-w needs a value"));
  EXPECT_THAT(ErrorOf({"extra"}), HasSubstr("unexpected argument 'extra'"));
}

TEST(AllToAllConfigTest, HeadCountsMustGiveEveryRankOne) {
  const AllToAllToolConfig config = ConfigOf({"--head_counts=2,3,0,3"});
  EXPECT_TRUE(CheckWorldSize(config, 4).ok());
  EXPECT_THAT(std::string(CheckWorldSize(config, 2).message()),
              HasSubstr("4 head counts for 2 ranks"));
  EXPECT_TRUE(CheckWorldSize(ConfigOf({}), 3).ok());
}

}  // namespace
}  // namespace ltx
