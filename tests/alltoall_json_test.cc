// Tests of ltx_alltoall's benchmark JSON (tools/ltx_alltoall/alltoall_json.h) and the JSON
// document every benchmark writes (tools/bench/json_document.h): the settings, one row object a
// line, NCCL's modes measured or unavailable with the reason, and the file written or refused.
#include "tools/ltx_alltoall/alltoall_json.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/bench/json_document.h"
#include "tools/bench/nccl_best.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A graph-style run on GPUs 0 and 1 with a head split of 12 and 20.
AllToAllToolConfig GraphConfig() {
  AllToAllToolConfig config;
  config.style = BenchStyle::kGraph;
  config.head_counts = {12, 20};
  return config;
}

// A row measured by ltx and by plain NCCL; window and ce unavailable, each with its reason.
AllToAllBenchRow MeasuredRow() {
  AllToAllBenchRow row;
  row.shape = {1024, 32, 128};
  row.size_bytes = 4194304;
  row.count = 2097152;
  row.protocol = Protocol::kDirect;
  row.ltx_us = 16.5;
  row.ltx_algbw = 254.2;
  row.ltx_busbw = 127.1;
  row.nccl_transfer_us = 19.5;
  row.nccl_permute_us = 9;
  At(row.nccl, NcclMode::kPlain).us = 28.5;
  At(row.nccl, NcclMode::kPlain).busbw = 73.6;
  At(row.nccl, NcclMode::kWindows).why_not = "not for \"send/recv\"";
  At(row.nccl, NcclMode::kCopyEngine).why_not = "NCCL 2.21.5 has no copy-engine collectives";
  return row;
}

TEST(AllToAllJsonTest, SettingsThenOneRowALine) {
  AllToAllBenchRow refused;  // One-trip refused the shape; NCCL not loaded.
  refused.direction = AllToAllDirection::kHeadsToSeq;
  refused.shape = {32640, 32, 128};
  refused.size_bytes = 133693440;
  refused.count = 66846720;
  refused.protocol = Protocol::kOneTrip;
  const std::string text =
      JsonDocumentText(AllToAllJson(GraphConfig(), {0, 1}, "2.28.3", {MeasuredRow(), refused}));
  EXPECT_EQ(
      text,
      "{\n"
      "  \"world_size\": 2,\n"
      "  \"devices\": [0, 1],\n"
      "  \"dtype\": \"bf16\",\n"
      "  \"batch\": 1,\n"
      "  \"head_counts\": [12, 20],\n"
      "  \"style\": \"graph\",\n"
      "  \"call_style\": \"graph replay\",\n"
      "  \"nccl\": \"2.28.3\",\n"
      "  \"rows\": [\n"
      "    {\"direction\": \"seq_to_heads\", \"tokens\": 1024, \"heads\": 32, \"head_dim\": 128, "
      "\"size_bytes\": 4194304.000, \"count\": 2097152.000, \"protocol\": \"direct\", "
      "\"ltx_us\": 16.500, \"ltx_algbw_gbps\": 254.200, \"ltx_busbw_gbps\": 127.100, "
      "\"wrong\": 0, \"nccl_transfer_us\": 19.500, \"nccl_permute_us\": 9.000, "
      "\"nccl\": {\"plain\": {\"us\": 28.500, \"busbw_gbps\": 73.600}, "
      "\"window\": {\"unavailable\": \"not for \\\"send/recv\\\"\"}, "
      "\"ce\": {\"unavailable\": \"NCCL 2.21.5 has no copy-engine collectives\"}}, "
      "\"best_nccl\": \"plain\", \"best_nccl_us\": 28.500, \"ltx_vs_best_nccl\": 1.727, "
      "\"nccl_wrong\": 0},\n"
      "    {\"direction\": \"heads_to_seq\", \"tokens\": 32640, \"heads\": 32, \"head_dim\": 128, "
      "\"size_bytes\": 133693440.000, \"count\": 66846720.000, \"protocol\": \"one_trip\", "
      "\"ltx_us\": -1.000, \"ltx_algbw_gbps\": -1.000, \"ltx_busbw_gbps\": -1.000, "
      "\"wrong\": 0, \"nccl_transfer_us\": -1.000, \"nccl_permute_us\": -1.000, "
      "\"nccl\": {\"plain\": {\"unavailable\": \"NCCL not loaded\"}, "
      "\"window\": {\"unavailable\": \"NCCL not loaded\"}, "
      "\"ce\": {\"unavailable\": \"NCCL not loaded\"}}, "
      "\"best_nccl\": null, \"best_nccl_us\": -1.000, \"ltx_vs_best_nccl\": -1.000, "
      "\"nccl_wrong\": 0}\n"
      "  ]\n"
      "}\n");
}

