// Tests of tests/child_process.h: the binary runs itself with a filter that selects a test
// registered only in the child; exit codes, signals, timeouts, output and environment come back.
// Needs no GPU.
#include "tests/child_process.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace ltx {
namespace {

// Selects what the child does; unset in the parent.
constexpr char kModeVariable[] = "LTX_CHILD_PROCESS_TEST_MODE";
constexpr absl::Duration kTimeout = absl::Seconds(60);

// What the child does, by kModeVariable: "pass" prints the environment it was given, "fail"
// fails, "abort" aborts, "hang" sleeps past any timeout.
class ChildTest : public ::testing::Test {
 public:
  explicit ChildTest(std::string mode) : mode_(std::move(mode)) {}
  void TestBody() override {
    const char* xml = std::getenv("XML_OUTPUT_FILE");
    std::cout << "child says: mode=" << mode_ << " xml=" << (xml == nullptr ? "unset" : xml)
              << std::endl;
    if (mode_ == "fail") ADD_FAILURE() << "failing as asked";
    if (mode_ == "abort") std::abort();
    if (mode_ == "hang") sleep(3600);
  }

 private:
  const std::string mode_;
};

[[maybe_unused]] const bool kChildRegistered = [] {
  const char* mode = std::getenv(kModeVariable);
  if (mode == nullptr) return false;
  ::testing::RegisterTest("Child", "Run", nullptr, mode, __FILE__, __LINE__,
                          [mode]() -> ::testing::Test* { return new ChildTest(mode); });
  return true;
}();

absl::StatusOr<ChildResult> RunChild(const std::string& mode, absl::Duration timeout) {
  return RunSelfAsChild({"--gtest_filter=Child.Run"}, {{kModeVariable, mode}}, timeout);
}

TEST(ChildProcessTest, PassingChildExitsZeroWithItsOutputAndWithoutTheRunnersFiles) {
  absl::StatusOr<ChildResult> child = RunChild("pass", kTimeout);
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_EQ(child->exit_code, 0) << child->output;
  EXPECT_EQ(child->signal, 0);
  EXPECT_FALSE(child->timed_out);
  EXPECT_TRUE(absl::StrContains(child->output, "child says: mode=pass xml=unset")) << child->output;
  EXPECT_TRUE(absl::StrContains(child->output, "[  PASSED  ] 1 test")) << child->output;
}

TEST(ChildProcessTest, FailingChildExitsNonZero) {
  absl::StatusOr<ChildResult> child = RunChild("fail", kTimeout);
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_EQ(child->exit_code, 1) << child->output;
  EXPECT_TRUE(absl::StrContains(child->output, "failing as asked")) << child->output;
}

TEST(ChildProcessTest, AbortingChildReportsItsSignal) {
  absl::StatusOr<ChildResult> child = RunChild("abort", kTimeout);
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_EQ(child->exit_code, -1);
  EXPECT_EQ(child->signal, SIGABRT);
}

TEST(ChildProcessTest, HangingChildIsKilledAtTheTimeout) {
  const absl::Time start = absl::Now();
  absl::StatusOr<ChildResult> child = RunChild("hang", absl::Seconds(2));
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_TRUE(child->timed_out);
  EXPECT_EQ(child->signal, SIGKILL);
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
}

}  // namespace
}  // namespace ltx
