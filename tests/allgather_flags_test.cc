// Tests of ltx_allgather's whole command line (tools/ltx_allgather/tool_flags.h): argument
// vectors in, the run's settings or one line and its exit code out, with no GPU.
#include "tools/ltx_allgather/tool_flags.h"

#include <string>
#include <vector>

#include "absl/flags/reflection.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/command_line_error.h"

namespace ltx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The outcome of `args` after the program name; `config` receives the settings.
CommandLineOutcome Parse(std::vector<std::string> args, ToolConfig* config) {
  absl::FlagSaver saver;
  args.insert(args.begin(), "ltx_allgather");
  return ParseAllGatherCommandLine(args, config);
}

// The one line `args` are refused with (exit 2), or "" when they are accepted.
std::string ErrorOf(const std::vector<std::string>& args) {
  ToolConfig config;
  return OneLineError(Parse(args, &config), "ltx_allgather");
}

TEST(AllGatherCommandLineTest, HelpListsEveryFlagWithItsUnitAndExitsZero) {
  ToolConfig config;
  const CommandLineOutcome outcome = Parse({"-h"}, &config);
  EXPECT_EQ(outcome.exit_code, kExitOk);
  for (const char* flag :
       {"-b, --min_bytes", "-e, --max_bytes", "-g, --gpus", "--devices", "-T, --timeout",
        "--overlap_styles", "--breakdown_blocks", "--tensors"}) {
    EXPECT_THAT(outcome.text, HasSubstr(flag));
  }
  EXPECT_THAT(outcome.text, HasSubstr("output bytes per rank"));
}

TEST(AllGatherCommandLineTest, ShortFlagsMakeTheBenchmarkSweep) {
  ToolConfig config;
  ASSERT_LT(Parse({"--bench", "-b", "8K", "-e", "4M", "-f", "2", "-n", "7", "-g", "2"}, &config)
                .exit_code,
            0);
  EXPECT_EQ(config.mode, ToolMode::kBench);
  EXPECT_EQ(config.bench_config.min_bytes, 8 << 10);
  EXPECT_EQ(config.bench_config.max_bytes, 4 << 20);
  EXPECT_EQ(config.bench_config.timing.iterations, 7);
  EXPECT_THAT(config.devices, ElementsAre(0, 1));
}

TEST(AllGatherCommandLineTest, TheBenchmarkGathersUpToFourTensorsPerCallOnTheDirectKernel) {
  ToolConfig config;
  ASSERT_LT(Parse({"--bench"}, &config).exit_code, 0);
  EXPECT_EQ(config.bench_config.tensors, 1);
  ASSERT_LT(Parse({"--bench", "--tensors", "3", "--protocol=direct"}, &config).exit_code, 0);
  EXPECT_EQ(config.bench_config.tensors, 3);
  EXPECT_THAT(ErrorOf({"--bench", "--tensors=5"}), HasSubstr("--tensors 5: must be 1 to 4"));
  EXPECT_THAT(ErrorOf({"--bench", "--tensors=2", "--protocol=one_trip"}),
              HasSubstr("--tensors 2: --protocol one_trip runs one tensor per call"));
  EXPECT_THAT(ErrorOf({"--bench", "--tensors=2", "--protocol=copy_engine"}),
              HasSubstr("--protocol copy_engine runs one tensor per call"));
  EXPECT_THAT(ErrorOf({"--tensors=2"}), HasSubstr("--tensors: only --bench takes it"));
  EXPECT_THAT(ErrorOf({"--overlap", "--tensors=2"}), HasSubstr("only --bench takes it"));
}

TEST(AllGatherCommandLineTest, RanksMayShareAGpu) {
  ToolConfig config;
  ASSERT_LT(Parse({"--devices=0,0,0,0"}, &config).exit_code, 0);
  EXPECT_THAT(config.devices, ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(config.smoke.runtime.devices, ElementsAre(0, 0, 0, 0));
}

TEST(AllGatherCommandLineTest, BadFlagsAreOneLineBeforeAnyGpu) {
  EXPECT_THAT(ErrorOf({"--nope"}), HasSubstr("unknown flag '--nope'"));
  EXPECT_THAT(ErrorOf({"--devices=0,x"}), HasSubstr("--devices: 'x'"));
  EXPECT_THAT(ErrorOf({"--devices=0,0,0,0,0,0,0,0,0"}), HasSubstr("at most 8 ranks"));
  EXPECT_THAT(ErrorOf({"-g", "2", "--devices=0,1"}), HasSubstr("not both"));
  EXPECT_THAT(ErrorOf({"--bench", "-b", "1X"}), HasSubstr("-b/--min_bytes"));
  EXPECT_THAT(ErrorOf({"-d", "bf17"}), HasSubstr("-d/--dtype"));
  EXPECT_THAT(ErrorOf({"--protocol=fast"}), HasSubstr("--protocol"));
  EXPECT_THAT(ErrorOf({"-n"}), HasSubstr("-n needs a value"));
  EXPECT_THAT(ErrorOf({"extra"}), HasSubstr("unexpected argument 'extra'"));
}

}  // namespace
}  // namespace ltx
