// ltx_allgather: the command-line tool of ltx.
//
//   ltx_allgather                  smoke run on every visible GPU: a handful of shapes and
//                                  dtypes in both call styles, each verified byte-exact;
//                                  prints a table and PASS/FAIL.
//   ltx_allgather --bench          nccl-tests-style size sweep against the launch floor, with
//                                  NCCL side by side.
//   ltx_allgather --overlap        a cuBLAS GEMM and the AllGather side by side on every GPU,
//                                  per AllGather style, against each alone.
//   ltx_allgather --breakdown      where the time of an AllGather goes: phases of the one-trip
//                                  or (--protocol=direct) the direct kernel per GPU; one-trip:
//                                  host cost per step of a call.
//   ltx_allgather --help           the flags, short and long.
//
// The command line is checked before anything looks for a GPU: -h/--help prints the usage and
// exits 0; a bad flag prints one line and exits 2. Exit codes: 0 pass, 1 failure, 2 nothing ran
// (bad command line or no GPU).
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "ltx/runtime_options.h"
#include "tools/ltx_allgather/benchmark.h"
#include "tools/ltx_allgather/breakdown.h"
#include "tools/ltx_allgather/command_line.h"
#include "tools/ltx_allgather/overlap.h"
#include "tools/ltx_allgather/smoke.h"
#include "tools/ltx_allgather/tool_config.h"
#include "tools/testing/visible_gpus.h"

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
          "-b: smallest size, total output bytes (K/M/G).");
ABSL_FLAG(std::string, max_bytes, ltx::FlagValues().max_bytes,
          "-e: largest size, total output bytes (K/M/G).");
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

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitNothingRan = 2;

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

// Translates, checks and parses the command line into the run's settings. Prints the usage and
// returns kExitOk for help, prints the error and returns kExitNothingRan for a bad command line;
// returns -1 with `config` set otherwise.
int ParseCommandLine(int argc, char** argv, ToolConfig* config) {
  const std::vector<std::string> args(argv, argv + argc);
  if (WantsHelp(args)) {
    std::fputs(UsageText().c_str(), stdout);
    return kExitOk;
  }
  absl::StatusOr<std::vector<std::string>> translated = TranslateShortFlags(args);
  absl::Status status = translated.ok() ? CheckFlags(*translated) : translated.status();
  if (status.ok()) {
    std::vector<char*> pointers;
    for (std::string& arg : *translated) pointers.push_back(arg.data());
    const std::vector<char*> positional =
        absl::ParseCommandLine(static_cast<int>(pointers.size()), pointers.data());
    if (positional.size() > 1) {
      status = absl::InvalidArgumentError(std::string("unexpected argument '") + positional[1] +
                                          "'; --help lists the flags");
    }
  }
  if (status.ok()) {
    absl::StatusOr<ToolConfig> made = MakeToolConfig(ReadFlags());
    if (made.ok()) *config = *std::move(made);
    status = made.status();
  }
  if (!status.ok()) {
    std::fprintf(stderr, "ltx_allgather: %s\n", std::string(status.message()).c_str());
    return kExitNothingRan;
  }
  return -1;
}

// Prints the final verdict over `rows` (each with a `wrong` count) and returns the exit code;
// an error that stopped the run is printed and fails it.
template <typename Row>
int Verdict(const absl::StatusOr<std::vector<Row>>& rows, const char* unit) {
  if (!rows.ok()) {
    std::fprintf(stderr, "ltx_allgather: %s\n", rows.status().ToString().c_str());
    return kExitFailed;
  }
  int64_t wrong = 0;
  for (const Row& row : *rows) wrong += row.wrong;
  std::printf("# %s: %zu %s, %d with wrong results\n", wrong == 0 ? "PASS" : "FAIL", rows->size(),
              unit, static_cast<int>(wrong));
  return wrong == 0 ? kExitOk : kExitFailed;
}

int Main(int argc, char** argv) {
  ToolConfig config;
  const int parsed = ParseCommandLine(argc, argv, &config);
  if (parsed >= 0) return parsed;
  if (VisibleGpuCount() == 0) {
    std::printf("ltx_allgather: no CUDA GPU is visible; nothing to run (exit 2)\n");
    return kExitNothingRan;
  }
  switch (config.mode) {
    case ToolMode::kBench:
      return Verdict(RunBenchmark(config.bench_config), "sizes");
    case ToolMode::kOverlap:
      return Verdict(RunOverlap(config.overlap_config), "styles");
    case ToolMode::kBreakdown:
      return Verdict(RunBreakdown(config.breakdown), "configurations");
    case ToolMode::kSmoke:
      break;
  }
  const absl::StatusOr<SmokeResult> result = RunSmoke(config.smoke);
  if (!result.ok()) {
    std::printf("ltx_allgather: %s\n", result.status().ToString().c_str());
    return kExitFailed;
  }
  return result->failures == 0 ? kExitOk : kExitFailed;
}

}  // namespace
}  // namespace ltx

int main(int argc, char** argv) { return ltx::Main(argc, argv); }