TEST(AllToAllJsonTest, SeveralTensorsAddTheirSeparateCallsAndTheRatio) {
  AllToAllBenchRow row = MeasuredRow();
  row.tensors = 3;
  row.calls_us = 33;
  const std::string text = JsonDocumentText(AllToAllJson(GraphConfig(), {0, 1}, "2.28.3", {row}));
  EXPECT_THAT(text, HasSubstr("\"nccl_wrong\": 0, \"tensors\": 3, \"calls_us\": 33.000, "
                              "\"op_vs_calls\": 0.500}\n"));
  row.calls_us = -1;  // Not measured: no ratio.
  EXPECT_THAT(JsonDocumentText(AllToAllJson(GraphConfig(), {0, 1}, "2.28.3", {row})),
              HasSubstr("\"calls_us\": -1.000, \"op_vs_calls\": -1.000}"));
}

TEST(AllToAllJsonTest, EagerStylesAndTheEvenSplitWithoutRows) {
  AllToAllToolConfig config;
  config.style = BenchStyle::kRankOneThread;
  const std::string text = JsonDocumentText(AllToAllJson(config, {3, 1, 2}, "none", {}));
  EXPECT_THAT(text, HasSubstr("\"world_size\": 3,\n  \"devices\": [3, 1, 2],\n"));
  EXPECT_THAT(text, HasSubstr("\"head_counts\": [],\n"));
  EXPECT_THAT(text, HasSubstr("\"style\": \"rank_one_thread\",\n  \"call_style\": \"eager\",\n"));
  EXPECT_THAT(text, HasSubstr("\"nccl\": \"none\",\n  \"rows\": [\n  ]\n}\n"));
  EXPECT_THAT(text, Not(HasSubstr("\"wire\"")));
}

TEST(AllToAllJsonTest, TheFp8WireIsASetting) {
  AllToAllToolConfig config;
  config.wire = WireFormat::kFp8E4M3;
  EXPECT_THAT(JsonDocumentText(AllToAllJson(config, {0, 1}, "none", {})),
              HasSubstr("\"head_counts\": [],\n  \"wire\": \"fp8_e4m3\",\n"));
}

TEST(JsonDocumentTest, WritesTheTextOrSaysWhyNot) {
  JsonDocument document;
  document.settings.Int("world_size", 2).Text("note", "a\tb");
  document.rows.push_back(JsonMembers().Number("us", 1.25).IntList("ranks", std::vector<int>{}));
  EXPECT_EQ(JsonDocumentText(document),
            "{\n  \"world_size\": 2,\n  \"note\": \"a\\tb\",\n  \"rows\": [\n"
            "    {\"us\": 1.250, \"ranks\": []}\n  ]\n}\n");
  const char* tmpdir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmpdir != nullptr ? tmpdir : "/tmp") + "/bench.json";
  ASSERT_TRUE(WriteJsonDocument(path, document).ok());
  std::ifstream in(path);
  std::stringstream written;
  written << in.rdbuf();
  EXPECT_EQ(written.str(), JsonDocumentText(document));
  const absl::Status refused = WriteJsonDocument(path + ".missing/bench.json", document);
  EXPECT_TRUE(absl::IsPermissionDenied(refused)) << refused;
  EXPECT_THAT(std::string(refused.message()), HasSubstr("cannot write"));
}

}  // namespace
}  // namespace ltx
