// Tests of ltx_allreduce's command line (tools/ltx_allreduce/allreduce_flags.h) and settings
// (allreduce_config.h): argument vectors in, the run's settings or one line and its exit code
// out, with no GPU; the benchmark's sizes and the AllReduce's paths.
#include "tools/ltx_allreduce/allreduce_flags.h"

#include <string>
#include <vector>

#include "absl/flags/reflection.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ltx/runtime_options.h"
#include "tests/command_line_error.h"
#include "tools/ltx_allreduce/allreduce_config.h"
#include "tools/ltx_allreduce/allreduce_path.h"

namespace ltx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The outcome of `args` after the program name; `config` receives the settings.
CommandLineOutcome Parse(std::vector<std::string> args, AllReduceToolConfig* config) {
  absl::FlagSaver saver;
  args.insert(args.begin(), "ltx_allreduce");
  return ParseAllReduceCommandLine(args, config);
}

// The settings of `args`, which must be accepted.
AllReduceToolConfig ConfigOf(const std::vector<std::string>& args) {
  AllReduceToolConfig config;
  const CommandLineOutcome outcome = Parse(args, &config);
  EXPECT_LT(outcome.exit_code, 0) << outcome.text;
  return config;
}

// The one line `args` are refused with (exit 2), or "" when they are accepted.
std::string ErrorOf(const std::vector<std::string>& args) {
  AllReduceToolConfig config;
  return OneLineError(Parse(args, &config), "ltx_allreduce");
}

TEST(AllReduceCommandLineTest, HelpListsEveryFlagInShortAndLongFormsAndExitsZero) {
  for (const char* help : {"-h", "--help"}) {
    AllReduceToolConfig config;
    const CommandLineOutcome outcome = Parse({"--bench", help}, &config);
    EXPECT_EQ(outcome.exit_code, kExitOk);
    for (const char* flag :
         {"-b, --min_bytes", "-e, --max_bytes", "-f, --step_factor", "-n, --iters", "-w, --warmup",
          "-d, --dtype", "-g, --gpus", "--devices", "--smoke", "--bench", "--op", "--reduction",
          "--path", "--blocks", "--max_blocks", "--windows", "--nccl", "--style", "--json",
          "-h, --help"}) {
      EXPECT_THAT(outcome.text, HasSubstr(flag));
    }
    EXPECT_THAT(outcome.text, HasSubstr("input bytes per rank"));
    EXPECT_THAT(outcome.text, HasSubstr("NCCL has no copy-engine reductions"));
    EXPECT_THAT(outcome.text, HasSubstr("auto | one_shot | two_shot | both"));
  }
}

TEST(AllReduceCommandLineTest, DefaultsAreTheSmokeRunOnEveryGpu) {
  const AllReduceToolConfig config = ConfigOf({});
  EXPECT_TRUE(config.smoke);
  EXPECT_FALSE(config.bench);
  EXPECT_TRUE(config.devices.empty());
  EXPECT_EQ(config.collective, Collective::kAllReduce);
  EXPECT_EQ(config.dtype, DataType::kBFloat16);
  EXPECT_EQ(config.reduction, Reduction::kSum);
  EXPECT_THAT(config.paths, ElementsAre(AllReducePath::kAuto));
}

TEST(AllReduceCommandLineTest, ShortFlagsMakeASweepOfInputBytesPerRank) {
  const AllReduceToolConfig config =
      ConfigOf({"--bench", "-b", "1M", "-e", "4M", "-f", "2", "-n", "9", "-w", "3", "-d", "fp16",
                "-g", "2", "--op", "reduce_scatter", "--reduction=max", "--blocks=8"});
  EXPECT_FALSE(config.smoke);
  EXPECT_EQ(config.collective, Collective::kReduceScatter);
  EXPECT_EQ(config.dtype, DataType::kFloat16);
  EXPECT_EQ(config.reduction, Reduction::kMax);
  EXPECT_EQ(config.blocks, 8);
  EXPECT_EQ(config.timing.iterations, 9);
  EXPECT_EQ(config.timing.warmup, 3);
  EXPECT_THAT(config.devices, ElementsAre(0, 1));
  EXPECT_THAT(BenchSizes(config), ElementsAre(1 << 20, 2 << 20, 4 << 20));
}

TEST(AllReduceCommandLineTest, TheDefaultSweepDoublesFrom8KTo256M) {
  const std::vector<int64_t> sizes = BenchSizes(ConfigOf({"--bench", "--smoke"}));
  ASSERT_EQ(sizes.size(), 16u);
  EXPECT_EQ(sizes.front(), 8 << 10);
  EXPECT_EQ(sizes.back(), 256 << 20);
  EXPECT_THAT(BenchSizes(ConfigOf({"--bench", "-b", "3M", "-e", "10M", "-f", "3"})),
              ElementsAre(3 << 20, 9 << 20));
}

