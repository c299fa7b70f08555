// Flag values to validated run settings for ltx_allgather.
#include "tools/ltx_allgather/tool_config.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ltx/status_macros.h"
#include "tools/bench/breakdown_plan.h"
#include "tools/flags/byte_size.h"
#include "tools/flags/command_line.h"
#include "tools/flags/device_list.h"

namespace ltx {
namespace {

// The largest per-rank message the one-trip protocol carries.
constexpr int64_t kOneTripMaxBytes = int64_t{512} << 10;

// -b when not given: total output bytes of the benchmark's smallest size, bytes per rank of
// the overlap run.
constexpr char kBenchMinBytes[] = "32K";
constexpr char kOverlapPerRankBytes[] = "64M";
constexpr char kBreakdownPerRankBytes[] = "8K";

// Runtime options from the flags shared by both modes.
absl::StatusOr<RuntimeOptions> MakeRuntimeOptions(const FlagValues& flags) {
  RuntimeOptions options;
  LTX_ASSIGN_OR_RETURN(options.devices, DevicesOfFlags(flags.devices, flags.gpus));
  if (flags.max_blocks < 0) return absl::InvalidArgumentError("--max_blocks: must be >= 0");
  options.max_blocks = flags.max_blocks;
  if (flags.one_trip_max_bytes != kOneTripLimitByWorldSize &&
      (flags.one_trip_max_bytes < 0 || flags.one_trip_max_bytes > kOneTripMaxBytes)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--one_trip_max_bytes=%d: must be -1 (by world size) or 0 to %d",
                        flags.one_trip_max_bytes, kOneTripMaxBytes));
  }
  options.one_trip_max_bytes = flags.one_trip_max_bytes;
  if (flags.copy_engine_min_bytes < 0) {
    return absl::InvalidArgumentError("--copy_engine_min_bytes: must be >= 0");
  }
  options.copy_engine_min_bytes = flags.copy_engine_min_bytes;
  if (flags.timeout <= absl::ZeroDuration() || flags.timeout == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError("-T/--timeout: must be positive and finite");
  }
  options.timeout = flags.timeout;
  absl::StatusOr<Transport> transport = ParseTransport(flags.transport);
  if (!transport.ok()) return ForFlag("--transport", transport.status());
  options.transport = *transport;
  return options;
}

// Call options from the flags shared by both modes.
absl::StatusOr<CallOptions> MakeCallOptions(const FlagValues& flags) {
  CallOptions call;
  if (flags.blocks < 0) return absl::InvalidArgumentError("--blocks: must be >= 0");
  call.blocks = flags.blocks;
  absl::StatusOr<Protocol> protocol = ParseProtocol(flags.protocol);
  if (!protocol.ok()) return ForFlag("--protocol", protocol.status());
  call.protocol = *protocol;
  return call;
}

// -b as bytes (`fallback` when not given); InvalidArgument naming the flag.
absl::StatusOr<int64_t> MinBytesFlag(const FlagValues& flags, const char* fallback) {
  absl::StatusOr<int64_t> bytes = ParseBytes(flags.min_bytes.empty() ? fallback : flags.min_bytes);
  if (!bytes.ok()) return ForFlag("-b/--min_bytes", bytes.status());
  return bytes;
}

// Sets what the benchmark's, the overlap run's and the breakdown's settings (`Config`) share:
// the Runtime options, the dtype (bf16 unless given), the host wait, and from the flags the
// hidden size, the timing plan and whether outputs are checked.
template <typename Config>
void SetSharedSettings(const FlagValues& flags, const RuntimeOptions& runtime,
                       const absl::optional<DataType>& dtype, absl::Duration host_wait,
                       Config* config) {
  config->runtime = runtime;
  config->dtype = dtype.value_or(DataType::kBFloat16);
  config->host_wait = host_wait;
  config->hidden = flags.hidden;
  config->timing = TimingPlan{flags.warmup, flags.iters, flags.windows};
  config->check = flags.check;
  config->in_place = flags.in_place;
}

// The benchmark's settings beyond the shared ones.
absl::Status FillBenchConfig(const FlagValues& flags, BenchConfig* config) {
  LTX_ASSIGN_OR_RETURN(const int64_t min_bytes, MinBytesFlag(flags, kBenchMinBytes));
  absl::StatusOr<int64_t> max_bytes = ParseBytes(flags.max_bytes);
  if (!max_bytes.ok()) return ForFlag("-e/--max_bytes", max_bytes.status());
  absl::StatusOr<SplitPattern> split = ParseSplitPattern(flags.split);
  if (!split.ok()) return ForFlag("--split", split.status());
  absl::StatusOr<BenchStyle> style = ParseBenchStyle(flags.style);
  if (!style.ok()) return ForFlag("--style", style.status());
  config->min_bytes = min_bytes;
  config->max_bytes = *max_bytes;
  config->factor = flags.step_factor;
  config->split = *split;
  config->style = *style;
  if (flags.wire == "fp8_e4m3") {
    config->wire = WireFormat::kFp8E4M3;
  } else if (flags.wire != "native") {
    return absl::InvalidArgumentError(
        absl::StrCat("--wire: '", flags.wire, "' is not native or fp8_e4m3"));
  }
  config->nccl_path = flags.nccl;
  config->json_path = flags.json;
  return ValidateBenchConfig(*config);
}

