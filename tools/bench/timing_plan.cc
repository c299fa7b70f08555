// The check of a timing plan.
#include "tools/bench/timing_plan.h"

#include "absl/strings/str_format.h"

namespace ltx {

absl::Status ValidateTimingPlan(const TimingPlan& plan) {
  if (plan.warmup < 0 || plan.iterations < 1 || plan.windows < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "timing: need -w >= 0, -n >= 1, --windows >= 1; got -w %d -n %d --windows %d",
        plan.warmup, plan.iterations, plan.windows));
  }
  return absl::OkStatus();
}

}  // namespace ltx
