// Tests of ltx_server_example's command line (tools/server_example/server_example_flags.h):
// argument vectors in, the example's options or one line and its exit code out, with no GPU.
#include "tools/server_example/server_example_flags.h"

#include <string>
#include <vector>

#include "absl/flags/reflection.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ltx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The outcome of `args` after the program name; `options` receives the options.
CommandLineOutcome Parse(std::vector<std::string> args, ServerExampleOptions* options) {
  absl::FlagSaver saver;
  args.insert(args.begin(), "ltx_server_example");
  return ParseServerExampleCommandLine(args, options);
}

TEST(ServerExampleCommandLineTest, HelpListsEveryFlagAndExitsZero) {
  ServerExampleOptions options;
  const CommandLineOutcome outcome = Parse({"--help"}, &options);
  EXPECT_EQ(outcome.exit_code, kExitOk);
  for (const char* flag : {"--steps", "-g, --gpus", "--devices", "-h, --help"}) {
    EXPECT_THAT(outcome.text, HasSubstr(flag));
  }
}

TEST(ServerExampleCommandLineTest, StepsAndDevicesReachTheOptions) {
  ServerExampleOptions options;
  ASSERT_LT(Parse({"--steps=7", "--devices=0,0,0,0"}, &options).exit_code, 0);
  EXPECT_EQ(options.steps, 7);
  EXPECT_THAT(options.devices, ElementsAre(0, 0, 0, 0));
  ASSERT_LT(Parse({"-g", "2"}, &options).exit_code, 0);
  EXPECT_EQ(options.steps, ServerExampleOptions().steps);
  EXPECT_THAT(options.devices, ElementsAre(0, 1));
}

TEST(ServerExampleCommandLineTest, BadFlagsAreOneLineAndExitTwo) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--nope"}, {"--steps=x"}, {"--steps=0"}, {"--devices=0,-1"}, {"-g", "9"}, {"x"}}) {
    ServerExampleOptions options;
    const CommandLineOutcome outcome = Parse(args, &options);
    EXPECT_EQ(outcome.exit_code, kExitNothingRan) << args[0];
    EXPECT_THAT(outcome.text, StartsWith("ltx_server_example: ")) << args[0];
    EXPECT_EQ(outcome.text.find('\n'), outcome.text.size() - 1) << outcome.text;
  }
}

}  // namespace
}  // namespace ltx
