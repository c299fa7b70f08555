// ltx_allreduce: smoke run and benchmark of ltx's AllReduce and ReduceScatter, and benchmark of
// the AllReduce with the fused RMSNorm epilogue.
//
//   ltx_allreduce                 smoke run: one AllReduce and one ReduceScatter per dtype (bf16,
//                                 fp16, fp32) and reduction (sum, max, min), and the AllReduce
//                                 with the fused RMSNorm in each dtype, on the ranks of
//                                 --devices/-g, random data, every rank's output checked bit for
//                                 bit against the host reference in rank order; PASS/FAIL per
//                                 case and a summary line (exit 0/1).
//   ltx_allreduce --bench         a sweep of input bytes per rank (-b/-e/-f, default 8K to 256M,
//                                 times 2), --op allreduce|reduce_scatter, --dtype, --reduction,
//                                 ltx beside NCCL when libnccl.so.2 loads: plain, window
//                                 (symmetric windows) and ce (n/a: NCCL has no copy-engine
//                                 reductions), the best of them and ltx's speedup over it.
//   ltx_allreduce --bench --path both    the AllReduce's one-shot and two-shot side by side,
//                                 one row each per size (--path one_shot or two_shot: one of
//                                 them; auto, the default: the Runtime's threshold).
//   ltx_allreduce --bench --style=graph --json=allreduce.json
//                                 ltx's per-rank calls and NCCL's grouped calls captured into
//                                 CUDA graphs and replayed; every row's figures also to a JSON
//                                 file.
//   ltx_allreduce --bench --op allreduce_rmsnorm --hidden 8192
//                                 the AllReduce with the fused residual add and RMSNorm on rows
//                                 of 8192 elements, each size's first call checked bit for bit,
//                                 beside NCCL's AllReduce of the same bytes alone.
//   ltx_allreduce --help          the flags, short and long.
//
// The command line is checked before anything looks for a GPU (allreduce_flags.h): -h/--help
// prints the usage and exits 0; a bad flag prints one line and exits 2; so do no GPU and a
// device that is not visible. Times are medians of --windows windows of --iters calls, measured
// with CUDA events after --warmup calls; the table follows nccl-tests (size = input bytes per
// rank; busbw = algbw 2(n-1)/n for the AllReduce, algbw (n-1)/n for the ReduceScatter).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "kernels/reduce/reduce_kernel.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/runtime.h"
#include "ltx/status_macros.h"
#include "tools/bench/bench_style.h"
#include "tools/bench/bench_timing.h"
#include "tools/bench/json_document.h"
#include "tools/bench/nccl_best.h"
#include "tools/bench/nccl_side.h"
#include "tools/bench/style_timing.h"
#include "tools/flags/command_line.h"
#include "tools/ltx_allreduce/allreduce_config.h"
#include "tools/ltx_allreduce/allreduce_flags.h"
#include "tools/ltx_allreduce/allreduce_json.h"
#include "tools/ltx_allreduce/allreduce_path.h"
#include "tools/ltx_allreduce/nccl_reduce_modes.h"
#include "tools/ltx_allreduce/reduce_bandwidth.h"
#include "tools/testing/gpu_fixture.h"
#include "tools/testing/rank_threads.h"
#include "tools/testing/reduce_harness.h"
#include "tools/testing/rmsnorm_harness.h"
#include "tools/testing/visible_gpus.h"

