// Tests of ltx_allgather's command line (tools/ltx_allgather/command_line.h): short flags, help,
// and the checks of flag names and values against flags defined here.
#include "tools/ltx_allgather/command_line.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

ABSL_FLAG(int, iters, 100, "A flag of the tool's, for CheckFlags.");
ABSL_FLAG(bool, check, true, "A flag of the tool's, for CheckFlags.");
ABSL_FLAG(std::string, dtype, "", "A flag of the tool's, for CheckFlags.");
ABSL_FLAG(absl::Duration, timeout, absl::Seconds(10), "A flag of the tool's, for CheckFlags.");
ABSL_FLAG(int64_t, one_trip_max_bytes, -1, "A flag of the tool's, for CheckFlags.");
ABSL_FLAG(bool, overlap, false, "A flag of the tool's, for CheckFlags.");
ABSL_FLAG(std::string, gemm, "8192,8192,8192", "A flag of the tool's, for CheckFlags.");

namespace ltx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Translated(std::vector<std::string> args) {
  args.insert(args.begin(), "ltx_allgather");
  absl::StatusOr<std::vector<std::string>> out = TranslateShortFlags(args, AllGatherShortFlags());
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  out->erase(out->begin());
  return *out;
}

absl::Status TranslateError(std::vector<std::string> args) {
  args.insert(args.begin(), "ltx_allgather");
  return TranslateShortFlags(args, AllGatherShortFlags()).status();
}

TEST(TranslateShortFlagsTest, NcclTestsFlagsBecomeLongFlags) {
  EXPECT_THAT(Translated({"-b", "8K", "-e", "4M", "-f", "8", "-n", "50", "-w", "5", "-d", "fp16",
                          "-g", "2"}),
              ElementsAre("--min_bytes=8K", "--max_bytes=4M", "--step_factor=8", "--iters=50",
                          "--warmup=5", "--dtype=fp16", "--gpus=2"));
}

TEST(TranslateShortFlagsTest, AttachedAndEqualsFormsWork) {
  EXPECT_THAT(Translated({"-b16K", "-e=1G", "-f2"}),
              ElementsAre("--min_bytes=16K", "--max_bytes=1G", "--step_factor=2"));
}

TEST(TranslateShortFlagsTest, CheckTakesZeroOrOne) {
  EXPECT_THAT(Translated({"-c", "0"}), ElementsAre("--check=false"));
  EXPECT_THAT(Translated({"-c", "1"}), ElementsAre("--check=true"));
  const absl::Status bad = TranslateError({"-c", "maybe"});
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.message()), HasSubstr("-c maybe"));
}

TEST(TranslateShortFlagsTest, TimeoutInPlainSecondsGetsAUnit) {
  EXPECT_THAT(Translated({"-T", "5"}), ElementsAre("--timeout=5s"));
  EXPECT_THAT(Translated({"-T", "500ms"}), ElementsAre("--timeout=500ms"));
}

TEST(TranslateShortFlagsTest, LongFlagsPositionalsAndEverythingAfterDashDashStay) {
  EXPECT_THAT(Translated({"--bench", "--style=graph", "-dtype=bf16", "--", "-b", "1"}),
              ElementsAre("--bench", "--style=graph", "-dtype=bf16", "--", "-b", "1"));
}

TEST(TranslateShortFlagsTest, AShortFlagWithoutItsValueIsAnError) {
  const absl::Status missing = TranslateError({"--bench", "-b"});
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(missing.message()), HasSubstr("-b needs a value"));
}

TEST(WantsHelpTest, AnyHelpSpellingBeforeDashDash) {
  for (const char* help : {"-h", "-help", "--help", "--helpfull", "--helpshort"}) {
    EXPECT_TRUE(WantsHelp({"ltx_allgather", "--bench", help})) << help;
  }
  EXPECT_FALSE(WantsHelp({"ltx_allgather", "--bench"}));
  EXPECT_FALSE(WantsHelp({"ltx_allgather", "--", "--help"}));
}

TEST(UsageTextTest, ListsShortAndLongForms) {
  const std::string usage = AllGatherUsageText();
  for (const char* form :
       {"-b, --min_bytes", "-e, --max_bytes", "-f, --step_factor", "-n, --iters", "-w, --warmup",
        "-c, --check", "-d, --dtype", "-g, --gpus", "-T, --timeout", "--protocol", "--blocks",
        "--style", "-h, --help", "Exit codes", "--overlap", "--gemm=M,N,K", "--overlap_styles",
        "--cublas=PATH", "--breakdown_blocks=LIST", "--breakdown --protocol=direct"}) {
    EXPECT_THAT(usage, HasSubstr(form));
  }
}

TEST(CheckFlagsTest, AcceptsGoodFlags) {
  EXPECT_TRUE(CheckFlags({"ltx_allgather", "--iters=5", "--check", "--nocheck", "--dtype", "fp16",
                          "--timeout=2s", "--one_trip_max_bytes", "-1", "positional"})
                  .ok());
}

TEST(CheckFlagsTest, OverlapModeFlags) {
  EXPECT_TRUE(
      CheckFlags({"ltx_allgather", "--overlap", "--gemm=4096,4096,4096", "--iters=5"}).ok());
  EXPECT_EQ(CheckFlags({"ltx_allgather", "--overlap=maybe"}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckFlags({"ltx_allgather", "--gemm"}).code(), absl::StatusCode::kInvalidArgument);
  // -b is the per-rank size in overlap mode; it translates as in the benchmark.
  EXPECT_THAT(Translated({"--overlap", "-b", "64M", "-n", "20"}),
              ElementsAre("--overlap", "--min_bytes=64M", "--iters=20"));
}

TEST(CheckFlagsTest, UnknownFlagsAndBadValuesAreInvalidArgument) {
  const absl::Status unknown = CheckFlags({"ltx_allgather", "--itres=5"});
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(unknown.message()), HasSubstr("unknown flag '--itres=5'"));
  const absl::Status bad_value = CheckFlags({"ltx_allgather", "--iters=lots"});
  EXPECT_EQ(bad_value.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad_value.message()), HasSubstr("--iters=lots"));
  EXPECT_EQ(CheckFlags({"ltx_allgather", "--timeout=soon"}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckFlags({"ltx_allgather", "--dtype"}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckFlags({"ltx_allgather", "--nodtype"}).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ltx
