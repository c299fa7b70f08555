// The command line of ltx_allgather: its nccl-tests short flags (-b 16K -e 1G -f 8 -n 100 -w 20
// -c 1 -d bf16 -g 4 -T 10) and the usage text --help prints; help, the flag checks and the
// one-line errors are tools/flags/command_line.h's.
#ifndef LTX_TOOLS_LTX_ALLGATHER_COMMAND_LINE_H_
#define LTX_TOOLS_LTX_ALLGATHER_COMMAND_LINE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "tools/flags/command_line.h"

namespace ltx {

// The short flags of ltx_allgather: -b min_bytes, -e max_bytes, -f step_factor, -n iters,
// -w warmup, -c check (0/1), -d dtype, -g gpus, -T timeout (a plain number counts seconds).
absl::Span<const ShortFlag> AllGatherShortFlags();

// The usage text --help prints: what the tool does, every flag in its short and long forms
// with its default, the exit codes and examples.
std::string AllGatherUsageText();

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLGATHER_COMMAND_LINE_H_