namespace ltx {
namespace {

// Bytes of each rank's input and output areas in the smoke run: more than its largest case.
constexpr int64_t kSmokeCapacity = int64_t{1} << 20;
// How long the tool waits on the host for a call to finish.
constexpr absl::Duration kWait = absl::Seconds(30);

// The smoke cases on `world` ranks: per collective, dtype and reduction, an AllReduce of an odd
// count, or a ReduceScatter of batch 2 and an odd hidden with uneven token counts (every third
// rank none).
std::vector<ReduceCase> SmokeCases(int world) {
  std::vector<ReduceCase> cases;
  for (Collective collective : {Collective::kAllReduce, Collective::kReduceScatter}) {
    for (DataType dtype : {DataType::kBFloat16, DataType::kFloat16, DataType::kFloat32}) {
      for (Reduction reduction : {Reduction::kSum, Reduction::kMax, Reduction::kMin}) {
        ReduceCase c;
        c.collective = collective;
        c.dtype = dtype;
        c.reduction = reduction;
        c.count = 1000 * world + 3;
        c.batch = 2;
        c.hidden = 33;
        for (int r = 0; r < world; ++r) c.token_counts.push_back(r % 3 == 1 ? 0 : 5 + 4 * r);
        cases.push_back(c);
      }
    }
  }
  return cases;
}

// The epilogue's smoke cases: a row of a 4096-wide model, odd rows of odd widths, the residual
// updated in place, each dtype.
std::vector<RmsNormCase> SmokeRmsNormCases() {
  std::vector<RmsNormCase> cases(3);
  cases[0].shape = {DataType::kBFloat16, /*rows=*/3, /*hidden=*/4096, /*eps=*/1e-6f};
  cases[1].shape = {DataType::kFloat16, /*rows=*/5, /*hidden=*/100, /*eps=*/1e-5f};
  cases[2].shape = {DataType::kFloat32, /*rows=*/7, /*hidden=*/31, /*eps=*/1e-5f};
  cases[2].residual_in_place = true;
  return cases;
}

// The epilogue's case `c` in `style`, waited for and verified bit for bit.
absl::Status RunRmsNormCase(Runtime& runtime, RmsNormHarness& harness, const RmsNormCase& c,
                            CallStyle style) {
  LTX_RETURN_IF_ERROR(harness.Prepare(c));
  const std::vector<RmsNormBuffers> buffers = harness.AllBuffers();
  if (style == CallStyle::kCoordinated) {
    LTX_RETURN_IF_ERROR(runtime.AllReduceRmsNormAndWait(c.shape, buffers, kWait));
  } else {
    LTX_RETURN_IF_ERROR(RunOnRankThreads(runtime.world_size(), [&](int rank) {
      return runtime.AllReduceRmsNormRank(rank, c.shape, buffers[rank]);
    }));
    LTX_RETURN_IF_ERROR(runtime.Synchronize(kWait));
  }
  return harness.Verify();
}

// Prints one smoke case's line, and Resets `runtime` where the case stopped it, so that the next
// case runs; returns 1 if it failed.
int FinishSmokeCase(Runtime& runtime, const std::string& what, CallStyle style,
                    const absl::Status& status) {
  absl::PrintF("%-64s %-12s %s\n", what,
               style == CallStyle::kCoordinated ? "coordinated" : "per-rank",
               status.ok() ? "PASS" : absl::StrCat("FAIL ", status.ToString()));
  if (status.ok()) return 0;
  if (!runtime.status().ok()) runtime.Reset(kWait).IgnoreError();
  return 1;
}

// Runs every smoke case once (the reductions', then the epilogue's), alternating coordinated
// and per-rank calls; the exit code.
int Smoke(Runtime& runtime) {
  const absl::StatusOr<std::unique_ptr<ReduceHarness>> harness =
      ReduceHarness::Create(runtime.devices(), kSmokeCapacity, /*seed=*/7);
  const absl::StatusOr<std::unique_ptr<RmsNormHarness>> rmsnorm =
      RmsNormHarness::Create(runtime.devices(), kSmokeCapacity, /*seed=*/8);
  for (const absl::Status& created : {harness.status(), rmsnorm.status()}) {
    if (!created.ok()) {
      absl::PrintF("ltx_allreduce: %s\nFAIL\n", created.ToString());
      return kExitFailed;
    }
  }
  const std::vector<ReduceCase> cases = SmokeCases(runtime.world_size());
  const std::vector<RmsNormCase> rmsnorm_cases = SmokeRmsNormCases();
  int failures = 0;
  absl::PrintF("%-64s %-12s %s\n", "# case", "style", "result");
  for (size_t i = 0; i < cases.size(); ++i) {
    const CallStyle style = i % 2 == 0 ? CallStyle::kCoordinated : CallStyle::kPerRankThreads;
    failures += FinishSmokeCase(runtime, cases[i].ToString(), style,
                                RunAndVerify(runtime, **harness, cases[i], style));
  }
  for (size_t i = 0; i < rmsnorm_cases.size(); ++i) {
    const CallStyle style = i % 2 == 0 ? CallStyle::kCoordinated : CallStyle::kPerRankThreads;
    failures +=
        FinishSmokeCase(runtime, absl::StrCat("all_reduce_rmsnorm ", rmsnorm_cases[i].ToString()),
                        style, RunRmsNormCase(runtime, **rmsnorm, rmsnorm_cases[i], style));
  }
  absl::PrintF("%s: %d of %d case(s) failed on %d rank(s)\n", failures == 0 ? "PASS" : "FAIL",
               failures, cases.size() + rmsnorm_cases.size(), runtime.world_size());
  return failures == 0 ? kExitOk : kExitFailed;
}

// The benchmark's case of `bytes` input bytes per rank on `world` ranks: an AllReduce of
// bytes / element size elements, or a ReduceScatter (batch 1, rows of one element) of as many
// split evenly (rounded down to equal blocks, as in nccl-tests); at least one element per rank.
ReduceCase BenchCase(const AllReduceToolConfig& config, int64_t bytes, int world) {
  ReduceCase c;
  c.collective = config.collective;
  c.dtype = config.dtype;
  c.reduction = config.reduction;
  c.count = std::max<int64_t>(1, bytes / ElementSize(config.dtype));
  c.token_counts.assign(world, std::max<int64_t>(1, c.count / world));
  if (c.collective == Collective::kReduceScatter) c.count = c.token_counts[0] * world;
  return c;
}

// The benchmark's header on `world` ranks, `with_nccl` when NCCL has a clique.
void PrintBenchHeader(const AllReduceToolConfig& config, int world, bool with_nccl) {
  absl::PrintF(
      "# ltx_allreduce: %s, path %s, %d rank(s), medians of %d windows of %d calls (us); ltx: "
      "style %s (%s); NCCL: grouped from one thread (%s); NCCL's outputs are not checked (its "
      "order of reduction is its own)\n",
      OpFlagName(config.collective), AllReducePathsFlagName(config.paths), world,
      config.timing.windows, PlanAsRun(config.style, config.timing).iterations,
      BenchStyleName(config.style),
      CallTimingName(config.style), CallTimingName(config.style));
  const bool epilogue = config.collective == Collective::kAllReduceRmsNorm;
  absl::PrintF("#\n# %10s %12s %6s %6s %8s | %9s %8s %8s %6s |%s %s\n", "size", "count", "type",
               "redop", "path", "ltx(us)", "algbw", "busbw", "#wrong",
               epilogue ? absl::StrFormat(" %9s %11s %8s %8s |", "allreduce", "+rmsnorm",
                                          "fused/ar", "unf/fus")
                        : "",
               NcclColumnTitles());
  absl::PrintF(
      "# (size: input bytes per rank, nccl-tests' size; path: ltx's AllReduce path, auto = the "
      "Runtime's threshold; busbw = algbw * %s; plain, window, ce: NCCL's modes; speedup: best "
      "/ ltx)\n",
      config.collective == Collective::kReduceScatter ? "(n-1)/n" : "2(n-1)/n");
  if (config.collective == Collective::kAllReduceRmsNorm) {
    absl::PrintF(
        "# (allreduce_rmsnorm: rows of %d elements; ltx: the AllReduce with the fused residual "
        "add and RMSNorm; allreduce: ltx's AllReduce of the same elements alone; +rmsnorm: that "
        "AllReduce, then the residual add and RMSNorm as a kernel of its own (same bits); "
        "fused/ar: ltx / allreduce; unf/fus: +rmsnorm / ltx; NCCL: its AllReduce of the same "
        "bytes alone, without the RMSNorm)\n",
        config.hidden);
  }
  if (!with_nccl) absl::PrintF("# (no NCCL: its columns are -)\n");
}

void PrintBenchRow(const AllReduceBenchRow& row, const AllReduceToolConfig& config) {
  const std::string epilogue =
      config.collective == Collective::kAllReduceRmsNorm
          ? absl::StrFormat(" %9.2f %11.2f %8.3f %8.3f |", row.all_reduce_us, row.unfused_us,
                            row.ltx_us / row.all_reduce_us, row.unfused_us / row.ltx_us)
          : "";
  absl::PrintF("  %10d %12d %6s %6s %8s | %9.2f %8.2f %8.2f %6d |%s %s\n", row.size_bytes,
               row.count, DataTypeName(config.dtype), ReductionName(config.reduction),
               AllReducePathName(row.path), row.ltx_us, row.ltx_algbw, row.ltx_busbw, row.wrong,
               epilogue, NcclCells(row.nccl, row.ltx_us));
}

// The median device time per call (us) of `ltx_call`, timed in the style of `config` on `ranks`.
absl::StatusOr<double> TimeCall(Runtime& runtime, const AllReduceToolConfig& config,
                                const TimedRanks& ranks, const LtxCall& ltx_call) {
  LTX_ASSIGN_OR_RETURN(const Measured measured, MeasureLtxCall(config.style, runtime.transport(),
                                                               config.timing, ranks, ltx_call));
  LTX_RETURN_IF_ERROR(runtime.Synchronize(kWait));
  return measured.device_us;
}

// Runs the harness's current case once on `row->path` (verified bit for bit), then times it in the
// style of `config` on `ranks` (the harness's streams, with their events) on fresh inputs and
// poisoned outputs, verified again after the timed calls; sets the row's ltx figures.
absl::Status TimeLtx(Runtime& runtime, ReduceHarness& harness, const AllReduceToolConfig& config,
                     const TimedRanks& ranks, AllReduceBenchRow* row) {
  CallOptions call;
  call.blocks = config.blocks;
  call.two_shot_min_bytes = TwoShotMinBytesOf(row->path);
  LTX_RETURN_IF_ERROR(harness.Launch(runtime, CallStyle::kCoordinated, call));
  LTX_RETURN_IF_ERROR(runtime.Synchronize(kWait));
  row->wrong = harness.Verify().ok() ? 0 : 1;
  // Fresh inputs and poisoned outputs again (the benchmark's calls are out of place, so the
  // timed calls all write the same output): the check after them sees only what they wrote.
  LTX_RETURN_IF_ERROR(harness.RefreshInputs());
  LtxCall ltx_call;
  ltx_call.rank = [&](int rank) { return harness.RankCall(runtime, rank, call); };
  ltx_call.coordinated = [&] { return harness.Launch(runtime, CallStyle::kCoordinated, call); };
  LTX_ASSIGN_OR_RETURN(row->ltx_us, TimeCall(runtime, config, ranks, ltx_call));
  if (!harness.Verify().ok()) row->wrong = 1;
  const ReduceBandwidth bandwidth =
      ReduceBandwidthOf(config.collective, runtime.world_size(), row->size_bytes, row->ltx_us);
  row->ltx_algbw = bandwidth.algbw;
  row->ltx_busbw = bandwidth.busbw;
  return absl::OkStatus();
}

// Times `bytes` per rank: ltx's call on each path of `config`, then NCCL's modes on the same
// buffers; prints and appends one row per path to `rows`.
absl::Status BenchOne(Runtime& runtime, ReduceHarness& harness, const NcclSide& nccl,
                      const AllReduceToolConfig& config, const TimedRanks& ranks, int64_t bytes,
                      std::vector<AllReduceBenchRow>* rows) {
  const ReduceCase c = BenchCase(config, bytes, runtime.world_size());
  LTX_RETURN_IF_ERROR(harness.Prepare(c));
  std::vector<AllReduceBenchRow> size_rows;
  for (AllReducePath path : config.paths) {
    // Fresh inputs and poisoned outputs, so that each path's check sees its own output.
    if (!size_rows.empty()) LTX_RETURN_IF_ERROR(harness.RefreshInputs());
    AllReduceBenchRow row;
    row.count = c.count;
    row.size_bytes = c.count * ElementSize(config.dtype);
    row.path = path;
    LTX_RETURN_IF_ERROR(TimeLtx(runtime, harness, config, ranks, &row));
    size_rows.push_back(row);
  }
  const NcclReduceCall nccl_call{config.collective, config.dtype, config.reduction, c.count};
  LTX_ASSIGN_OR_RETURN(
      const NcclTimes nccl_times,
      TimeNcclReduce(nccl, nccl_call, harness.AllBuffers(), config.style, config.timing, ranks));
  for (AllReduceBenchRow& row : size_rows) {
    row.nccl = nccl_times;
    PrintBenchRow(row, config);
    rows->push_back(row);
  }
  std::fflush(stdout);
  return absl::OkStatus();
}

// The epilogue's case of `bytes` input bytes per rank: rows of config.hidden elements (at least
// one), the residual apart from residual_out (so that repeated calls keep their inputs).
RmsNormCase BenchRmsNormCase(const AllReduceToolConfig& config, int64_t bytes) {
  RmsNormCase c;
  c.shape.dtype = config.dtype;
  c.shape.hidden = config.hidden;
  c.shape.rows = std::max<int64_t>(1, bytes / (config.hidden * ElementSize(config.dtype)));
  return c;
}

// The epilogue alone on `rank`'s stream, from the AllReduce's output into itself: the second
// half of the unfused form (BenchRmsNormOne).
absl::Status UnfusedEpilogue(Runtime& runtime, const RmsNormCase& c, const RmsNormBuffers& b,
                             int rank) {
  RmsNormAloneArgs args;
  args.input = b.output;
  args.residual = b.residual;
  args.residual_out = b.residual_out;
  args.weight = b.weight;
  args.output = b.output;
  args.rows = c.shape.rows;
  args.hidden = c.shape.hidden;
  args.eps = c.shape.eps;
  args.dtype = static_cast<int32_t>(c.shape.dtype);
  LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(runtime.devices()[rank]), "cudaSetDevice"));
  return CudaStatus(LaunchRmsNormAlone(args, static_cast<int>(c.shape.rows), b.stream),
                    "the epilogue alone");
}

