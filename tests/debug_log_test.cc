// Tests of the debug log (ltx/runtime/debug_log.h): the levels LTX_DEBUG names, and whole lines
// written to LTX_DEBUG_FILE. The process's level is read once, so this binary sets the environment
// in its first test before anything reads it.
#include "ltx/runtime/debug_log.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;

TEST(DebugLogTest, LevelsByName) {
  bool unknown = true;
  EXPECT_EQ(ParseDebugLevel(nullptr, &unknown), DebugLevel::kOff);
  EXPECT_FALSE(unknown);
  EXPECT_EQ(ParseDebugLevel("", &unknown), DebugLevel::kOff);
  EXPECT_EQ(ParseDebugLevel("INFO", &unknown), DebugLevel::kInfo);
  EXPECT_EQ(ParseDebugLevel("info", &unknown), DebugLevel::kInfo);
  EXPECT_EQ(ParseDebugLevel("Trace", &unknown), DebugLevel::kTrace);
  EXPECT_FALSE(unknown);
  EXPECT_EQ(ParseDebugLevel("verbose", &unknown), DebugLevel::kInfo);
  EXPECT_TRUE(unknown);
  EXPECT_EQ(ParseDebugLevel("WARN", nullptr), DebugLevel::kInfo);
}

TEST(DebugLogTest, WholeLinesFromManyThreadsGoToTheFile) {
  const std::string path = absl::StrCat(testing::TempDir(), "/ltx_debug_", getpid(), ".log");
  ASSERT_EQ(setenv("LTX_DEBUG", "info", 1), 0);
  ASSERT_EQ(setenv("LTX_DEBUG_FILE", path.c_str(), 1), 0);
  ASSERT_EQ(ProcessDebugLevel(), DebugLevel::kInfo);
  EXPECT_TRUE(DebugEnabled(DebugLevel::kInfo));
  EXPECT_FALSE(DebugEnabled(DebugLevel::kTrace));
  EXPECT_FALSE(DebugEnabled(DebugLevel::kOff));
  constexpr int kThreads = 8;
  constexpr int kLines = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < kLines; ++i) {
        DebugLine(DebugLevel::kInfo,
                  absl::StrCat("thread ", t, " line ", i, " ", std::string(100, 'x')));
        DebugLine(DebugLevel::kTrace, "not written at INFO");
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::ifstream file(path);
  std::stringstream contents;
  contents << file.rdbuf();
  const std::vector<std::string> lines =
      absl::StrSplit(contents.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), static_cast<size_t>(kThreads * kLines));
  const std::string prefix = absl::StrCat("ltx INFO ", getpid(), " thread ");
  for (const std::string& line : lines) {
    EXPECT_EQ(line.rfind(prefix, 0), 0u) << line;
    EXPECT_THAT(line, HasSubstr(std::string(100, 'x'))) << "a line was cut or mixed";
  }
  EXPECT_THAT(contents.str(), ::testing::Not(HasSubstr("not written")));
}

}  // namespace
}  // namespace ltx
