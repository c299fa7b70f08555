// JSON of ltx_allreduce's benchmark rows.
#include "tools/ltx_allreduce/allreduce_json.h"

namespace ltx {

JsonDocument AllReduceJson(const AllReduceToolConfig& config, const std::vector<int>& devices,
                           const std::string& nccl_version,
                           const std::vector<AllReduceBenchRow>& rows) {
  JsonDocument document;
  document.settings = BenchJsonSettings(devices, config.dtype,
                                        JsonMembers()
                                            .Text("op", OpFlagName(config.collective))
                                            .Text("reduction", ReductionName(config.reduction))
                                            .Text("path", AllReducePathsFlagName(config.paths)),
                                        config.style, nccl_version);
  for (const AllReduceBenchRow& r : rows) {
    JsonMembers row = JsonMembers()
                          .Int("size_bytes", r.size_bytes)
                          .Int("count", r.count)
                          .Text("path", AllReducePathName(r.path))
                          .Append(LtxTimeJson(r.ltx_us, r.ltx_algbw, r.ltx_busbw));
    if (config.collective == Collective::kAllReduceRmsNorm) {
      row.Number("all_reduce_us", r.all_reduce_us).Number("unfused_us", r.unfused_us);
    }
    document.rows.push_back(
        row.Int("wrong", r.wrong).Raw(NcclJsonMembers(r.nccl, r.ltx_us)));
  }
  return document;
}

}  // namespace ltx