// Poisons the harness's outputs for `c` (Prepare), runs `launch`, waits and verifies bit for
// bit; a wrong output is printed as a # line naming `what`, and sets *wrong.
absl::Status CheckRmsNormOnce(Runtime& runtime, RmsNormHarness& harness, const RmsNormCase& c,
                              absl::string_view what, const std::function<absl::Status()>& launch,
                              int* wrong) {
  LTX_RETURN_IF_ERROR(harness.Prepare(c));
  LTX_RETURN_IF_ERROR(launch());
  LTX_RETURN_IF_ERROR(runtime.Synchronize(kWait));
  const absl::Status verified = harness.Verify();
  if (!verified.ok()) {
    absl::PrintF("# %s: wrong output: %s\n", what, verified.ToString());
    *wrong = 1;
  }
  return absl::OkStatus();
}

// Times the epilogue at `bytes` per rank: ltx's fused call, ltx's AllReduce of the same
// elements alone, and the unfused form a server runs without the fusion (that AllReduce, then
// the epilogue alone from its output into itself, UnfusedEpilogue: the fused call's outputs bit
// for bit, since the fused kernel rounds the sum to the dtype before it adds the residual, in the
// same order), each in the style of `config`; then NCCL's AllReduce of the same bytes. The fused
// call (coordinated) and the unfused form (per-rank and coordinated) are verified bit for bit
// first. Prints and appends the row.
absl::Status BenchRmsNormOne(Runtime& runtime, RmsNormHarness& harness, const NcclSide& nccl,
                             const AllReduceToolConfig& config, const TimedRanks& ranks,
                             int64_t bytes, std::vector<AllReduceBenchRow>* rows) {
  const RmsNormCase c = BenchRmsNormCase(config, bytes);
  LTX_RETURN_IF_ERROR(harness.Prepare(c));
  const std::vector<RmsNormBuffers> buffers = harness.AllBuffers();
  const std::vector<RankBuffers> sum_buffers = harness.InputsAndOutputs();
  CallOptions call;
  call.blocks = config.blocks;
  AllReduceBenchRow row;
  row.count = c.shape.rows * c.shape.hidden;
  row.size_bytes = row.count * ElementSize(config.dtype);
  const AllReduceShape sum{c.shape.dtype, row.count, Reduction::kSum};

  LtxCall fused;
  fused.rank = [&](int rank) {
    return runtime.AllReduceRmsNormRank(rank, c.shape, buffers[rank], call);
  };
  fused.coordinated = [&] { return runtime.AllReduceRmsNorm(c.shape, buffers, call).status(); };
  LtxCall all_reduce;
  all_reduce.rank = [&](int rank) {
    return runtime.AllReduceRank(rank, sum, sum_buffers[rank], call);
  };
  all_reduce.coordinated = [&] { return runtime.AllReduce(sum, sum_buffers, call).status(); };
  LtxCall unfused;
  unfused.rank = [&](int rank) -> absl::Status {
    LTX_RETURN_IF_ERROR(runtime.AllReduceRank(rank, sum, sum_buffers[rank], call));
    return UnfusedEpilogue(runtime, c, buffers[rank], rank);
  };
  unfused.coordinated = [&]() -> absl::Status {
    LTX_RETURN_IF_ERROR(all_reduce.coordinated());
    for (int rank = 0; rank < runtime.world_size(); ++rank) {
      LTX_RETURN_IF_ERROR(UnfusedEpilogue(runtime, c, buffers[rank], rank));
    }
    return absl::OkStatus();
  };

  LTX_RETURN_IF_ERROR(
      CheckRmsNormOnce(runtime, harness, c, "fused", fused.coordinated, &row.wrong));
  LTX_RETURN_IF_ERROR(CheckRmsNormOnce(
      runtime, harness, c, "unfused, per-rank calls",
      [&] { return RunOnRankThreads(runtime.world_size(), unfused.rank); }, &row.wrong));
  LTX_RETURN_IF_ERROR(CheckRmsNormOnce(runtime, harness, c, "unfused, coordinated",
                                       unfused.coordinated, &row.wrong));
  LTX_ASSIGN_OR_RETURN(row.ltx_us, TimeCall(runtime, config, ranks, fused));
  const ReduceBandwidth bandwidth =
      ReduceBandwidthOf(config.collective, runtime.world_size(), row.size_bytes, row.ltx_us);
  row.ltx_algbw = bandwidth.algbw;
  row.ltx_busbw = bandwidth.busbw;
  LTX_ASSIGN_OR_RETURN(row.all_reduce_us, TimeCall(runtime, config, ranks, all_reduce));
  LTX_ASSIGN_OR_RETURN(row.unfused_us, TimeCall(runtime, config, ranks, unfused));

  const NcclReduceCall nccl_call{config.collective, config.dtype, Reduction::kSum, row.count};
  LTX_ASSIGN_OR_RETURN(row.nccl, TimeNcclReduce(nccl, nccl_call, harness.InputsAndOutputs(),
                                                config.style, config.timing, ranks));
  PrintBenchRow(row, config);
  rows->push_back(row);
  std::fflush(stdout);
  return absl::OkStatus();
}

