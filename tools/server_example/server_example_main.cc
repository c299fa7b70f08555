// ltx_server_example: runs the server-loop example (tools/server_example/server_example.h) on
// every visible GPU.
// Exit 0 when every step's result was right, 1 on an error, 2 without a GPU.
#include <cstdio>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/time/time.h"
#include "tools/server_example/server_example.h"
#include "tools/testing/visible_gpus.h"

ABSL_FLAG(int, steps, 200, "Graph replays per GPU.");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  if (ltx::VisibleGpuCount() == 0) {
    std::printf("ltx_server_example: no CUDA GPU is visible; nothing to run (exit 2)\n");
    return 2;
  }
  ltx::ServerExampleOptions options;
  options.steps = absl::GetFlag(FLAGS_steps);
  const absl::StatusOr<ltx::ServerExampleReport> report = ltx::RunServerExample(options);
  if (!report.ok()) {
    std::printf("ltx_server_example: FAIL: %s\n", report.status().ToString().c_str());
    return 1;
  }
  std::printf(
      "ltx_server_example: PASS: %d GPUs, %d steps of compute -> all_gather -> compute "
      "replayed from CUDA graphs, every checksum right (%.1f us per step)\n",
      report->world_size, report->steps,
      absl::ToDoubleMicroseconds(report->elapsed) / report->steps);
  return 0;
}
