// Names of the reductions.
#include "ltx/reduction.h"

#include "absl/strings/str_cat.h"

namespace ltx {

std::string ReductionName(Reduction reduction) {
  switch (reduction) {
    case Reduction::kSum:
      return "sum";
    case Reduction::kMax:
      return "max";
    case Reduction::kMin:
      return "min";
  }
  return absl::StrCat("unknown(", static_cast<int32_t>(reduction), ")");
}

}  // namespace ltx