// The overlap run's settings beyond the shared ones; `call` must be the defaults, since each
// style picks its own protocol and blocks.
absl::Status FillOverlapConfig(const FlagValues& flags, const CallOptions& call,
                               OverlapConfig* config) {
  if (flags.bench) return absl::InvalidArgumentError("--bench and --overlap: give one of them");
  if (call.protocol != Protocol::kAuto || call.blocks != 0 || flags.transport != "auto") {
    return absl::InvalidArgumentError(
        "--overlap: each style picks its own protocol, blocks and transport; leave --protocol, "
        "--blocks and --transport alone (--overlap_styles chooses the styles)");
  }
  if (!flags.json.empty() || flags.split != "even") {
    return absl::InvalidArgumentError(
        "--overlap: no JSON and no uneven split; leave --json and --split alone");
  }
  LTX_ASSIGN_OR_RETURN(const int64_t per_rank, MinBytesFlag(flags, kOverlapPerRankBytes));
  absl::StatusOr<GemmShape> gemm = ParseGemmShape(flags.gemm);
  if (!gemm.ok()) return ForFlag("--gemm", gemm.status());
  absl::StatusOr<std::vector<OverlapStyle>> styles = ParseOverlapStyles(flags.overlap_styles);
  if (!styles.ok()) return ForFlag("--overlap_styles", styles.status());
  config->per_rank_bytes = per_rank;
  config->gemm = *gemm;
  config->styles = *styles;
  config->block_budget = flags.max_blocks > 0 ? flags.max_blocks : kDefaultBlockBudget;
  config->runtime.max_blocks = 0;
  config->nccl_path = flags.nccl;
  config->cublas_path = flags.cublas;
  return ValidateOverlapConfig(*config);
}

// The breakdown's settings beyond the shared ones.
absl::Status FillBreakdownConfig(const FlagValues& flags, const CallOptions& call,
                                 BreakdownConfig* config) {
  if (flags.bench || flags.overlap) {
    return absl::InvalidArgumentError("--breakdown, --bench and --overlap: give one of them");
  }
  if (call.protocol == Protocol::kCopyEngine || call.blocks != 0 || !flags.json.empty() ||
      flags.split != "even") {
    return absl::InvalidArgumentError(
        "--breakdown: times the one_trip or the direct kernel on an even split, without JSON; "
        "leave --blocks, --split and --json alone (--breakdown_blocks lists the block counts) "
        "and give --protocol as auto, one_trip or direct");
  }
  LTX_ASSIGN_OR_RETURN(const int64_t per_rank, MinBytesFlag(flags, kBreakdownPerRankBytes));
  config->protocol = BreakdownProtocol(call.protocol, per_rank);
  absl::StatusOr<std::vector<int>> blocks = ParseBlockList(flags.breakdown_blocks);
  if (!blocks.ok()) return ForFlag("--breakdown_blocks", blocks.status());
  config->per_rank_bytes = per_rank;
  config->blocks = *blocks;
  return ValidateBreakdownConfig(*config);
}

// InvalidArgument naming the first flag of the benchmark's sweep, timing or output that
// `flags` sets away from its default, for the smoke run, which reads none of them.
absl::Status RefuseBenchOnlyFlags(const FlagValues& flags) {
  const FlagValues defaults;
  const GivenFlag given[] = {{!flags.min_bytes.empty(), "-b/--min_bytes"},
                             {flags.max_bytes != defaults.max_bytes, "-e/--max_bytes"},
                             {flags.step_factor != defaults.step_factor, "-f/--step_factor"},
                             {flags.iters != defaults.iters, "-n/--iters"},
                             {flags.hidden != defaults.hidden, "--hidden"},
                             {flags.split != defaults.split, "--split"},
                             {flags.check != defaults.check, "-c/--check"},
                             {flags.in_place != defaults.in_place, "--in_place"}};
  LTX_RETURN_IF_ERROR(RefuseGivenFlags(given, "--bench"));
  return RefuseGivenFlags(GivenBenchFlags(flags), "--bench");
}

}  // namespace

absl::StatusOr<ToolConfig> MakeToolConfig(const FlagValues& flags) {
  ToolConfig config;
  LTX_ASSIGN_OR_RETURN(const RuntimeOptions runtime, MakeRuntimeOptions(flags));
  config.devices = runtime.devices;
  LTX_ASSIGN_OR_RETURN(const CallOptions call, MakeCallOptions(flags));
  LTX_ASSIGN_OR_RETURN(const int tensors, BenchTensorsOf(flags));
  absl::optional<DataType> dtype;
  if (!flags.dtype.empty()) {
    absl::StatusOr<DataType> parsed = ParseDataType(flags.dtype);
    if (!parsed.ok()) return ForFlag("-d/--dtype", parsed.status());
    dtype = *parsed;
  }
  const absl::Duration host_wait = kHostWaitFactor * runtime.timeout;
  if (!flags.bench && flags.wire != "native") {
    return absl::InvalidArgumentError("--wire: only --bench takes it");
  }
  if (flags.breakdown) {
    config.mode = ToolMode::kBreakdown;
    SetSharedSettings(flags, runtime, dtype, host_wait, &config.breakdown);
    LTX_RETURN_IF_ERROR(FillBreakdownConfig(flags, call, &config.breakdown));
    return config;
  }
  if (flags.overlap) {
    config.mode = ToolMode::kOverlap;
    SetSharedSettings(flags, runtime, dtype, host_wait, &config.overlap_config);
    LTX_RETURN_IF_ERROR(FillOverlapConfig(flags, call, &config.overlap_config));
    return config;
  }
  if (!flags.bench) {
    LTX_RETURN_IF_ERROR(RefuseBenchOnlyFlags(flags));
    config.smoke = SmokeConfig{runtime, call, dtype, host_wait};
    return config;
  }
  config.mode = ToolMode::kBench;
  SetSharedSettings(flags, runtime, dtype, host_wait, &config.bench_config);
  config.bench_config.call = call;
  config.bench_config.tensors = tensors;
  LTX_RETURN_IF_ERROR(FillBenchConfig(flags, &config.bench_config));
  return config;
}

}  // namespace ltx
