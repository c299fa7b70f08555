// JSON of ltx_alltoall's benchmark rows.
#include "tools/ltx_alltoall/alltoall_json.h"

namespace ltx {

std::string DirectionFlagName(AllToAllDirection direction) {
  return direction == AllToAllDirection::kSeqToHeads ? "seq_to_heads" : "heads_to_seq";
}

TensorCalls TensorCallsOf(const AllToAllBenchRow& row) {
  return TensorCalls{row.tensors, row.ltx_us, row.calls_us};
}

JsonDocument AllToAllJson(const AllToAllToolConfig& config, const std::vector<int>& devices,
                          const std::string& nccl_version,
                          const std::vector<AllToAllBenchRow>& rows) {
  JsonDocument document;
  JsonMembers own = JsonMembers().Int("batch", 1).IntList("head_counts", config.head_counts);
  if (config.wire != WireFormat::kNative) own.Text("wire", WireFormatName(config.wire));
  document.settings = BenchJsonSettings(devices, config.dtype, own, config.style, nccl_version);
  for (const AllToAllBenchRow& r : rows) {
    document.rows.push_back(JsonMembers()
                                .Text("direction", DirectionFlagName(r.direction))
                                .Int("tokens", r.shape.tokens)
                                .Int("heads", r.shape.heads)
                                .Int("head_dim", r.shape.head_dim)
                                .Number("size_bytes", r.size_bytes)
                                .Number("count", r.count)
                                .Text("protocol", ProtocolName(r.protocol))
                                .Append(LtxTimeJson(r.ltx_us, r.ltx_algbw, r.ltx_busbw))
                                .Int("wrong", r.wrong)
                                .Number("nccl_transfer_us", r.nccl_transfer_us)
                                .Number("nccl_permute_us", r.nccl_permute_us)
                                .Raw(NcclJsonMembers(r.nccl, LtxUsAgainstNccl(TensorCallsOf(r))))
                                .Int("nccl_wrong", r.nccl_wrong)
                                .Append(TensorCallsJson(TensorCallsOf(r))));
  }
  return document;
}

}  // namespace ltx
