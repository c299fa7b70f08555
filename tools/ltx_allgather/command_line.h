// The command line of ltx_allgather before Abseil parses it: the nccl-tests short flags
// (-b 16K -e 1G -f 8 -n 100 -w 20 -c 1 -d bf16 -g 4 -T 10) translated into the long flags,
// --help answered with a usage text written for people, and every flag checked (name and
// value) so that a bad command line is a clear error, not Abseil's exit.
#ifndef LTX_TOOLS_LTX_ALLGATHER_COMMAND_LINE_H_
#define LTX_TOOLS_LTX_ALLGATHER_COMMAND_LINE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ltx {

// True when `args` (args[0] is the program) ask for help: -h, -help, --help, --helpfull or
// --helpshort before any "--".
bool WantsHelp(const std::vector<std::string>& args);

// The usage text --help prints: what the tool does, every flag in its short and long forms
// with its default, the exit codes and examples.
std::string UsageText();

// Rewrites the short flags of nccl-tests into long ones: "-b 16K", "-b16K" and "-b=16K" become
// "--min_bytes=16K" (likewise -e max_bytes, -f step_factor, -n iters, -w warmup, -d dtype,
// -g gpus); "-c 0" / "-c 1" become "--check=false" / "--check=true"; "-T 5" becomes
// "--timeout=5s" (a plain number counts seconds). Everything else, and everything after "--",
// is kept as is. InvalidArgument for a short flag without its value or a -c value other than
// 0/1/true/false.
absl::StatusOr<std::vector<std::string>> TranslateShortFlags(const std::vector<std::string>& args);

// Checks every flag of `args` (after translation) against the flags this program defines with
// ABSL_FLAG: an unknown name, or a value that does not parse for the flag's type, is
// InvalidArgument naming the flag. Arguments that are not flags (and negative numbers given as
// values) are left for the parser. Thread-compatible (reads the flag registry).
absl::Status CheckFlags(const std::vector<std::string>& args);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLGATHER_COMMAND_LINE_H_
