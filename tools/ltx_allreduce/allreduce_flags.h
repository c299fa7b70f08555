// The flags of ltx_allreduce (ABSL_FLAG), its usage text and the parse of its command line into
// the run's settings: what main() does before it looks for a GPU, testable without one.
#ifndef LTX_TOOLS_LTX_ALLREDUCE_ALLREDUCE_FLAGS_H_
#define LTX_TOOLS_LTX_ALLREDUCE_ALLREDUCE_FLAGS_H_

#include <string>
#include <vector>

#include "tools/flags/command_line.h"
#include "tools/ltx_allreduce/allreduce_config.h"

namespace ltx {

// The usage text --help prints: what the tool does, every flag in its short and long forms with
// its default, the exit codes and examples.
std::string AllReduceUsageText();

// Reads ltx_allreduce's command line `args` (args[0] is the program; short flags -b -e -f -n -w
// -d -g as in nccl-tests): --help gives the usage (kExitOk); a bad flag, value or combination
// gives one line "ltx_allreduce: <what is wrong>" (kExitNothingRan); otherwise exit_code < 0 and
// `config` holds the validated settings. Needs no GPU. Thread-compatible (sets the process's
// flags).
CommandLineOutcome ParseAllReduceCommandLine(const std::vector<std::string>& args,
                                             AllReduceToolConfig* config);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLREDUCE_ALLREDUCE_FLAGS_H_
