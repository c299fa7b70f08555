// The testing harnesses' per-rank areas (tools/testing/rank_areas.h): what Create refuses
// before it touches a GPU.
#include "tools/testing/rank_areas.h"

#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace ltx {
namespace {

TEST(RankAreasTest, LentStreamsMustBeOnePerRank) {
  // Never used: Create refuses the count first.
  const std::vector<cudaStream_t> one_stream = {nullptr};
  absl::StatusOr<std::unique_ptr<RankAreas>> areas =
      RankAreas::Create({0, 0, 0}, 64, 64, /*seed=*/1, one_stream);
  ASSERT_FALSE(areas.ok());
  EXPECT_EQ(areas.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(areas.status().message().find("1 streams lent for 3 ranks"), absl::string_view::npos)
      << areas.status();
}

}  // namespace
}  // namespace ltx
