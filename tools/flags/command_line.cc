// Short-flag translation, help, flag checks and GPU checks of the tools' command lines.
#include "tools/flags/command_line.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace ltx {
namespace {

// The entry of `short_flags` for `letter`; null when there is none.
const ShortFlag* FindShortFlag(absl::Span<const ShortFlag> short_flags, char letter) {
  for (const ShortFlag& flag : short_flags) {
    if (flag.letter == letter) return &flag;
  }
  return nullptr;
}

// The long form of short flag `flag` with `value`.
absl::StatusOr<std::string> LongForm(const ShortFlag& flag, const std::string& value) {
  const absl::string_view name = flag.long_name;
  if (name == "check") {
    if (value == "0" || value == "false") return std::string("--check=false");
    if (value == "1" || value == "true") return std::string("--check=true");
    return absl::InvalidArgumentError(
        absl::StrFormat("-%c %s: expected 0 or 1 (check the results or not)", flag.letter, value));
  }
  double seconds = 0;
  if (name == "timeout" && absl::SimpleAtod(value, &seconds)) {
    return absl::StrCat("--timeout=", value, "s");
  }
  return absl::StrCat("--", flag.long_name, "=", value);
}

// True for an argument that is a negative number (a value, not a flag).
bool IsNegativeNumber(absl::string_view arg) {
  return arg.size() >= 2 && arg[0] == '-' &&
         (std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.');
}

// Checks one flag argument args[*i] (and its value in args[*i + 1], which it then skips).
absl::Status CheckFlag(const std::vector<std::string>& args, size_t* i) {
  absl::string_view arg = args[*i];
  arg.remove_prefix(absl::StartsWith(arg, "--") ? 2 : 1);
  const size_t equals = arg.find('=');
  const absl::string_view name = arg.substr(0, equals);
  const bool has_value = equals != absl::string_view::npos;
  absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  if (flag == nullptr && absl::StartsWith(name, "no") && !has_value) {
    absl::CommandLineFlag* negated = absl::FindCommandLineFlag(name.substr(2));
    if (negated != nullptr && negated->IsOfType<bool>()) return absl::OkStatus();
  }
  if (flag == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("unknown flag '%s'; --help lists the flags", args[*i]));
  }
  if (!has_value && flag->IsOfType<bool>()) return absl::OkStatus();
  std::string value;
  if (has_value) {
    value = std::string(arg.substr(equals + 1));
  } else if (*i + 1 < args.size()) {
    value = args[++*i];
  } else {
    return absl::InvalidArgumentError(absl::StrFormat("--%s needs a value", name));
  }
  std::string error;
  if (!flag->ParseFrom(value, &error)) {
    return absl::InvalidArgumentError(absl::StrFormat("--%s=%s: %s", name, value, error));
  }
  return absl::OkStatus();
}

}  // namespace

bool WantsHelp(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "-help" || arg == "--help" || arg == "--helpfull" ||
        arg == "--helpshort") {
      return true;
    }
  }
  return false;
}

absl::StatusOr<std::vector<std::string>> TranslateShortFlags(
    const std::vector<std::string>& args, absl::Span<const ShortFlag> short_flags) {
  std::vector<std::string> out(args.begin(), args.begin() + std::min<size_t>(1, args.size()));
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      out.insert(out.end(), args.begin() + i, args.end());
      break;
    }
    const ShortFlag* flag =
        arg.size() >= 2 && arg[0] == '-' ? FindShortFlag(short_flags, arg[1]) : nullptr;
    const std::string rest = flag != nullptr ? arg.substr(2) : std::string();
    if (flag == nullptr) {
      out.push_back(arg);
      continue;
    }
    std::string value;
    if (rest.empty()) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("-%c needs a value (-%c VALUE is --%s=VALUE)", flag->letter,
                            flag->letter, flag->long_name));
      }
      value = args[++i];
    } else if (rest[0] == '=') {
      value = rest.substr(1);
    } else if (std::isdigit(static_cast<unsigned char>(rest[0])) || rest[0] == '.') {
      value = rest;
    } else {
      out.push_back(arg);  // A long flag with one dash, e.g. -dtype=bf16.
      continue;
    }
    absl::StatusOr<std::string> long_form = LongForm(*flag, value);
    if (!long_form.ok()) return long_form.status();
    out.push_back(*std::move(long_form));
  }
  return out;
}

absl::Status CheckFlags(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 2 || arg[0] != '-' || IsNegativeNumber(arg)) continue;
    absl::Status status = CheckFlag(args, &i);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

CommandLineOutcome ParseToolCommandLine(const std::vector<std::string>& args,
                                        const CommandLineSpec& spec,
                                        const std::function<absl::Status()>& read_flags) {
  if (WantsHelp(args)) return CommandLineOutcome{kExitOk, spec.usage};
  absl::StatusOr<std::vector<std::string>> translated = TranslateShortFlags(args, spec.short_flags);
  absl::Status status = translated.ok() ? CheckFlags(*translated) : translated.status();
  if (status.ok()) {
    std::vector<char*> pointers;
    for (std::string& arg : *translated) pointers.push_back(arg.data());
    const std::vector<char*> positional =
        absl::ParseCommandLine(static_cast<int>(pointers.size()), pointers.data());
    if (positional.size() > 1) {
      status = absl::InvalidArgumentError(
          absl::StrCat("unexpected argument '", positional[1], "'; --help lists the flags"));
    }
  }
  if (status.ok()) status = read_flags();
  if (status.ok()) return CommandLineOutcome{};
  return CommandLineOutcome{kExitNothingRan,
                            absl::StrCat(spec.program, ": ", status.message(), "\n")};
}

int FinishCommandLine(const CommandLineOutcome& outcome) {
  std::fputs(outcome.text.c_str(), outcome.exit_code == kExitOk ? stdout : stderr);
  return outcome.exit_code;
}

absl::Status CheckDevicesVisible(const std::vector<int>& devices, int visible) {
  if (visible <= 0) {
    return absl::FailedPreconditionError("no CUDA GPU is visible; nothing to run (exit 2)");
  }
  for (int device : devices) {
    if (device >= visible) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "GPU %d is not visible (%d visible: 0 to %d): name visible GPUs with -g or --devices",
          device, visible, visible - 1));
    }
  }
  return absl::OkStatus();
}

int ExitUnlessDevicesVisible(const char* program, const std::vector<int>& devices, int visible) {
  const absl::Status status = CheckDevicesVisible(devices, visible);
  if (status.ok()) return -1;
  std::fprintf(stderr, "%s: %s\n", program, std::string(status.message()).c_str());
  return kExitNothingRan;
}

absl::Status ForFlag(absl::string_view flag, const absl::Status& status) {
  return absl::InvalidArgumentError(absl::StrCat(flag, ": ", status.message()));
}

absl::Status RefuseGivenFlags(absl::Span<const GivenFlag> flags, absl::string_view takers) {
  for (const GivenFlag& flag : flags) {
    if (flag.given) {
      return absl::InvalidArgumentError(absl::StrCat(flag.name, ": only ", takers, " takes it"));
    }
  }
  return absl::OkStatus();
}

}  // namespace ltx
