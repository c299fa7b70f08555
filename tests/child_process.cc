// posix_spawn of the test binary itself, with its output collected through a pipe.
#include "tests/child_process.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

extern char** environ;

namespace ltx {
namespace {

// Variables by which a test runner collects the results of the process it started.
constexpr const char* kRunnerVariables[] = {"XML_OUTPUT_FILE",          "GTEST_OUTPUT",
                                            "TEST_PREMATURE_EXIT_FILE", "TEST_SHARD_INDEX",
                                            "TEST_TOTAL_SHARDS",        "TEST_SHARD_STATUS_FILE",
                                            "GTEST_SHARD_INDEX",        "GTEST_TOTAL_SHARDS",
                                            "GTEST_SHARD_STATUS_FILE",  "GTEST_FILTER"};

absl::Status ErrnoStatus(const char* what, int error) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(error)));
}

std::vector<std::string> ChildEnvironment(
    const std::vector<std::pair<std::string, std::string>>& env) {
  std::vector<std::string> result;
  for (char** variable = environ; *variable != nullptr; ++variable) {
    const auto named = [variable](absl::string_view name) {
      return absl::StartsWith(*variable, absl::StrCat(name, "="));
    };
    if (std::any_of(std::begin(kRunnerVariables), std::end(kRunnerVariables), named)) continue;
    if (std::any_of(env.begin(), env.end(), [&](const auto& e) { return named(e.first); })) {
      continue;
    }
    result.push_back(*variable);
  }
  for (const auto& [name, value] : env) result.push_back(absl::StrCat(name, "=", value));
  return result;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// Reads `fd` until end of file; false if `deadline` passed first or reading failed.
bool ReadUntilEnd(int fd, absl::Time deadline, std::string* output) {
  char chunk[4096];
  for (;;) {
    const int64_t left_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left_ms <= 0) return false;
    pollfd poll_fd = {fd, POLLIN, 0};
    const int ready = poll(&poll_fd, 1, static_cast<int>(std::min<int64_t>(left_ms, 1000)));
    if (ready < 0 && errno != EINTR) return false;
    if (ready <= 0) continue;
    const ssize_t n = read(fd, chunk, sizeof(chunk));
    if (n == 0) return true;
    if (n < 0 && errno != EINTR) return false;
    if (n > 0) output->append(chunk, n);
  }
}

}  // namespace

absl::StatusOr<ChildResult> RunSelfAsChild(
    const std::vector<std::string>& args,
    const std::vector<std::pair<std::string, std::string>>& env, absl::Duration timeout) {
  char path[PATH_MAX] = {};
  const ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (length <= 0) return ErrnoStatus("readlink(/proc/self/exe)", errno);
  std::vector<std::string> argv = {path};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> envp = ChildEnvironment(env);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return ErrnoStatus("pipe2", errno);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  std::vector<char*> argv_pointers = Pointers(argv);
  std::vector<char*> envp_pointers = Pointers(envp);
  pid_t pid = -1;
  const int spawned =
      posix_spawn(&pid, path, &actions, nullptr, argv_pointers.data(), envp_pointers.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    return ErrnoStatus("posix_spawn", spawned);
  }
  ChildResult result;
  result.timed_out = !ReadUntilEnd(fds[0], absl::Now() + timeout, &result.output);
  close(fds[0]);
  if (result.timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace ltx