absl::Status Bench(Runtime& runtime, const AllReduceToolConfig& config) {
  const std::vector<int64_t> sizes = BenchSizes(config);
  // The largest case, and at least one element per rank (BenchCase) or one row
  // (BenchRmsNormCase).
  const bool rmsnorm_op = config.collective == Collective::kAllReduceRmsNorm;
  const int64_t capacity = std::max<int64_t>(
      sizes.back(),
      ElementSize(config.dtype) * (rmsnorm_op ? config.hidden : runtime.world_size()));
  std::unique_ptr<ReduceHarness> harness;
  std::unique_ptr<RmsNormHarness> rmsnorm;
  std::vector<RankBuffers> streams;
  if (rmsnorm_op) {
    LTX_ASSIGN_OR_RETURN(rmsnorm, RmsNormHarness::Create(runtime.devices(), capacity, 1));
    streams = rmsnorm->Streams();
  } else {
    LTX_ASSIGN_OR_RETURN(harness, ReduceHarness::Create(runtime.devices(), capacity, 1));
    streams = harness->AllBuffers();
  }
  LTX_ASSIGN_OR_RETURN(EventPairs events, EventPairs::Create(runtime.devices()));
  const TimedRanks ranks = TimedRanksOf(runtime.devices(), streams, &events);
  NcclSide nccl = LoadNccl(config.nccl_path, runtime.devices());
  OpenNcclReduceModes(runtime.devices(), capacity, &nccl);
  absl::PrintF("%s", NcclModesNote(nccl));
  PrintBenchHeader(config, runtime.world_size(), nccl.clique != nullptr);
  std::vector<AllReduceBenchRow> rows;
  for (int64_t bytes : sizes) {
    LTX_RETURN_IF_ERROR(
        rmsnorm != nullptr
            ? BenchRmsNormOne(runtime, *rmsnorm, nccl, config, ranks, bytes, &rows)
            : BenchOne(runtime, *harness, nccl, config, ranks, bytes, &rows));
  }
  int wrong = 0;
  for (const AllReduceBenchRow& row : rows) wrong += row.wrong;
  return FinishBenchmarkRun(config.json_path,
                            AllReduceJson(config, runtime.devices(), nccl.version, rows), wrong);
}

