// Flag values to validated run settings for ltx_allreduce.
#include "tools/ltx_allreduce/allreduce_config.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ltx/status_macros.h"
#include "tools/flags/byte_size.h"
#include "tools/flags/command_line.h"
#include "tools/flags/device_list.h"

namespace ltx {
namespace {

constexpr char kMinBytes[] = "8K";
constexpr char kMaxBytes[] = "256M";
constexpr double kStepFactor = 2;
constexpr int64_t kHidden = 4096;
constexpr int64_t kMaxHidden = int64_t{1} << 24;

// `text` as bytes, or InvalidArgument naming `flag`.
absl::StatusOr<int64_t> BytesOfFlag(absl::string_view flag, const std::string& text) {
  absl::StatusOr<int64_t> bytes = ParseBytes(text);
  if (!bytes.ok()) return ForFlag(flag, bytes.status());
  return bytes;
}

// The shared flags the reductions have no use for: one protocol on one transport, no breakdown,
// one tensor per call.
absl::Status RefuseUnused(const AllReduceFlagValues& flags) {
  const BenchFlagValues defaults;
  if (flags.protocol != defaults.protocol || flags.transport != defaults.transport ||
      flags.breakdown || flags.breakdown_blocks != defaults.breakdown_blocks ||
      flags.tensors != defaults.tensors) {
    return absl::InvalidArgumentError(
        "--protocol, --transport, --breakdown, --breakdown_blocks and --tensors: not taken (the "
        "reductions have one protocol, on the peer-store transport, and one tensor per call)");
  }
  return absl::OkStatus();
}

// What the benchmark runs: the collective, dtype and reduction, ltx's blocks, the timing, the
// call style, NCCL and the JSON file.
absl::Status FillBench(const AllReduceFlagValues& flags, AllReduceToolConfig* config) {
  LTX_ASSIGN_OR_RETURN(config->collective, ParseOp(flags.op));
  absl::StatusOr<DataType> dtype = ParseDataType(flags.dtype);
  if (!dtype.ok()) return ForFlag("-d/--dtype", dtype.status());
  if (*dtype != DataType::kBFloat16 && *dtype != DataType::kFloat16 &&
      *dtype != DataType::kFloat32) {
    return absl::InvalidArgumentError(
        absl::StrFormat("-d/--dtype: '%s' is not bf16, fp16 or fp32", flags.dtype));
  }
  config->dtype = *dtype;
  LTX_ASSIGN_OR_RETURN(config->reduction, ParseReduction(flags.reduction));
  LTX_ASSIGN_OR_RETURN(config->paths, ParseAllReducePaths(flags.path));
  if (config->collective != Collective::kAllReduce && flags.path != AllReduceFlagValues().path) {
    return absl::InvalidArgumentError(
        "--path: only --op allreduce takes a path other than auto (the others have one)");
  }
  const bool rmsnorm = config->collective == Collective::kAllReduceRmsNorm;
  if (rmsnorm && config->reduction != Reduction::kSum) {
    return absl::InvalidArgumentError(
        "--reduction: --op allreduce_rmsnorm sums (the epilogue follows a sum)");
  }
  if (flags.hidden != 0 && !rmsnorm) {
    return absl::InvalidArgumentError("--hidden: only --op allreduce_rmsnorm takes it");
  }
  config->hidden = flags.hidden == 0 ? kHidden : flags.hidden;
  if (config->hidden < 1 || config->hidden > kMaxHidden) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--hidden %d: must be in 1..%d (2^24)", config->hidden, kMaxHidden));
  }
  LTX_ASSIGN_OR_RETURN(const BenchCallSettings calls, BenchCallSettingsOf(flags, flags.iters));
  config->blocks = calls.blocks;
  config->max_blocks = calls.max_blocks;
  config->timing = calls.timing;
  absl::StatusOr<BenchStyle> style = ParseBenchStyle(flags.style);
  if (!style.ok()) return ForFlag("--style", style.status());
  config->style = *style;
  config->nccl_path = flags.nccl;
  config->json_path = flags.json;
  return absl::OkStatus();
}

// The sweep: -b, -e and -f.
absl::Status FillSizes(const AllReduceFlagValues& flags, AllReduceToolConfig* config) {
  LTX_ASSIGN_OR_RETURN(
      config->min_bytes,
      BytesOfFlag("-b/--min_bytes", flags.min_bytes.empty() ? kMinBytes : flags.min_bytes));
  LTX_ASSIGN_OR_RETURN(
      config->max_bytes,
      BytesOfFlag("-e/--max_bytes", flags.max_bytes.empty() ? kMaxBytes : flags.max_bytes));
  config->factor = std::isnan(flags.step_factor) ? kStepFactor : flags.step_factor;
  if (!(config->factor > 1)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("-f/--step_factor %g: must be > 1", config->factor));
  }
  if (config->min_bytes > config->max_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat("sizes: need -b <= -e, got -b %d -e %d",
                                                      config->min_bytes, config->max_bytes));
  }
  return absl::OkStatus();
}

}  // namespace

