// The debug log: what ltx decided and why, for a person reading it, off by default.
//   LTX_DEBUG=INFO   the Runtime's placement and settings at creation, one line per distinct call
//                    (collective, rank, sizes, path and why, blocks), each error once;
//   LTX_DEBUG=TRACE  every call too, and each one again once CUDA has taken it;
//   LTX_DEBUG_FILE   appends there instead of to stderr.
// The environment is read once per process, at the first use. Lines look like
//   ltx INFO 12345 all_gather rank 0: shard 8192 B (largest 8192 B), protocol one_trip ...
#ifndef LTX_RUNTIME_DEBUG_LOG_H_
#define LTX_RUNTIME_DEBUG_LOG_H_

#include <string>

#include "absl/strings/string_view.h"

namespace ltx {

enum class DebugLevel {
  kOff = 0,
  kInfo = 1,
  kTrace = 2,
};

// The level LTX_DEBUG names, ignoring case: unset or empty is kOff, "INFO" kInfo, "TRACE" kTrace.
// Any other value is kInfo, and `*unknown` (if not null) is set to true so the caller can say
// so. Thread-safe (pure).
DebugLevel ParseDebugLevel(const char* value, bool* unknown);

// This process's level (LTX_DEBUG, read once). Thread-safe; one relaxed load after the first
// call.
DebugLevel ProcessDebugLevel();

// Whether lines of `level` are written.
inline bool DebugEnabled(DebugLevel level) {
  return level != DebugLevel::kOff && ProcessDebugLevel() >= level;
}

// Writes "ltx <LEVEL> <pid> <line>\n" to LTX_DEBUG_FILE (appended) or stderr, whole, when
// `level` is enabled; a TRACE line also has the seconds since the process's first debug line,
// to the microsecond, after the pid ("ltx TRACE 3029 0.001234 <line>"), so that the lines of
// ranks' threads can be set against each other and against a timeout. Thread-safe: lines of
// concurrent callers do not interleave.
void DebugLine(DebugLevel level, absl::string_view line);

}  // namespace ltx

#endif  // LTX_RUNTIME_DEBUG_LOG_H_
