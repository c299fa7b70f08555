// The flags of ltx_allgather (ABSL_FLAG) and the parse of its command line into the run's
// settings: what main() does before it looks for a GPU, testable without one.
#ifndef LTX_TOOLS_LTX_ALLGATHER_TOOL_FLAGS_H_
#define LTX_TOOLS_LTX_ALLGATHER_TOOL_FLAGS_H_

#include <string>
#include <vector>

#include "tools/flags/command_line.h"
#include "tools/ltx_allgather/tool_config.h"

namespace ltx {

// Reads ltx_allgather's command line `args` (args[0] is the program): --help gives the usage
// (kExitOk); a bad flag, value or combination gives one line "ltx_allgather: <what is wrong>"
// (kExitNothingRan); otherwise exit_code < 0 and `config` holds the validated settings. Needs no
// GPU. Thread-compatible (sets the process's flags).
CommandLineOutcome ParseAllGatherCommandLine(const std::vector<std::string>& args,
                                             ToolConfig* config);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLGATHER_TOOL_FLAGS_H_