TEST(AllReduceCommandLineTest, RanksMayShareAGpu) {
  EXPECT_THAT(ConfigOf({"--devices=0,0,0,0"}).devices, ElementsAre(0, 0, 0, 0));
}

TEST(AllReduceCommandLineTest, TheBenchmarkTakesACallStyleAndAJsonFile) {
  const AllReduceToolConfig graph = ConfigOf({"--bench", "--style=graph", "--json", "out.json"});
  EXPECT_EQ(graph.style, BenchStyle::kGraph);
  EXPECT_EQ(graph.json_path, "out.json");
  EXPECT_EQ(ConfigOf({"--bench"}).style, BenchStyle::kPerRank);
  EXPECT_EQ(ConfigOf({"--bench", "--style=coordinated"}).style, BenchStyle::kCoordinated);
  EXPECT_EQ(ConfigOf({"--bench", "--style=rank_one_thread"}).style, BenchStyle::kRankOneThread);
}

TEST(AllReduceCommandLineTest, TheBenchmarkTakesTheAllReducesPath) {
  EXPECT_THAT(ConfigOf({"--bench", "--path=auto"}).paths, ElementsAre(AllReducePath::kAuto));
  EXPECT_THAT(ConfigOf({"--bench", "--path", "one_shot"}).paths,
              ElementsAre(AllReducePath::kOneShot));
  EXPECT_THAT(ConfigOf({"--bench", "--path=two_shot"}).paths, ElementsAre(AllReducePath::kTwoShot));
  EXPECT_THAT(ConfigOf({"--bench", "--path=both"}).paths,
              ElementsAre(AllReducePath::kOneShot, AllReducePath::kTwoShot));
  EXPECT_THAT(ConfigOf({"--bench", "--op=reduce_scatter", "--path=auto"}).paths,
              ElementsAre(AllReducePath::kAuto));
}

TEST(AllReduceCommandLineTest, TheEpilogueTakesItsRowLength) {
  const AllReduceToolConfig rmsnorm =
      ConfigOf({"--bench", "--op=allreduce_rmsnorm", "--hidden", "8192"});
  EXPECT_EQ(rmsnorm.collective, Collective::kAllReduceRmsNorm);
  EXPECT_EQ(rmsnorm.hidden, 8192);
  EXPECT_EQ(OpFlagName(rmsnorm.collective), "allreduce_rmsnorm");
  EXPECT_EQ(ConfigOf({"--bench", "--op=allreduce_rmsnorm"}).hidden, 4096);
}

TEST(AllReduceCommandLineTest, EachPathSetsTheCallsTwoShotThreshold) {
  EXPECT_EQ(TwoShotMinBytesOf(AllReducePath::kAuto), absl::nullopt);
  EXPECT_EQ(TwoShotMinBytesOf(AllReducePath::kOneShot), kNeverTwoShot);
  EXPECT_EQ(TwoShotMinBytesOf(AllReducePath::kTwoShot), 0);
  for (const char* name : {"auto", "one_shot", "two_shot", "both"}) {
    const absl::StatusOr<std::vector<AllReducePath>> paths = ParseAllReducePaths(name);
    ASSERT_TRUE(paths.ok()) << paths.status();
    EXPECT_EQ(AllReducePathsFlagName(*paths), name);
  }
}

