// ltx_server_example: runs the server-loop example (tools/server_example/server_example.h) on
// the GPUs of --devices or -g (default: every visible GPU).
// The command line is checked before anything looks for a GPU: -h/--help prints the usage and
// exits 0; a bad flag prints one line and exits 2. Exit 0 when every step's result was right,
// 1 on an error, 2 when nothing ran (bad command line, no GPU, a device not visible).
#include <cstdio>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tools/flags/command_line.h"
#include "tools/server_example/server_example.h"
#include "tools/server_example/server_example_flags.h"
#include "tools/testing/visible_gpus.h"

int main(int argc, char** argv) {
  ltx::ServerExampleOptions options;
  const ltx::CommandLineOutcome parsed = ltx::ParseServerExampleCommandLine(
      std::vector<std::string>(argv, argv + argc), &options);
  if (parsed.exit_code >= 0) return ltx::FinishCommandLine(parsed);
  const int unseen =
      ltx::ExitUnlessDevicesVisible("ltx_server_example", options.devices, ltx::VisibleGpuCount());
  if (unseen >= 0) return unseen;
  const absl::StatusOr<ltx::ServerExampleReport> report = ltx::RunServerExample(options);
  if (!report.ok()) {
    std::printf("ltx_server_example: FAIL: %s\n", report.status().ToString().c_str());
    return ltx::kExitFailed;
  }
  std::printf(
      "ltx_server_example: PASS: %d GPUs, %d steps of compute -> all_gather -> compute "
      "replayed from CUDA graphs, every checksum right (%.1f us per step)\n",
      report->world_size, report->steps,
      absl::ToDoubleMicroseconds(report->elapsed) / report->steps);
  return ltx::kExitOk;
}