std::string OpFlagName(Collective collective) {
  switch (collective) {
    case Collective::kReduceScatter:
      return "reduce_scatter";
    case Collective::kAllReduceRmsNorm:
      return "allreduce_rmsnorm";
    default:
      return "allreduce";
  }
}

absl::StatusOr<Collective> ParseOp(absl::string_view name) {
  for (Collective collective : {Collective::kAllReduce, Collective::kReduceScatter,
                                Collective::kAllReduceRmsNorm}) {
    if (name == OpFlagName(collective)) return collective;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "--op: '%s' is not allreduce, reduce_scatter or allreduce_rmsnorm", name));
}

absl::StatusOr<Reduction> ParseReduction(absl::string_view name) {
  for (Reduction reduction : {Reduction::kSum, Reduction::kMax, Reduction::kMin}) {
    if (name == ReductionName(reduction)) return reduction;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("--reduction: '%s' is not sum, max or min", name));
}

absl::StatusOr<AllReduceToolConfig> MakeAllReduceToolConfig(const AllReduceFlagValues& flags) {
  AllReduceToolConfig config;
  config.bench = flags.bench;
  config.smoke = flags.smoke || !flags.bench;
  LTX_ASSIGN_OR_RETURN(config.devices, DevicesOfFlags(flags.devices, flags.gpus));
  LTX_RETURN_IF_ERROR(RefuseUnused(flags));
  LTX_RETURN_IF_ERROR(FillBench(flags, &config));
  LTX_RETURN_IF_ERROR(FillSizes(flags, &config));
  if (!flags.bench) {  // The smoke run has its own cases, dtypes, reductions and calls.
    const AllReduceFlagValues defaults;
    const GivenFlag given[] = {{!flags.min_bytes.empty(), "-b/--min_bytes"},
                               {!flags.max_bytes.empty(), "-e/--max_bytes"},
                               {!std::isnan(flags.step_factor), "-f/--step_factor"},
                               {flags.path != defaults.path, "--path"},
                               {flags.hidden != defaults.hidden, "--hidden"},
                               {flags.op != defaults.op, "--op"},
                               {flags.dtype != defaults.dtype, "-d/--dtype"},
                               {flags.reduction != defaults.reduction, "--reduction"},
                               {flags.blocks != defaults.blocks, "--blocks"},
                               {flags.iters != defaults.iters, "-n/--iters"}};
    LTX_RETURN_IF_ERROR(RefuseGivenFlags(given, "--bench"));
    LTX_RETURN_IF_ERROR(RefuseGivenFlags(GivenBenchFlags(flags), "--bench"));
  }
  return config;
}

std::vector<int64_t> BenchSizes(const AllReduceToolConfig& config) {
  std::vector<int64_t> sizes;
  for (double bytes = static_cast<double>(config.min_bytes); bytes <= config.max_bytes;
       bytes *= config.factor) {
    sizes.push_back(static_cast<int64_t>(bytes));
  }
  return sizes;
}

}  // namespace ltx
