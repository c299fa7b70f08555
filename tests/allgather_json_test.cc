// Tests of ltx_allgather's benchmark JSON (tools/ltx_allgather/bench_json.h): the settings say
// how the sweep ran (split, in place, protocol, transport, blocks, timing counts, wire), beside
// the shared ones, and every row is written.
#include "tools/ltx_allgather/bench_json.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;

// The text of the JSON file that WriteJson makes of `config` and `rows`.
std::string WrittenJson(BenchConfig config, const std::vector<BenchRow>& rows) {
  const char* tmpdir = std::getenv("TEST_TMPDIR");
  config.json_path = std::string(tmpdir != nullptr ? tmpdir : "/tmp") + "/allgather.json";
  BenchRunInfo info;
  info.devices = {0, 1};
  info.nccl_version = "none";
  const absl::Status written = WriteJson(config, info, rows);
  EXPECT_TRUE(written.ok()) << written;
  std::ifstream in(config.json_path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(AllGatherJsonTest, SettingsSayHowTheSweepRan) {
  BenchConfig config;
  config.hidden = 1024;
  config.split = SplitPattern::kUneven;
  config.in_place = true;
  config.call.protocol = Protocol::kOneTrip;
  config.call.blocks = 8;
  config.runtime.transport = Transport::kPeerStores;
  config.timing.warmup = 3;
  config.timing.iterations = 40;
  config.timing.windows = 7;
  BenchRow row;
  row.size_bytes = 1 << 20;
  row.ltx_us = 12.5;
  const std::string json = WrittenJson(config, {row, row});
  for (const char* setting :
       {"\"hidden\": 1024", "\"split\": \"uneven\"", "\"in_place\": 1",
        "\"protocol\": \"one_trip\"", "\"transport\": \"peer_stores\"", "\"blocks\": 8",
        "\"warmup\": 3", "\"iters\": 40", "\"windows\": 7"}) {
    EXPECT_THAT(json, HasSubstr(setting));
  }
  EXPECT_THAT(json, ::testing::Not(HasSubstr("\"wire\"")));  // Native: not written.
  config.wire = WireFormat::kFp8E4M3;
  EXPECT_THAT(WrittenJson(config, {row}), HasSubstr("\"wire\": \"fp8_e4m3\""));
}

}  // namespace
}  // namespace ltx
