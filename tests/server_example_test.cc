// Runs the server-loop example (tools/server_example/server_example.h), so that it is built and
// exercised with the tests.
#include "tools/server_example/server_example.h"

#include "gtest/gtest.h"
#include "tools/testing/gpu_fixture.h"

namespace ltx {
namespace {

TEST(ServerExampleTest, GraphReplayedServerLoopGivesTheRightChecksums) {
  LTX_REQUIRE_RANKS(2);
  ServerExampleOptions options;
  options.devices = TestRankDevices(2);
  options.steps = 300;
  const absl::StatusOr<ServerExampleReport> report = RunServerExample(options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->steps, 300);
  EXPECT_EQ(report->world_size, static_cast<int>(options.devices.size()));
}

}  // namespace
}  // namespace ltx
