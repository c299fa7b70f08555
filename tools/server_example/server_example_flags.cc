// ltx_server_example's flags, usage text and the parse of its command line.
#include "tools/server_example/server_example_flags.h"

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "ltx/status_macros.h"
#include "tools/flags/device_list.h"

ABSL_FLAG(int, steps, ltx::ServerExampleOptions().steps, "Graph replays per GPU (>= 1).");
ABSL_FLAG(std::string, devices, "",
          "CUDA device ordinals in rank order, e.g. 3,1 or 0,0 (ranks sharing a GPU).");
ABSL_FLAG(int, gpus, 0, "-g: use GPUs 0..N-1; 0 = every visible GPU.");

namespace ltx {
namespace {

constexpr ShortFlag kShortFlags[] = {{'g', "gpus"}};

// The example's options from the flags as the command line set them; InvalidArgument naming a
// bad flag.
absl::Status ReadFlags(ServerExampleOptions* options) {
  LTX_ASSIGN_OR_RETURN(options->devices,
                       DevicesOfFlags(absl::GetFlag(FLAGS_devices), absl::GetFlag(FLAGS_gpus)));
  options->steps = absl::GetFlag(FLAGS_steps);
  if (options->steps < 1) return absl::InvalidArgumentError("--steps: must be >= 1");
  return absl::OkStatus();
}

}  // namespace

CommandLineOutcome ParseServerExampleCommandLine(const std::vector<std::string>& args,
                                                 ServerExampleOptions* options) {
  return ParseToolCommandLine(args,
                              {"ltx_server_example", kShortFlags, ServerExampleUsageText()},
                              [&] { return ReadFlags(options); });
}

std::string ServerExampleUsageText() {
  return R"(ltx_server_example: the server loop of tools/server_example: one thread per rank runs
compute -> AllGather -> compute, captured once into a CUDA graph and replayed every step, each
step's result checked; ends with PASS (and the time per step) or FAIL.

  ltx_server_example [FLAGS]

Flags:
        --steps=N                graph replays per rank (default 200)
    -g, --gpus=N                 use GPUs 0..N-1 (default 0: every visible GPU)
        --devices=3,1            CUDA device ordinals in rank order, 1 to 8 (instead of -g);
                                 a GPU may repeat: its ranks share it (e.g. 0,0,0,0)
  -h, --help                     this text

Exit codes: 0 pass; 1 a failure (a wrong checksum or an error while running); 2 nothing ran
(a bad command line, or no GPU visible).

Examples:
  ltx_server_example
  ltx_server_example --steps=1000 -g 2
  ltx_server_example --devices=0,0,0,0
)";
}

}  // namespace ltx
