// The check of a timing plan.
#include "tools/bench/timing_plan.h"

#include <algorithm>

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

TimingPlan InWholeUnits(const TimingPlan& plan, int calls_per_unit) {
  TimingPlan rounded = plan;
  rounded.warmup = plan.warmup / calls_per_unit * calls_per_unit;
  rounded.iterations = std::max(1, plan.iterations / calls_per_unit) * calls_per_unit;
  return rounded;
}

}  // namespace ltx
