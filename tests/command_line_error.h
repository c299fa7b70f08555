// The CPU tests' check of a tool's command-line refusal: one line, "<program>: <what is wrong>",
// and the exit code that says nothing ran.
#ifndef LTX_TESTS_COMMAND_LINE_ERROR_H_
#define LTX_TESTS_COMMAND_LINE_ERROR_H_

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/flags/command_line.h"

namespace ltx {

// "" when `outcome` says run; else expects kExitNothingRan and one line starting with
// "`program`: ", and returns that line.
inline std::string OneLineError(const CommandLineOutcome& outcome, const std::string& program) {
  if (outcome.exit_code < 0) return "";
  EXPECT_EQ(outcome.exit_code, kExitNothingRan);
  EXPECT_THAT(outcome.text, ::testing::StartsWith(program + ": "));
  EXPECT_EQ(outcome.text.find('\n'), outcome.text.size() - 1) << outcome.text;
  return outcome.text;
}

}  // namespace ltx

#endif  // LTX_TESTS_COMMAND_LINE_ERROR_H_
