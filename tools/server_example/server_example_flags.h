// The flags of ltx_server_example (ABSL_FLAG), its usage text and the parse of its command line
// into the example's options: what main() does before it looks for a GPU, testable without one.
#ifndef LTX_TOOLS_SERVER_EXAMPLE_SERVER_EXAMPLE_FLAGS_H_
#define LTX_TOOLS_SERVER_EXAMPLE_SERVER_EXAMPLE_FLAGS_H_

#include <string>
#include <vector>

#include "tools/flags/command_line.h"
#include "tools/server_example/server_example.h"

namespace ltx {

// The usage text --help prints: what the example does, every flag with its default, the exit
// codes and examples.
std::string ServerExampleUsageText();

// Reads ltx_server_example's command line `args` (args[0] is the program; -g as in nccl-tests):
// --help gives the usage (kExitOk); a bad flag or value gives one line
// "ltx_server_example: <what is wrong>" (kExitNothingRan); otherwise exit_code < 0 and
// `options` holds --steps and the ranks' devices. Needs no GPU. Thread-compatible (sets the
// process's flags).
CommandLineOutcome ParseServerExampleCommandLine(const std::vector<std::string>& args,
                                                 ServerExampleOptions* options);

}  // namespace ltx

#endif  // LTX_TOOLS_SERVER_EXAMPLE_SERVER_EXAMPLE_FLAGS_H_