int Main(int argc, char** argv) {
  AllReduceToolConfig config;
  const CommandLineOutcome parsed =
      ParseAllReduceCommandLine(std::vector<std::string>(argv, argv + argc), &config);
  if (parsed.exit_code >= 0) return FinishCommandLine(parsed);
  const int visible = VisibleGpuCount();
  const int unusable = ExitUnlessDevicesVisible("ltx_allreduce", config.devices, visible);
  if (unusable >= 0) return unusable;
  RuntimeOptions options;
  options.devices = config.devices;
  options.max_blocks = config.max_blocks;
  options.transport = Transport::kPeerStores;  // The reductions' only transport.
  absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
  if (!runtime.ok()) {
    absl::PrintF("ltx_allreduce: %s\nFAIL\n", runtime.status().ToString());
    return kExitFailed;
  }
  int exit_code = kExitOk;
  if (config.smoke) exit_code = Smoke(**runtime);
  if (config.bench) {
    const absl::Status status = Bench(**runtime, config);
    if (!status.ok()) {
      absl::PrintF("ltx_allreduce: %s\nFAIL\n", status.ToString());
      exit_code = kExitFailed;
    }
  }
  return exit_code;
}

}  // namespace
}  // namespace ltx

int main(int argc, char** argv) { return ltx::Main(argc, argv); }
