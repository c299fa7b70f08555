// The command line of the tools (ltx_allgather, ltx_alltoall, ltx_server_example) before and
// while Abseil parses it: nccl-tests short flags translated into long ones, --help answered with
// the tool's own usage text, every flag checked (name and value) so that a bad command line is
// one clear line and exit 2, not Abseil's exit; and the check that the ranks' GPUs are visible.
#ifndef LTX_TOOLS_FLAGS_COMMAND_LINE_H_
#define LTX_TOOLS_FLAGS_COMMAND_LINE_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace ltx {

// The tools' exit codes: it ran and passed; it ran and failed (a wrong result or an error while
// running); nothing ran (help asked for: kExitOk; a bad command line or no GPU: kExitNothingRan).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitNothingRan = 2;

// A short flag of nccl-tests and the long flag it stands for ("check" takes 0/1, "timeout" a
// plain number of seconds; see TranslateShortFlags).
struct ShortFlag {
  char letter;
  const char* long_name;
};

// True when `args` (args[0] is the program) ask for help: -h, -help, --help, --helpfull or
// --helpshort before any "--".
bool WantsHelp(const std::vector<std::string>& args);

// Rewrites the short flags of `short_flags` into long ones: "-b 16K", "-b16K" and "-b=16K"
// become "--min_bytes=16K" when {'b', "min_bytes"} is among them; a short flag for "check" maps
// "0"/"false" and "1"/"true" to "--check=false"/"--check=true"; one for "timeout" gives a plain
// number the unit "s". Everything else, and everything after "--", is kept as is.
// InvalidArgument for a short flag without its value or a check value other than those.
absl::StatusOr<std::vector<std::string>> TranslateShortFlags(
    const std::vector<std::string>& args, absl::Span<const ShortFlag> short_flags);

// Checks every flag of `args` (after translation) against the flags this program defines with
// ABSL_FLAG: an unknown name, or a value that does not parse for the flag's type, is
// InvalidArgument naming the flag. Arguments that are not flags (and negative numbers given as
// values) are left for the parser. Thread-compatible (reads the flag registry).
absl::Status CheckFlags(const std::vector<std::string>& args);

// `status`'s message with "`flag`: " before it, as InvalidArgument: a flag's value that did not
// parse (e.g. ForFlag("--protocol", ParseProtocol(text).status())). Thread-safe (pure).
absl::Status ForFlag(absl::string_view flag, const absl::Status& status);

// A flag of a command line and whether it was given (set away from its default).
struct GivenFlag {
  bool given;
  const char* name;  // As the help shows it, e.g. "-b/--min_bytes".
};

// InvalidArgument "<name>: only <takers> takes it" for the first of `flags` that was given, for
// a mode that reads none of them; OK when none was. Thread-safe (pure).
absl::Status RefuseGivenFlags(absl::Span<const GivenFlag> flags, absl::string_view takers);

// What a tool's command line says to do: run (exit_code < 0), or exit at once with exit_code
// after printing `text` (the usage text for kExitOk, one line "<program>: <what is wrong>" for
// kExitNothingRan).
struct CommandLineOutcome {
  int exit_code = -1;
  std::string text;
};

// How one tool reads its command line.
struct CommandLineSpec {
  const char* program = "";                 // Names the tool in error lines.
  absl::Span<const ShortFlag> short_flags;  // The nccl-tests short flags the tool takes.
  std::string usage;                        // What --help prints.
};

// Reads `args` (args[0] is the program): help gives the usage; otherwise the short flags are
// translated, every flag checked and Abseil's flags set from them, a positional argument
// refused, and then `read_flags` reads and validates the flag values (its error is the tool's
// one line). Needs no GPU. Thread-compatible (sets the process's flags).
CommandLineOutcome ParseToolCommandLine(const std::vector<std::string>& args,
                                        const CommandLineSpec& spec,
                                        const std::function<absl::Status()>& read_flags);

// ParseToolCommandLine for a tool whose settings `make_settings()` builds from its flags (an
// absl::StatusOr<Settings>, its error the tool's one line): `settings` receives them when they
// are valid. Needs no GPU. Thread-compatible (sets the process's flags).
template <typename Settings, typename MakeSettings>
CommandLineOutcome ParseToolSettings(const std::vector<std::string>& args,
                                     const CommandLineSpec& spec, const MakeSettings& make_settings,
                                     Settings* settings) {
  return ParseToolCommandLine(args, spec, [&] {
    absl::StatusOr<Settings> made = make_settings();
    if (made.ok()) *settings = *std::move(made);
    return made.status();
  });
}

// Prints outcome.text (to stdout for kExitOk, else to stderr) and returns outcome.exit_code.
int FinishCommandLine(const CommandLineOutcome& outcome);

// OK when `visible` GPUs hold every device of `devices` (the ranks' CUDA ordinals; empty: every
// visible GPU). FailedPrecondition when no GPU is visible, InvalidArgument naming a device that
// is not (repeats are fine: ranks may share a GPU). Thread-safe (pure).
absl::Status CheckDevicesVisible(const std::vector<int>& devices, int visible);

// The tool's check of its GPUs, after the command line: -1 when `devices` are visible (among the
// `visible` GPUs); else prints "<program>: <why>" to stderr and returns kExitNothingRan.
int ExitUnlessDevicesVisible(const char* program, const std::vector<int>& devices, int visible);

}  // namespace ltx

#endif  // LTX_TOOLS_FLAGS_COMMAND_LINE_H_
