// ltx_allgather's flags and the parse of its command line.
#include "tools/ltx_allgather/tool_flags.h"

#include <cstdint>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "tools/ltx_allgather/command_line.h"

// The flags, with the defaults of ltx::FlagValues; --help (command_line.cc) describes them for
// people, with their short forms.
ABSL_FLAG(bool, bench, ltx::FlagValues().bench,
          "Run the benchmark sweep instead of the smoke run.");
ABSL_FLAG(bool, overlap, ltx::FlagValues().overlap,
          "Run a GEMM beside the AllGather on every GPU, per AllGather style.");
ABSL_FLAG(bool, breakdown, ltx::FlagValues().breakdown,
          "Time the phases of the one-trip (or, with --protocol=direct, the direct) kernel, and "
          "the host steps of a per-rank one-trip call.");
ABSL_FLAG(std::string, breakdown_blocks, ltx::FlagValues().breakdown_blocks,
          "Breakdown: block counts to compare, e.g. 0,1,2,4 (0 = automatic).");
ABSL_FLAG(std::string, devices, ltx::FlagValues().devices,
          "CUDA device ordinals in rank order, e.g. 3,1.");
ABSL_FLAG(int, gpus, ltx::FlagValues().gpus, "-g: use GPUs 0..N-1; 0 = every visible GPU.");
ABSL_FLAG(std::string, min_bytes, ltx::FlagValues().min_bytes,
          "-b: smallest size, output bytes per rank (K/M/G).");
ABSL_FLAG(std::string, max_bytes, ltx::FlagValues().max_bytes,
          "-e: largest size, output bytes per rank (K/M/G).");
ABSL_FLAG(double, step_factor, ltx::FlagValues().step_factor,
          "-f: factor between successive sizes.");
ABSL_FLAG(std::string, dtype, ltx::FlagValues().dtype,
          "-d: element type; default bf16 (bench), every type (smoke).");
ABSL_FLAG(int64_t, hidden, ltx::FlagValues().hidden, "Benchmark: elements per token row.");
ABSL_FLAG(std::string, split, ltx::FlagValues().split, "Benchmark: even, uneven or zeros.");
ABSL_FLAG(std::string, style, ltx::FlagValues().style, "Benchmark: rank, coordinated or graph.");
ABSL_FLAG(int, warmup, ltx::FlagValues().warmup, "-w: warm-up calls before timing.");
ABSL_FLAG(int, iters, ltx::FlagValues().iters, "-n: calls per timed window.");
ABSL_FLAG(int, windows, ltx::FlagValues().windows,
          "Benchmark: timed windows; the median is reported.");
ABSL_FLAG(int, blocks, ltx::FlagValues().blocks,
          "Thread blocks per rank for each call; 0 = by size.");
ABSL_FLAG(int, max_blocks, ltx::FlagValues().max_blocks,
          "Cap on thread blocks per rank; 0 = one per SM.");
ABSL_FLAG(std::string, protocol, ltx::FlagValues().protocol,
          "auto, direct, one_trip or copy_engine.");
ABSL_FLAG(std::string, transport, ltx::FlagValues().transport, "auto, peer_stores or copy_engine.");
ABSL_FLAG(int64_t, one_trip_max_bytes, ltx::FlagValues().one_trip_max_bytes,
          "Largest one-trip shard (at most 524288); -1 = by world size.");
ABSL_FLAG(int64_t, copy_engine_min_bytes, ltx::FlagValues().copy_engine_min_bytes,
          "Smallest shard of an eager automatic call on the copy engines; 0 = never.");
ABSL_FLAG(absl::Duration, timeout, ltx::FlagValues().timeout,
          "-T: how long a GPU waits for its peers; the host waits 3 times as long.");
ABSL_FLAG(bool, check, ltx::FlagValues().check, "-c: verify every benchmark row byte-exact.");
ABSL_FLAG(bool, in_place, ltx::FlagValues().in_place,
          "Benchmark, overlap, breakdown: each rank's input is its own tokens inside its output "
          "(NCCL's in-place AllGather; NCCL is called in place too).");
ABSL_FLAG(std::string, nccl, ltx::FlagValues().nccl, "Benchmark: libnccl to dlopen; empty = none.");
ABSL_FLAG(std::string, json, ltx::FlagValues().json,
          "Benchmark: also write every figure to this JSON file.");
ABSL_FLAG(std::string, gemm, ltx::FlagValues().gemm, "Overlap: the GEMM's M,N,K.");
ABSL_FLAG(std::string, overlap_styles, ltx::FlagValues().overlap_styles,
          "Overlap: AllGather styles to compare (sm, sm_budget, copy_engine, nccl).");
ABSL_FLAG(std::string, cublas, ltx::FlagValues().cublas,
          "Overlap: libcublas.so.13 to dlopen; empty = LTX_CUBLAS, then the usual places.");

namespace ltx {
namespace {

// The flag values as the command line set them.
FlagValues ReadFlags() {
  FlagValues f;
  f.bench = absl::GetFlag(FLAGS_bench);
  f.overlap = absl::GetFlag(FLAGS_overlap);
  f.breakdown = absl::GetFlag(FLAGS_breakdown);
  f.breakdown_blocks = absl::GetFlag(FLAGS_breakdown_blocks);
  f.devices = absl::GetFlag(FLAGS_devices);
  f.gpus = absl::GetFlag(FLAGS_gpus);
  f.min_bytes = absl::GetFlag(FLAGS_min_bytes);
  f.max_bytes = absl::GetFlag(FLAGS_max_bytes);
  f.step_factor = absl::GetFlag(FLAGS_step_factor);
  f.dtype = absl::GetFlag(FLAGS_dtype);
  f.hidden = absl::GetFlag(FLAGS_hidden);
  f.split = absl::GetFlag(FLAGS_split);
  f.style = absl::GetFlag(FLAGS_style);
  f.warmup = absl::GetFlag(FLAGS_warmup);
  f.iters = absl::GetFlag(FLAGS_iters);
  f.windows = absl::GetFlag(FLAGS_windows);
  f.blocks = absl::GetFlag(FLAGS_blocks);
  f.max_blocks = absl::GetFlag(FLAGS_max_blocks);
  f.protocol = absl::GetFlag(FLAGS_protocol);
  f.transport = absl::GetFlag(FLAGS_transport);
  f.one_trip_max_bytes = absl::GetFlag(FLAGS_one_trip_max_bytes);
  f.copy_engine_min_bytes = absl::GetFlag(FLAGS_copy_engine_min_bytes);
  f.timeout = absl::GetFlag(FLAGS_timeout);
  f.check = absl::GetFlag(FLAGS_check);
  f.in_place = absl::GetFlag(FLAGS_in_place);
  f.nccl = absl::GetFlag(FLAGS_nccl);
  f.json = absl::GetFlag(FLAGS_json);
  f.gemm = absl::GetFlag(FLAGS_gemm);
  f.overlap_styles = absl::GetFlag(FLAGS_overlap_styles);
  f.cublas = absl::GetFlag(FLAGS_cublas);
  return f;
}

}  // namespace

CommandLineOutcome ParseAllGatherCommandLine(const std::vector<std::string>& args,
                                             ToolConfig* config) {
  return ParseToolCommandLine(args, {"ltx_allgather", AllGatherShortFlags(), UsageText()}, [&] {
    absl::StatusOr<ToolConfig> made = MakeToolConfig(ReadFlags());
    if (made.ok()) *config = *std::move(made);
    return made.status();
  });
}

}  // namespace ltx
