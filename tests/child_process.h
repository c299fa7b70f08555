// Running the current test binary again in a child process, so that a case which may kill its
// process's CUDA context (a fault on a GPU) cannot take the rest of the suite with it.
#ifndef LTX_TESTS_CHILD_PROCESS_H_
#define LTX_TESTS_CHILD_PROCESS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ltx {

struct ChildResult {
  // The exit code, or -1 if the child did not exit normally.
  int exit_code = -1;
  // The signal that ended the child, or 0.
  int signal = 0;
  // Whether the child was killed for running past the timeout (or because its output could
  // not be read).
  bool timed_out = false;
  // Its standard output and standard error, interleaved.
  std::string output;
};

// Runs this executable (/proc/self/exe) with `args` (after argv[0]) in a fresh process
// (posix_spawn), with this process's environment plus `env` (name, value pairs, replacing
// variables of the same name) and without the variables by which a test runner collects one
// process's results (XML_OUTPUT_FILE, GTEST_OUTPUT, TEST_PREMATURE_EXIT_FILE, sharding), so the
// child does not overwrite them. Waits for it; kills it (SIGKILL) after `timeout`. Errors:
// Internal if it cannot be started. Thread-compatible.
absl::StatusOr<ChildResult> RunSelfAsChild(
    const std::vector<std::string>& args,
    const std::vector<std::pair<std::string, std::string>>& env, absl::Duration timeout);

}  // namespace ltx

#endif  // LTX_TESTS_CHILD_PROCESS_H_
