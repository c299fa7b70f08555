// Token-count vectors for the GPU tests.
#include "tools/testing/token_counts.h"

namespace ltx {

std::vector<int64_t> UnevenCounts(int world, int64_t base) {
  std::vector<int64_t> counts;
  for (int rank = 0; rank < world; ++rank) counts.push_back(base + 3 * rank + (rank % 2));
  return counts;
}

std::vector<std::vector<int64_t>> ZeroTokenPatterns(int world, int64_t uneven_base,
                                                    int64_t only_last) {
  std::vector<std::vector<int64_t>> patterns = {std::vector<int64_t>(world, 0)};
  for (int zero = 0; zero < world; ++zero) {
    std::vector<int64_t> counts = UnevenCounts(world, uneven_base);
    counts[zero] = 0;
    patterns.push_back(counts);
  }
  std::vector<int64_t> last(world, 0);
  last.back() = only_last;
  patterns.push_back(last);
  return patterns;
}

}  // namespace ltx
