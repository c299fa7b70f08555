// The AllReduce's paths as ltx_allreduce's benchmark names and forces them.
#include "tools/ltx_allreduce/allreduce_path.h"

#include "absl/strings/str_format.h"
#include "ltx/runtime_options.h"

namespace ltx {
namespace {

constexpr char kBoth[] = "both";

}  // namespace

std::string AllReducePathName(AllReducePath path) {
  switch (path) {
    case AllReducePath::kOneShot:
      return "one_shot";
    case AllReducePath::kTwoShot:
      return "two_shot";
    case AllReducePath::kAuto:
      break;
  }
  return "auto";
}

absl::StatusOr<std::vector<AllReducePath>> ParseAllReducePaths(absl::string_view name) {
  if (name == kBoth) {
    return std::vector<AllReducePath>{AllReducePath::kOneShot, AllReducePath::kTwoShot};
  }
  for (AllReducePath path :
       {AllReducePath::kAuto, AllReducePath::kOneShot, AllReducePath::kTwoShot}) {
    if (name == AllReducePathName(path)) return std::vector<AllReducePath>{path};
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("--path: '%s' is not auto, one_shot, two_shot or both", name));
}

std::string AllReducePathsFlagName(const std::vector<AllReducePath>& paths) {
  return paths.size() == 1 ? AllReducePathName(paths.front()) : kBoth;
}

absl::optional<int64_t> TwoShotMinBytesOf(AllReducePath path) {
  switch (path) {
    case AllReducePath::kOneShot:
      return kNeverTwoShot;
    case AllReducePath::kTwoShot:
      return 0;
    case AllReducePath::kAuto:
      break;
  }
  return absl::nullopt;
}

}  // namespace ltx
