// ltx_allgather: the command-line tool of ltx.
//
//   ltx_allgather                  smoke run on every visible GPU: a handful of shapes and
//                                  dtypes in both call styles, each verified byte-exact;
//                                  prints a table and PASS/FAIL.
//   ltx_allgather --bench          nccl-tests-style size sweep against the launch floor, with
//                                  NCCL side by side three ways (plain, symmetric windows, copy
//                                  engines) and the best of them.
//   ltx_allgather --overlap        a cuBLAS GEMM and the AllGather side by side on every GPU,
//                                  per AllGather style, against each alone.
//   ltx_allgather --breakdown      where the time of an AllGather goes: phases of the one-trip
//                                  or (--protocol=direct) the direct kernel per GPU; one-trip:
//                                  host cost per step of a call.
//   ltx_allgather --help           the flags, short and long.
//
// The command line is checked before anything looks for a GPU: -h/--help prints the usage and
// exits 0; a bad flag prints one line and exits 2. Exit codes: 0 pass, 1 failure, 2 nothing ran
// (bad command line or no GPU).
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/flags/command_line.h"
#include "tools/ltx_allgather/benchmark.h"
#include "tools/ltx_allgather/breakdown.h"
#include "tools/ltx_allgather/overlap.h"
#include "tools/ltx_allgather/smoke.h"
#include "tools/ltx_allgather/tool_config.h"
#include "tools/ltx_allgather/tool_flags.h"
#include "tools/testing/visible_gpus.h"

namespace ltx {
namespace {

// Prints the final verdict over `rows` (each with a `wrong` count) and returns the exit code;
// an error that stopped the run is printed and fails it.
template <typename Row>
int Verdict(const absl::StatusOr<std::vector<Row>>& rows, const char* unit) {
  if (!rows.ok()) {
    std::fprintf(stderr, "ltx_allgather: %s\n", rows.status().ToString().c_str());
    return kExitFailed;
  }
  int64_t wrong = 0;
  for (const Row& row : *rows) wrong += row.wrong;
  std::printf("# %s: %zu %s, %d with wrong results\n", wrong == 0 ? "PASS" : "FAIL", rows->size(),
              unit, static_cast<int>(wrong));
  return wrong == 0 ? kExitOk : kExitFailed;
}

int Main(int argc, char** argv) {
  ToolConfig config;
  const CommandLineOutcome parsed =
      ParseAllGatherCommandLine(std::vector<std::string>(argv, argv + argc), &config);
  if (parsed.exit_code >= 0) return FinishCommandLine(parsed);
  const int unseen = ExitUnlessDevicesVisible("ltx_allgather", config.devices, VisibleGpuCount());
  if (unseen >= 0) return unseen;
  switch (config.mode) {
    case ToolMode::kBench:
      return Verdict(RunBenchmark(config.bench_config), "sizes");
    case ToolMode::kOverlap:
      return Verdict(RunOverlap(config.overlap_config), "styles");
    case ToolMode::kBreakdown:
      return Verdict(RunBreakdown(config.breakdown), "configurations");
    case ToolMode::kSmoke:
      break;
  }
  const absl::StatusOr<SmokeResult> result = RunSmoke(config.smoke);
  if (!result.ok()) {
    std::printf("ltx_allgather: %s\n", result.status().ToString().c_str());
    return kExitFailed;
  }
  return result->failures == 0 ? kExitOk : kExitFailed;
}

}  // namespace
}  // namespace ltx

int main(int argc, char** argv) { return ltx::Main(argc, argv); }
