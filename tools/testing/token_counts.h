// Token-count vectors that the GPU tests of every collective share: uneven counts, and the
// patterns with zero-token ranks.
#ifndef LTX_TOOLS_TESTING_TOKEN_COUNTS_H_
#define LTX_TOOLS_TESTING_TOKEN_COUNTS_H_

#include <cstdint>
#include <vector>

namespace ltx {

// `world` uneven counts: base + 3 * rank + (rank % 2).
std::vector<int64_t> UnevenCounts(int world, int64_t base);

// Every rank at zero; then, for each rank in turn, UnevenCounts(world, uneven_base) with that
// rank at zero; then only the last rank with tokens (`only_last` of them).
std::vector<std::vector<int64_t>> ZeroTokenPatterns(int world, int64_t uneven_base,
                                                    int64_t only_last);

}  // namespace ltx

#endif  // LTX_TOOLS_TESTING_TOKEN_COUNTS_H_
