// Which of the AllReduce's two paths ltx_allreduce's benchmark times (--path): the Runtime's
// choice, the one-shot or the two-shot (ltx/docs/allreduce.md), forced per call through
// CallOptions::two_shot_min_bytes; "both" times the one-shot and the two-shot side by side.
// Pure (no GPU).
#ifndef LTX_TOOLS_LTX_ALLREDUCE_ALLREDUCE_PATH_H_
#define LTX_TOOLS_LTX_ALLREDUCE_ALLREDUCE_PATH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/optional.h"

namespace ltx {

enum class AllReducePath {
  kAuto,     // The Runtime's threshold (RuntimeOptions::two_shot_min_bytes).
  kOneShot,  // CallOptions::two_shot_min_bytes = kNeverTwoShot.
  kTwoShot,  // CallOptions::two_shot_min_bytes = 0.
};

// "auto", "one_shot" or "two_shot", as --path, the table and the JSON name a path.
// Thread-safe (pure).
std::string AllReducePathName(AllReducePath path);

// The paths --path names: auto, one_shot or two_shot alone, or both (one_shot, then two_shot).
// InvalidArgument naming --path otherwise. Thread-safe (pure).
absl::StatusOr<std::vector<AllReducePath>> ParseAllReducePaths(absl::string_view name);

// The --path value that names `paths` (ParseAllReducePaths' inverse): "both" for the one-shot
// and the two-shot. Requires paths that ParseAllReducePaths returns. Thread-safe (pure).
std::string AllReducePathsFlagName(const std::vector<AllReducePath>& paths);

// The CallOptions::two_shot_min_bytes that takes `path`: kNeverTwoShot for the one-shot, 0 for
// the two-shot, unset (the Runtime's threshold) for auto. Thread-safe (pure).
absl::optional<int64_t> TwoShotMinBytesOf(AllReducePath path);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLREDUCE_ALLREDUCE_PATH_H_
