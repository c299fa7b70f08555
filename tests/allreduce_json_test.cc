// Tests of ltx_allreduce's benchmark JSON (tools/ltx_allreduce/allreduce_json.h): the shared
// settings with the op, the reduction and the path, then one row object a line with its path,
// ltx's figures and NCCL's modes, measured or unavailable with the reason.
#include "tools/ltx_allreduce/allreduce_json.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/bench/json_document.h"
#include "tools/bench/nccl_best.h"
#include "tools/ltx_allreduce/allreduce_path.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;

TEST(AllReduceJsonTest, SettingsThenOneRowALine) {
  AllReduceToolConfig config;
  config.style = BenchStyle::kGraph;
  config.reduction = Reduction::kMax;
  config.paths = {AllReducePath::kOneShot, AllReducePath::kTwoShot};
  AllReduceBenchRow measured;  // ltx, plain NCCL and windows; no copy-engine reductions.
  measured.size_bytes = 8192;
  measured.count = 4096;
  measured.path = AllReducePath::kOneShot;
  measured.ltx_us = 4.5;
  measured.ltx_algbw = 1.82;
  measured.ltx_busbw = 1.82;
  At(measured.nccl, NcclMode::kPlain).us = 9;
  At(measured.nccl, NcclMode::kPlain).busbw = 0.91;
  At(measured.nccl, NcclMode::kWindows).us = 6;
  At(measured.nccl, NcclMode::kWindows).busbw = 1.365;
  At(measured.nccl, NcclMode::kCopyEngine).why_not = "NCCL has no copy-engine reductions";
  AllReduceBenchRow alone;  // NCCL not loaded; ltx's output wrong.
  alone.size_bytes = 16384;
  alone.count = 8192;
  alone.path = AllReducePath::kTwoShot;
  alone.ltx_us = 5;
  alone.ltx_algbw = 3.277;
  alone.ltx_busbw = 3.277;
  alone.wrong = 1;
  EXPECT_EQ(
      JsonDocumentText(AllReduceJson(config, {0, 1}, "2.28.3", {measured, alone})),
      "{\n"
      "  \"world_size\": 2,\n"
      "  \"devices\": [0, 1],\n"
      "  \"dtype\": \"bf16\",\n"
      "  \"op\": \"allreduce\",\n"
      "  \"reduction\": \"max\",\n"
      "  \"path\": \"both\",\n"
      "  \"style\": \"graph\",\n"
      "  \"call_style\": \"graph replay\",\n"
      "  \"nccl\": \"2.28.3\",\n"
      "  \"rows\": [\n"
      "    {\"size_bytes\": 8192, \"count\": 4096, \"path\": \"one_shot\", \"ltx_us\": 4.500, "
      "\"ltx_algbw_gbps\": 1.820, "
      "\"ltx_busbw_gbps\": 1.820, \"wrong\": 0, "
      "\"nccl\": {\"plain\": {\"us\": 9.000, \"busbw_gbps\": 0.910}, "
      "\"window\": {\"us\": 6.000, \"busbw_gbps\": 1.365}, "
      "\"ce\": {\"unavailable\": \"NCCL has no copy-engine reductions\"}}, "
      "\"best_nccl\": \"window\", \"best_nccl_us\": 6.000, \"ltx_vs_best_nccl\": 1.333},\n"
      "    {\"size_bytes\": 16384, \"count\": 8192, \"path\": \"two_shot\", \"ltx_us\": 5.000, "
      "\"ltx_algbw_gbps\": 3.277, "
      "\"ltx_busbw_gbps\": 3.277, \"wrong\": 1, "
      "\"nccl\": {\"plain\": {\"unavailable\": \"NCCL not loaded\"}, "
      "\"window\": {\"unavailable\": \"NCCL not loaded\"}, "
      "\"ce\": {\"unavailable\": \"NCCL not loaded\"}}, "
      "\"best_nccl\": null, \"best_nccl_us\": -1.000, \"ltx_vs_best_nccl\": -1.000}\n"
      "  ]\n"
      "}\n");
}

TEST(AllReduceJsonTest, TheReduceScatterNamesItsOp) {
  AllReduceToolConfig config;
  config.collective = Collective::kReduceScatter;
  config.dtype = DataType::kFloat32;
  const std::string text = JsonDocumentText(AllReduceJson(config, {3, 1, 2}, "none", {}));
  EXPECT_THAT(text, HasSubstr("\"dtype\": \"fp32\",\n  \"op\": \"reduce_scatter\",\n"
                              "  \"reduction\": \"sum\",\n  \"path\": \"auto\",\n"));
  EXPECT_THAT(text, HasSubstr("\"style\": \"rank\",\n  \"call_style\": \"eager\",\n"));
  EXPECT_THAT(text, HasSubstr("\"nccl\": \"none\",\n  \"rows\": [\n  ]\n}\n"));
}

TEST(AllReduceJsonTest, TheEpiloguesRowsCarryTheAllReduceAloneAndTheUnfusedForm) {
  AllReduceToolConfig config;
  config.collective = Collective::kAllReduceRmsNorm;
  AllReduceBenchRow row;
  row.size_bytes = 8192;
  row.count = 4096;
  row.ltx_us = 5.5;
  row.all_reduce_us = 5;
  row.unfused_us = 8.25;
  const std::string text = JsonDocumentText(AllReduceJson(config, {0, 0}, "none", {row}));
  EXPECT_THAT(text, HasSubstr("\"op\": \"allreduce_rmsnorm\""));
  EXPECT_THAT(text, HasSubstr("\"ltx_us\": 5.500, "));
  EXPECT_THAT(text, HasSubstr("\"all_reduce_us\": 5.000, \"unfused_us\": 8.250, \"wrong\": 0"));
  // The other ops' rows have no such members.
  config.collective = Collective::kAllReduce;
  EXPECT_THAT(JsonDocumentText(AllReduceJson(config, {0, 1}, "none", {row})),
              ::testing::Not(HasSubstr("unfused_us")));
}

}  // namespace
}  // namespace ltx
