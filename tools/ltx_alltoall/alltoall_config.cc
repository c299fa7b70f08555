// Flag values to validated run settings for ltx_alltoall.
#include "tools/ltx_alltoall/alltoall_config.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kernels/wire/fp8_run.h"
#include "absl/strings/str_split.h"
#include "ltx/status_macros.h"
#include "tools/bench/breakdown_plan.h"
#include "tools/flags/byte_size.h"
#include "tools/flags/command_line.h"
#include "tools/flags/device_list.h"
#include "tools/ltx_alltoall/head_counts.h"

namespace ltx {
namespace {

constexpr BenchShape kModelShapes[] = {
    {15360, 32, 128}, {32640, 32, 128}, {6144, 32, 64}, {1024, 32, 128}};
constexpr int64_t kModelHeads = 32;
constexpr char kMaxBytes[] = "256M";
constexpr double kStepFactor = 4;
constexpr char kBreakdownBytes[] = "8K";

absl::StatusOr<std::vector<AllToAllDirection>> ParseDirections(const std::string& name) {
  if (name == "seq_to_heads") return std::vector<AllToAllDirection>{AllToAllDirection::kSeqToHeads};
  if (name == "heads_to_seq") return std::vector<AllToAllDirection>{AllToAllDirection::kHeadsToSeq};
  if (name == "both") {
    return std::vector<AllToAllDirection>{AllToAllDirection::kSeqToHeads,
                                          AllToAllDirection::kHeadsToSeq};
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("--direction: '%s' is not seq_to_heads, heads_to_seq or both", name));
}

absl::StatusOr<std::vector<Protocol>> ParseProtocols(const std::string& names) {
  std::vector<Protocol> protocols;
  for (absl::string_view name : absl::StrSplit(names, ',')) {
    absl::StatusOr<Protocol> protocol = ParseProtocol(name);
    if (!protocol.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--protocol: '%s' is not auto, direct, one_trip or copy_engine", std::string(name)));
    }
    protocols.push_back(*protocol);
  }
  return protocols;
}

// The values every mode shares: devices, dtype, directions, protocols, tensors, timing, blocks.
absl::Status FillShared(const AllToAllFlagValues& flags, AllToAllToolConfig* config) {
  LTX_ASSIGN_OR_RETURN(config->devices, DevicesOfFlags(flags.devices, flags.gpus));
  absl::StatusOr<DataType> dtype = ParseDataType(flags.dtype);
  if (!dtype.ok()) return ForFlag("-d/--dtype", dtype.status());
  config->dtype = *dtype;
  LTX_ASSIGN_OR_RETURN(config->directions, ParseDirections(flags.direction));
  LTX_ASSIGN_OR_RETURN(config->protocols, ParseProtocols(flags.protocol));
  LTX_ASSIGN_OR_RETURN(config->tensors, BenchTensorsOf(flags));
  LTX_ASSIGN_OR_RETURN(const BenchCallSettings calls, BenchCallSettingsOf(flags, flags.iters));
  config->blocks = calls.blocks;
  config->max_blocks = calls.max_blocks;
  config->timing = calls.timing;
  if (flags.heads < 1 || flags.head_dim < 1) {
    return absl::InvalidArgumentError("--heads and --head_dim: must be >= 1");
  }
  config->heads = flags.heads;
  config->head_dim = flags.head_dim;
  config->nccl_path = flags.nccl;
  return absl::OkStatus();
}

// The sizes: -b, -e and -f, each only where a mode takes it.
absl::Status FillSizes(const AllToAllFlagValues& flags, AllToAllToolConfig* config) {
  if (!flags.min_bytes.empty() && !flags.bench && !flags.breakdown) {
    return absl::InvalidArgumentError(
        "-b/--min_bytes: only --bench (the sweep) and --breakdown (its size) take a size");
  }
  if ((!flags.max_bytes.empty() || !std::isnan(flags.step_factor)) &&
      (!flags.bench || flags.min_bytes.empty())) {
    return absl::InvalidArgumentError(
        "-e/--max_bytes and -f/--step_factor: only the sweep of --bench takes them; give -b "
        "too (without -b the benchmark runs the model shapes)");
  }
  const std::string breakdown_bytes = flags.min_bytes.empty() ? kBreakdownBytes : flags.min_bytes;
  absl::StatusOr<int64_t> bytes = ParseBytes(breakdown_bytes);
  if (!bytes.ok()) return ForFlag("-b/--min_bytes", bytes.status());
  config->breakdown_bytes = *bytes;
  config->min_bytes = flags.min_bytes.empty() ? 0 : *bytes;
  absl::StatusOr<int64_t> max_bytes =
      ParseBytes(flags.max_bytes.empty() ? kMaxBytes : flags.max_bytes);
  if (!max_bytes.ok()) return ForFlag("-e/--max_bytes", max_bytes.status());
  config->max_bytes = *max_bytes;
  config->factor = std::isnan(flags.step_factor) ? kStepFactor : flags.step_factor;
  if (!(config->factor > 1)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("-f/--step_factor %g: must be > 1", config->factor));
  }
  if (config->min_bytes > config->max_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "sizes: need -b <= -e, got -b %d -e %d", config->min_bytes, config->max_bytes));
  }
  return absl::OkStatus();
}