TEST(AllReduceCommandLineTest, EveryBadFlagIsOneLineBeforeAnyGpu) {
  EXPECT_THAT(ErrorOf({"--bench", "--op=allgather"}), HasSubstr("--op: 'allgather'"));
  EXPECT_THAT(ErrorOf({"--bench", "--reduction=prod"}), HasSubstr("--reduction: 'prod'"));
  EXPECT_THAT(ErrorOf({"--bench", "-d", "int8"}), HasSubstr("not bf16, fp16 or fp32"));
  EXPECT_THAT(ErrorOf({"-d", "bf17"}), HasSubstr("-d/--dtype"));
  EXPECT_THAT(ErrorOf({"--bench", "--path=three_shot"}),
              HasSubstr("--path: 'three_shot' is not auto, one_shot, two_shot or both"));
  for (const char* path : {"--path=one_shot", "--path=two_shot", "--path=both"}) {
    EXPECT_THAT(ErrorOf({"--bench", "--op=reduce_scatter", path}),
                HasSubstr("--path: only --op allreduce"));
  }
  EXPECT_THAT(ErrorOf({"--path=both"}), HasSubstr("only --bench takes it"));
  EXPECT_THAT(ErrorOf({"--bench", "--op=allreduce_rmsnorm", "--path=both"}),
              HasSubstr("--path: only --op allreduce"));
  EXPECT_THAT(ErrorOf({"--bench", "--op=allreduce_rmsnorm", "--reduction=max"}),
              HasSubstr("--op allreduce_rmsnorm sums"));
  EXPECT_THAT(ErrorOf({"--bench", "--hidden=64"}),
              HasSubstr("--hidden: only --op allreduce_rmsnorm"));
  EXPECT_THAT(ErrorOf({"--bench", "--op=allreduce_rmsnorm", "--hidden=-3"}),
              HasSubstr("--hidden -3: must be in 1..16777216"));
  EXPECT_THAT(ErrorOf({"--op=allreduce_rmsnorm", "--hidden=64"}),
              HasSubstr("only --bench takes it"));
  EXPECT_THAT(ErrorOf({"--bench", "--style=fast"}), HasSubstr("--style: unknown style 'fast'"));
  EXPECT_THAT(ErrorOf({"--style=graph"}), HasSubstr("only --bench takes it"));
  EXPECT_THAT(ErrorOf({"--json=out.json"}), HasSubstr("only --bench takes it"));
  EXPECT_THAT(ErrorOf({"-b", "1M"}), HasSubstr("only --bench takes it"));
  EXPECT_THAT(ErrorOf({"-e", "1M"}), HasSubstr("only --bench takes it"));
  // The smoke run has its own cases, dtypes, reductions and calls.
  EXPECT_THAT(ErrorOf({"--op=reduce_scatter"}), HasSubstr("--op: only --bench takes it"));
  EXPECT_THAT(ErrorOf({"--reduction=max"}), HasSubstr("--reduction: only --bench takes it"));
  EXPECT_THAT(ErrorOf({"-d", "fp16"}), HasSubstr("-d/--dtype: only --bench takes it"));
  EXPECT_THAT(ErrorOf({"--blocks=8"}), HasSubstr("--blocks: only --bench takes it"));
  EXPECT_THAT(ErrorOf({"--bench", "-b", "1X"}), HasSubstr("-b/--min_bytes"));
  EXPECT_THAT(ErrorOf({"--bench", "-e", "1X"}), HasSubstr("-e/--max_bytes"));
  EXPECT_THAT(ErrorOf({"--bench", "-b", "4M", "-e", "1M"}), HasSubstr("-b <= -e"));
  EXPECT_THAT(ErrorOf({"--bench", "-f", "1"}), HasSubstr("-f/--step_factor"));
  EXPECT_THAT(ErrorOf({"--bench", "-f", "0"}), HasSubstr("-f/--step_factor 0"));
  EXPECT_THAT(ErrorOf({"--bench", "--json"}), HasSubstr("--json needs a value"));
  EXPECT_THAT(ErrorOf({"--protocol=direct"}), HasSubstr("not taken"));
  EXPECT_THAT(ErrorOf({"--transport=copy_engine"}), HasSubstr("not taken"));
  EXPECT_THAT(ErrorOf({"--breakdown"}), HasSubstr("not taken"));
  EXPECT_THAT(ErrorOf({"--breakdown_blocks=0,1"}), HasSubstr("not taken"));
  EXPECT_THAT(ErrorOf({"--bench", "--tensors=2"}), HasSubstr("not taken"));
  EXPECT_THAT(ErrorOf({"--nope"}), HasSubstr("unknown flag '--nope'"));
  EXPECT_THAT(ErrorOf({"--devices=0,x"}), HasSubstr("--devices: 'x'"));
  EXPECT_THAT(ErrorOf({"--devices=0,0,0,0,0,0,0,0,0"}), HasSubstr("at most 8 ranks"));
  EXPECT_THAT(ErrorOf({"-g", "9"}), HasSubstr("-g/--gpus"));
  EXPECT_THAT(ErrorOf({"--blocks=-1"}), HasSubstr("--blocks"));
  EXPECT_THAT(ErrorOf({"--max_blocks=-1"}), HasSubstr("--max_blocks"));
  EXPECT_THAT(ErrorOf({"-n", "0"}), HasSubstr("timing"));
  EXPECT_THAT(ErrorOf({"-w"}), HasSubstr("-w needs a value"));
  EXPECT_THAT(ErrorOf({"extra"}), HasSubstr("unexpected argument 'extra'"));
}

}  // namespace
}  // namespace ltx
