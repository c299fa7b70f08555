// JSON of the benchmark's rows.
#include "tools/ltx_allgather/bench_json.h"

#include <fstream>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ltx/data_type.h"
#include "tools/bench/nccl_best.h"

namespace ltx {

absl::Status WriteJson(const BenchConfig& config, const BenchRunInfo& info,
                       const std::vector<BenchRow>& rows) {
  std::ofstream out(config.json_path);
  if (!out) return absl::PermissionDeniedError("cannot write " + config.json_path);
  out << absl::StrFormat(
      "{\n  \"world_size\": %d,\n  \"devices\": [%s],\n  \"dtype\": \"%s\",\n  \"hidden\": "
      "%d,\n  \"style\": \"%s\",\n  \"call_style\": \"%s\",\n  \"nccl\": \"%s\",\n  "
      "\"floor_blocks\": %d,\n"
      "  \"floor_graph_us\": %.3f,\n  \"floor_eager_us\": %.3f,\n  \"rows\": [\n",
      info.devices.size(), absl::StrJoin(info.devices, ", "), DataTypeName(config.dtype),
      config.hidden, BenchStyleName(config.style),
      config.style == BenchStyle::kGraph ? "graph replay" : "eager", info.nccl_version,
      info.floor.blocks, info.floor.graph_us, info.floor.eager_us);
  for (size_t i = 0; i < rows.size(); ++i) {
    const BenchRow& r = rows[i];
    out << absl::StrFormat(
        "    {\"size_bytes\": %d, \"per_rank_bytes\": %d, \"count\": %d, \"ltx_us\": %.3f, "
        "\"ltx_algbw_gbps\": %.3f, \"ltx_busbw_gbps\": %.3f, \"host_us\": %.3f, "
        "\"vs_floor\": %.3f, \"wrong\": %d, %s}%s\n",
        r.size_bytes, r.per_rank_bytes, r.count, r.ltx_us, r.ltx_algbw, r.ltx_busbw, r.host_us,
        r.vs_floor, r.wrong, NcclJsonMembers(r.nccl, r.ltx_us), i + 1 < rows.size() ? "," : "");
  }
  out << "  ]\n}\n";
  return out ? absl::OkStatus() : absl::DataLossError("failed writing " + config.json_path);
}

}  // namespace ltx
