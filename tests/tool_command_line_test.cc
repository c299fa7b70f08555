// Tests of what the tools' command lines share (tools/flags/command_line.h,
// tools/flags/device_list.h): a tool's whole parse (help, short flags, one-line errors and their
// exit codes) over flags defined here, the device lists and the check that GPUs are visible.
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/flags/command_line.h"
#include "tools/flags/device_list.h"

ABSL_FLAG(int, iters, 100, "A flag of a tool's.");
ABSL_FLAG(bool, check, true, "A flag of a tool's.");
ABSL_FLAG(std::string, min_bytes, "", "A flag of a tool's.");

namespace ltx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr ShortFlag kShortFlags[] = {{'n', "iters"}, {'c', "check"}, {'b', "min_bytes"}};

// Parses `args` after the program name as the tool "tool" does, its flag values read into
// `iters` when asked; `read_error`, when set, is what reading the values finds.
CommandLineOutcome Parse(std::vector<std::string> args, int* iters = nullptr,
                         absl::Status read_error = absl::OkStatus()) {
  args.insert(args.begin(), "tool");
  return ParseToolCommandLine(args, {"tool", kShortFlags, "usage of tool\n"}, [&] {
    if (iters != nullptr) *iters = absl::GetFlag(FLAGS_iters);
    return read_error;
  });
}

TEST(ParseToolCommandLineTest, HelpPrintsTheUsageAndExitsZero) {
  absl::FlagSaver saver;
  for (const char* help : {"-h", "--help", "-help", "--helpfull"}) {
    const CommandLineOutcome outcome = Parse({"-n", "5", help});
    EXPECT_EQ(outcome.exit_code, kExitOk) << help;
    EXPECT_EQ(outcome.text, "usage of tool\n") << help;
  }
}

TEST(ParseToolCommandLineTest, ShortAndLongFlagsSetTheValuesAndRun) {
  absl::FlagSaver saver;
  int iters = 0;
  EXPECT_LT(Parse({"-n", "7", "-c", "0"}, &iters).exit_code, 0);
  EXPECT_EQ(iters, 7);
  EXPECT_FALSE(absl::GetFlag(FLAGS_check));
  EXPECT_LT(Parse({"--iters=9", "-b16K"}, &iters).exit_code, 0);
  EXPECT_EQ(iters, 9);
  EXPECT_EQ(absl::GetFlag(FLAGS_min_bytes), "16K");
}

TEST(ParseToolCommandLineTest, EveryBadCommandLineIsOneLineAndExitTwo) {
  absl::FlagSaver saver;
  const std::vector<std::vector<std::string>> bad = {
      {"--nope"}, {"--iters=x"}, {"-n"}, {"-c", "maybe"}, {"stray"}, {"-e", "1M"}};
  for (const std::vector<std::string>& args : bad) {
    const CommandLineOutcome outcome = Parse(args);
    EXPECT_EQ(outcome.exit_code, kExitNothingRan) << args[0];
    EXPECT_THAT(outcome.text, StartsWith("tool: ")) << args[0];
    EXPECT_EQ(outcome.text.find('\n'), outcome.text.size() - 1) << outcome.text;
  }
  EXPECT_THAT(Parse({"stray"}).text, HasSubstr("unexpected argument 'stray'"));
}

TEST(ParseToolCommandLineTest, AnErrorReadingTheValuesIsTheToolsLine) {
  absl::FlagSaver saver;
  const CommandLineOutcome outcome =
      Parse({}, nullptr, absl::InvalidArgumentError("-b/--min_bytes: too small"));
  EXPECT_EQ(outcome.exit_code, kExitNothingRan);
  EXPECT_EQ(outcome.text, "tool: -b/--min_bytes: too small\n");
}

TEST(DeviceListTest, ParseDevicesTakesOneToEightOrdinalsWithRepeats) {
  EXPECT_THAT(ParseDevices("").value(), ElementsAre());
  EXPECT_THAT(ParseDevices("0,0").value(), ElementsAre(0, 0));
  EXPECT_THAT(ParseDevices("0,0,0,0,0,0,0,0").value(), ElementsAre(0, 0, 0, 0, 0, 0, 0, 0));
  EXPECT_THAT(std::string(ParseDevices("0,1,2,3,4,5,6,7,0").status().message()),
              HasSubstr("at most 8 ranks"));
  EXPECT_EQ(ParseDevices("1,x").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseDevices("-1").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DeviceListTest, DevicesOfFlagsTakesDevicesOrGpus) {
  EXPECT_THAT(DevicesOfFlags("", 0).value(), ElementsAre());
  EXPECT_THAT(DevicesOfFlags("", 3).value(), ElementsAre(0, 1, 2));
  EXPECT_THAT(DevicesOfFlags("2,2", 0).value(), ElementsAre(2, 2));
  EXPECT_THAT(std::string(DevicesOfFlags("1", 2).status().message()), HasSubstr("not both"));
  EXPECT_THAT(std::string(DevicesOfFlags("", 9).status().message()), HasSubstr("-g/--gpus"));
  EXPECT_THAT(std::string(DevicesOfFlags("", -1).status().message()), HasSubstr("-g/--gpus"));
  EXPECT_THAT(std::string(DevicesOfFlags("a", 0).status().message()), StartsWith("--devices: "));
}

TEST(CheckDevicesVisibleTest, NoGpuOrAnUnseenDeviceIsRefused) {
  EXPECT_TRUE(CheckDevicesVisible({}, 1).ok());
  EXPECT_TRUE(CheckDevicesVisible({0, 0, 0, 0}, 1).ok());
  EXPECT_TRUE(CheckDevicesVisible({3, 1}, 4).ok());
  EXPECT_EQ(CheckDevicesVisible({}, 0).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(CheckDevicesVisible({0, 4}, 4).message()),
              HasSubstr("GPU 4 is not visible"));
  EXPECT_EQ(ExitUnlessDevicesVisible("tool", {0, 0}, 1), -1);
  EXPECT_EQ(ExitUnlessDevicesVisible("tool", {2}, 1), kExitNothingRan);
  EXPECT_EQ(ExitUnlessDevicesVisible("tool", {}, 0), kExitNothingRan);
}

}  // namespace
}  // namespace ltx
