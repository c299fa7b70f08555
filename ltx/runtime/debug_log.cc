// The debug log: LTX_DEBUG and LTX_DEBUG_FILE, read once; whole lines under a lock.
#include "ltx/runtime/debug_log.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace ltx {
namespace {

// Where the lines go: opened once, never closed (lines may come until the process ends).
struct Sink {
  absl::Mutex mu;
  std::FILE* file = nullptr;
};

Sink& TheSink() {
  static Sink* const sink = [] {
    Sink* s = new Sink;
    const char* path = std::getenv("LTX_DEBUG_FILE");
    if (path != nullptr && path[0] != '\0') s->file = std::fopen(path, "a");
    if (s->file == nullptr) {
      if (path != nullptr && path[0] != '\0') {
        std::fprintf(stderr, "ltx: LTX_DEBUG_FILE=%s cannot be opened; the debug log goes to "
                             "stderr\n", path);
      }
      s->file = stderr;
    }
    return s;
  }();
  return *sink;
}

const char* LevelName(DebugLevel level) {
  return level == DebugLevel::kTrace ? "TRACE" : "INFO";
}

}  // namespace

DebugLevel ParseDebugLevel(const char* value, bool* unknown) {
  if (unknown != nullptr) *unknown = false;
  if (value == nullptr || value[0] == '\0') return DebugLevel::kOff;
  const std::string name = absl::AsciiStrToUpper(value);
  if (name == "INFO") return DebugLevel::kInfo;
  if (name == "TRACE") return DebugLevel::kTrace;
  if (unknown != nullptr) *unknown = true;
  return DebugLevel::kInfo;
}

DebugLevel ProcessDebugLevel() {
  static const DebugLevel level = [] {
    bool unknown = false;
    const char* value = std::getenv("LTX_DEBUG");
    const DebugLevel parsed = ParseDebugLevel(value, &unknown);
    if (unknown) {
      std::fprintf(stderr, "ltx: LTX_DEBUG=%s is not INFO or TRACE; logging at INFO\n", value);
    }
    return parsed;
  }();
  return level;
}

void DebugLine(DebugLevel level, absl::string_view line) {
  if (!DebugEnabled(level)) return;
  static const absl::Time first_line = absl::Now();
  const std::string mark =
      level == DebugLevel::kTrace
          ? absl::StrFormat(" %.6f", absl::ToDoubleSeconds(absl::Now() - first_line))
          : "";
  const std::string whole = absl::StrCat("ltx ", LevelName(level), " ",
                                         static_cast<int>(getpid()), mark, " ", line, "\n");
  Sink& sink = TheSink();
  absl::MutexLock lock(&sink.mu);
  std::fwrite(whole.data(), 1, whole.size(), sink.file);
  std::fflush(sink.file);
}

}  // namespace ltx
