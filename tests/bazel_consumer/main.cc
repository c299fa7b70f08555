// A program in another Bazel workspace that depends on @ltx//ltx (see ltx/docs/building.md):
// it creates a Runtime over every visible GPU and exits 0 when that works or
// fails only because there is no GPU.
#include <cstdio>
#include <memory>

#include "absl/status/statusor.h"
#include "ltx/runtime.h"

int main() {
  absl::StatusOr<std::unique_ptr<ltx::Runtime>> runtime = ltx::Runtime::Create({});
  if (!runtime.ok()) {
    std::printf("create: %s\n", runtime.status().ToString().c_str());
    return absl::IsFailedPrecondition(runtime.status()) ? 0 : 1;
  }
  std::printf("create: a Runtime over %d GPU(s)\n", (*runtime)->world_size());
  return 0;
}
