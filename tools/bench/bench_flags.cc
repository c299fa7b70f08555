// The flags the collectives' tools share (ABSL_FLAG), with the defaults of
// ltx::BenchFlagValues; each tool's --help describes them for people, with their short forms.
#include "tools/bench/bench_flags.h"

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "ltx/rank_buffers.h"
#include "ltx/status_macros.h"

ABSL_FLAG(bool, bench, ltx::BenchFlagValues().bench, "Run the benchmark.");
ABSL_FLAG(bool, breakdown, ltx::BenchFlagValues().breakdown,
          "Time the phases of the one-trip or the direct kernel.");
ABSL_FLAG(std::string, breakdown_blocks, ltx::BenchFlagValues().breakdown_blocks,
          "Breakdown: block counts to compare, e.g. 0,1,2,4 (0 = automatic).");
ABSL_FLAG(std::string, devices, ltx::BenchFlagValues().devices,
          "CUDA device ordinals in rank order, e.g. 3,1 or 0,0 (ranks sharing a GPU).");
ABSL_FLAG(int, gpus, ltx::BenchFlagValues().gpus, "-g: use GPUs 0..N-1; 0 = every visible GPU.");
ABSL_FLAG(std::string, min_bytes, ltx::BenchFlagValues().min_bytes,
          "-b: smallest size, output bytes per rank (K/M/G).");
ABSL_FLAG(std::string, protocol, ltx::BenchFlagValues().protocol,
          "Protocol of ltx's calls: auto, direct, one_trip or copy_engine.");
ABSL_FLAG(int, blocks, ltx::BenchFlagValues().blocks,
          "Thread blocks per rank of each ltx call; 0 = by size.");
ABSL_FLAG(int, max_blocks, ltx::BenchFlagValues().max_blocks,
          "Cap on thread blocks per rank; 0 = one per SM, fewer where ranks share a GPU.");
ABSL_FLAG(std::string, transport, ltx::BenchFlagValues().transport,
          "auto, peer_stores or copy_engine.");
ABSL_FLAG(int, warmup, ltx::BenchFlagValues().warmup, "-w: warm-up calls before timing.");
ABSL_FLAG(int, windows, ltx::BenchFlagValues().windows, "Timed windows; the median is reported.");
ABSL_FLAG(std::string, style, ltx::BenchFlagValues().style,
          "Benchmark: rank, coordinated or graph.");
ABSL_FLAG(std::string, nccl, ltx::BenchFlagValues().nccl,
          "NCCL library to dlopen for the comparison; empty = none.");
ABSL_FLAG(std::string, json, ltx::BenchFlagValues().json,
          "Benchmark: also write every figure to this JSON file.");
ABSL_FLAG(int, tensors, ltx::BenchFlagValues().tensors,
          "Benchmark: tensors of the shape each timed call moves in one op, 1 to 4.");

namespace ltx {

std::vector<GivenFlag> GivenBenchFlags(const BenchFlagValues& values) {
  const BenchFlagValues defaults;
  return {{values.warmup != defaults.warmup, "-w/--warmup"},
          {values.windows != defaults.windows, "--windows"},
          {values.style != defaults.style, "--style"},
          {values.json != defaults.json, "--json"},
          {values.nccl != defaults.nccl, "--nccl"},
          {values.tensors != defaults.tensors, "--tensors"}};
}

void ReadBenchFlags(BenchFlagValues* values) {
  values->bench = absl::GetFlag(FLAGS_bench);
  values->breakdown = absl::GetFlag(FLAGS_breakdown);
  values->breakdown_blocks = absl::GetFlag(FLAGS_breakdown_blocks);
  values->devices = absl::GetFlag(FLAGS_devices);
  values->gpus = absl::GetFlag(FLAGS_gpus);
  values->min_bytes = absl::GetFlag(FLAGS_min_bytes);
  values->protocol = absl::GetFlag(FLAGS_protocol);
  values->blocks = absl::GetFlag(FLAGS_blocks);
  values->max_blocks = absl::GetFlag(FLAGS_max_blocks);
  values->transport = absl::GetFlag(FLAGS_transport);
  values->warmup = absl::GetFlag(FLAGS_warmup);
  values->windows = absl::GetFlag(FLAGS_windows);
  values->style = absl::GetFlag(FLAGS_style);
  values->nccl = absl::GetFlag(FLAGS_nccl);
  values->json = absl::GetFlag(FLAGS_json);
  values->tensors = absl::GetFlag(FLAGS_tensors);
}

absl::StatusOr<BenchCallSettings> BenchCallSettingsOf(const BenchFlagValues& values, int iters) {
  if (values.blocks < 0) return absl::InvalidArgumentError("--blocks: must be >= 0");
  if (values.max_blocks < 0) return absl::InvalidArgumentError("--max_blocks: must be >= 0");
  BenchCallSettings settings{values.blocks, values.max_blocks,
                             TimingPlan{values.warmup, iters, values.windows}};
  LTX_RETURN_IF_ERROR(ValidateTimingPlan(settings.timing));
  return settings;
}

absl::StatusOr<int> BenchTensorsOf(const BenchFlagValues& values) {
  if (values.tensors < 1 || values.tensors > kMaxTensors) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--tensors %d: must be 1 to %d", values.tensors, kMaxTensors));
  }
  if (values.tensors == 1) return 1;
  if (!values.bench) return absl::InvalidArgumentError("--tensors: only --bench takes it");
  for (absl::string_view protocol : absl::StrSplit(values.protocol, ',')) {
    if (protocol != "auto" && protocol != "direct") {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--tensors %d: --protocol %s runs one tensor per call; give auto or direct",
          values.tensors, std::string(protocol)));
    }
  }
  return values.tensors;
}

}  // namespace ltx