// The transport of every mode, and the benchmark's call style and JSON file (only --bench takes
// them); graph replay needs a transport whose calls can be captured.
absl::Status FillTransportAndStyle(const AllToAllFlagValues& flags, AllToAllToolConfig* config) {
  absl::StatusOr<Transport> transport = ParseTransport(flags.transport);
  if (!transport.ok()) return ForFlag("--transport", transport.status());
  config->transport = *transport;
  absl::StatusOr<BenchStyle> style = ParseBenchStyle(flags.style);
  if (!style.ok()) return ForFlag("--style", style.status());
  if (!flags.bench && (*style != BenchStyle::kPerRank || !flags.json.empty())) {
    return absl::InvalidArgumentError("--style and --json: only --bench takes them");
  }
  config->style = *style;
  config->json_path = flags.json;
  return CheckStyleOnTransport(config->style, config->transport);
}

// The breakdown's protocol and block counts.
absl::Status FillBreakdown(const AllToAllFlagValues& flags, AllToAllToolConfig* config) {
  absl::StatusOr<std::vector<int>> blocks = ParseBlockList(flags.breakdown_blocks);
  if (!blocks.ok()) return ForFlag("--breakdown_blocks", blocks.status());
  config->breakdown_blocks = *blocks;
  if (!flags.breakdown) return absl::OkStatus();
  if (!flags.bench && flags.blocks != AllToAllFlagValues().blocks) {
    return absl::InvalidArgumentError(
        "--blocks: only --bench takes it (--breakdown takes --breakdown_blocks)");
  }
  const Protocol protocol =
      BreakdownProtocol(config->protocols.front(), config->breakdown_bytes);
  if (config->protocols.size() != 1 ||
      (protocol != Protocol::kOneTrip && protocol != Protocol::kDirect)) {
    return absl::InvalidArgumentError(
        "--breakdown: give one --protocol (auto, one_trip or direct)");
  }
  config->breakdown_protocol = protocol;
  return absl::OkStatus();
}

