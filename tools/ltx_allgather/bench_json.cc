// JSON of the benchmark's rows.
#include "tools/ltx_allgather/bench_json.h"

#include "tools/bench/json_document.h"
#include "tools/bench/nccl_best.h"
#include "tools/bench/style_timing.h"

namespace ltx {
namespace {

// The sweep's own settings: hidden, the split, in place, the calls' protocol, transport and
// blocks, the timing counts, and the wire format where it is not the native one.
JsonMembers SettingsOf(const BenchConfig& config) {
  const TimingPlan run = PlanAsRun(config.style, config.timing);
  JsonMembers own = JsonMembers()
                        .Int("hidden", config.hidden)
                        .Text("split", SplitPatternName(config.split))
                        .Int("in_place", config.in_place ? 1 : 0)
                        .Text("protocol", ProtocolName(config.call.protocol))
                        .Text("transport", TransportName(config.runtime.transport))
                        .Int("blocks", config.call.blocks)
                        .Int("max_blocks", config.runtime.max_blocks)
                        .Int("warmup", run.warmup)
                        .Int("iters", run.iterations)
                        .Int("windows", run.windows);
  if (config.wire != WireFormat::kNative) own.Text("wire", WireFormatName(config.wire));
  return own;
}

}  // namespace

absl::Status WriteJson(const BenchConfig& config, const BenchRunInfo& info,
                       const std::vector<BenchRow>& rows) {
  JsonDocument document;
  document.settings =
      BenchJsonSettings(info.devices, config.dtype, SettingsOf(config), config.style,
                        info.nccl_version);
  document.settings.Int("floor_blocks", info.floor.blocks)
      .Number("floor_graph_us", info.floor.graph_us)
      .Number("floor_eager_us", info.floor.eager_us);
  for (const BenchRow& r : rows) {
    document.rows.push_back(JsonMembers()
                                .Int("size_bytes", r.size_bytes)
                                .Int("per_rank_bytes", r.per_rank_bytes)
                                .Int("count", r.count)
                                .Append(LtxTimeJson(r.ltx_us, r.ltx_algbw, r.ltx_busbw))
                                .Number("host_us", r.host_us)
                                .Number("vs_floor", r.vs_floor)
                                .Int("wrong", r.wrong)
                                .Raw(NcclJsonMembers(r.nccl, LtxUsAgainstNccl(TensorCallsOf(r))))
                                .Append(TensorCallsJson(TensorCallsOf(r))));
  }
  return WriteJsonDocument(config.json_path, document);
}

}  // namespace ltx