// The wire of the benchmark's calls (--wire): native, or fp8_e4m3 where its calls can carry it.
absl::Status FillWire(const AllToAllFlagValues& flags, AllToAllToolConfig* config) {
  if (flags.wire == "native") return absl::OkStatus();
  if (flags.wire != "fp8_e4m3") {
    return absl::InvalidArgumentError(
        absl::StrCat("--wire: '", flags.wire, "' is not native or fp8_e4m3"));
  }
  if (!config->bench) return absl::InvalidArgumentError("--wire: only --bench takes it");
  if (config->dtype != DataType::kBFloat16 && config->dtype != DataType::kFloat16) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--wire=fp8_e4m3 carries bf16 or fp16 head vectors, not ", DataTypeName(config->dtype)));
  }
  if (config->min_bytes != 0 && config->head_dim < kFp8MinVectorElements) {  // A sweep's shapes.
    return absl::InvalidArgumentError(
        absl::StrCat("--wire=fp8_e4m3 needs --head_dim >= ", kFp8MinVectorElements));
  }
  if (config->transport == Transport::kCopyEngine) {
    return absl::InvalidArgumentError(
        "--wire=fp8_e4m3 runs on the peer-store transport's kernels, not --transport=copy_engine");
  }
  for (Protocol protocol : config->protocols) {
    if (protocol != Protocol::kAuto && protocol != Protocol::kDirect) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--wire=fp8_e4m3 runs on its own kernels: --protocol auto or direct, not ",
          ProtocolName(protocol)));
    }
  }
  config->wire = WireFormat::kFp8E4M3;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AllToAllToolConfig> MakeAllToAllToolConfig(const AllToAllFlagValues& flags) {
  AllToAllToolConfig config;
  config.bench = flags.bench;
  config.breakdown = flags.breakdown;
  config.smoke = flags.smoke || (!flags.bench && !flags.breakdown);
  if (!flags.bench && !flags.breakdown) {  // The smoke run has its own cases and calls.
    const AllToAllFlagValues defaults;
    const GivenFlag calls[] = {{flags.direction != defaults.direction, "--direction"},
                               {flags.protocol != defaults.protocol, "--protocol"},
                               {flags.blocks != defaults.blocks, "--blocks"},
                               {flags.iters != defaults.iters, "-n/--iters"}};
    LTX_RETURN_IF_ERROR(RefuseGivenFlags(calls, "--bench or --breakdown"));
    LTX_RETURN_IF_ERROR(RefuseGivenFlags(GivenBenchFlags(flags), "--bench"));
  }
  LTX_RETURN_IF_ERROR(FillShared(flags, &config));
  LTX_RETURN_IF_ERROR(FillSizes(flags, &config));
  LTX_RETURN_IF_ERROR(FillBreakdown(flags, &config));
  LTX_RETURN_IF_ERROR(FillTransportAndStyle(flags, &config));
  LTX_RETURN_IF_ERROR(FillWire(flags, &config));
  absl::StatusOr<std::vector<int64_t>> head_counts =
      ParseHeadCounts(flags.head_counts, static_cast<int>(config.devices.size()));
  if (!head_counts.ok()) return ForFlag("--head_counts", head_counts.status());
  config.head_counts = *head_counts;
  if (!config.head_counts.empty() && !config.smoke && !config.bench) {
    return absl::InvalidArgumentError(
        "--head_counts: the smoke run and --bench take a head split, --breakdown does not");
  }
  if (config.bench) {
    const int64_t heads = config.min_bytes == 0 ? kModelHeads : config.heads;
    absl::Status sums = CheckHeadCounts(config.head_counts, heads);
    if (!sums.ok()) return ForFlag("--head_counts", sums);
  }
  return config;
}

absl::Status CheckWorldSize(const AllToAllToolConfig& config, int world) {
  if (config.head_counts.empty() || config.head_counts.size() == static_cast<size_t>(world)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("--head_counts: %d head counts for %d ranks; give one per rank",
                      config.head_counts.size(), world));
}

std::vector<BenchShape> BenchShapes(const AllToAllToolConfig& config, int world) {
  if (config.min_bytes == 0) {
    return std::vector<BenchShape>(std::begin(kModelShapes), std::end(kModelShapes));
  }
  const int64_t token_bytes = config.heads * config.head_dim * ElementSize(config.dtype);
  std::vector<BenchShape> shapes;
  for (double bytes = static_cast<double>(config.min_bytes); bytes <= config.max_bytes;
       bytes *= config.factor) {
    const int64_t tokens = std::max<int64_t>(1, static_cast<int64_t>(bytes) * world / token_bytes);
    shapes.push_back({tokens, config.heads, config.head_dim});
  }
  return shapes;
}

}  // namespace ltx
