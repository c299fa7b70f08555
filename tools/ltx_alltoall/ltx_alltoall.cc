// ltx_alltoall: smoke run, benchmark and phase breakdown of ltx's Ulysses all-to-all
// (sequence <-> heads).
//
//   ltx_alltoall                  smoke run: both directions, every dtype, odd shapes, uneven
//                                 and zero counts, an uneven head split with a rank without
//                                 heads (also with FP8 on the wire), both call styles, verified
//                                 byte-exact against the reference; PASS/FAIL (exit 0/1).
//   ltx_alltoall --bench          the model shapes (total tokens x 32 heads x head_dim, bf16,
//                                 batch 1), ltx beside NCCL when libnccl.so.2 loads: plain
//                                 (grouped ncclSend/ncclRecv plus a permute into the final
//                                 layout), window (n/a: not for send/recv) and ce (ncclAlltoAll
//                                 on the copy engines, NCCL 2.28+, plus the permute), the best
//                                 of them and ltx's speedup over it.
//   ltx_alltoall --bench -b 1M -e 256M -f 4    a sweep of sizes (output bytes per rank)
//                                 instead.
//   ltx_alltoall --bench -b 8K -e 1M -f 2 --protocol direct,one_trip,copy_engine
//                                 one row per protocol and shape, side by side.
//   ltx_alltoall --bench --max_blocks 264 --blocks 264    the block count of ltx's calls.
//   ltx_alltoall --bench --head_counts 6,10,6,10    an uneven head split (heads per rank), for
//                                 ltx and NCCL alike; the smoke run takes it too.
//   ltx_alltoall --bench -b 8K -e 16M --tensors 3    every timed call moves 3 tensors of the
//                                 shape in one op (the direct kernel), beside 3 calls of one
//                                 tensor each and their ratio.
//   ltx_alltoall --bench --style=graph --json=alltoall.json
//                                 ltx's per-rank calls and NCCL's grouped calls captured into
//                                 CUDA graphs and replayed; every row's figures also to a JSON
//                                 file.
//   ltx_alltoall --breakdown -b 8K --breakdown_blocks 0,1,2,4
//                                 where the time of an all-to-all goes: phases of the timed
//                                 kernel (CallOptions::phase_timestamps) per rank and block
//                                 count, in both call styles (the table of ltx_allgather
//                                 --breakdown); the one-trip kernel up to 512K per rank, the
//                                 direct kernel above (or as --protocol says); one-trip: also
//                                 with early start. Exit 1 if an output was wrong.
//   ltx_alltoall --breakdown -b 4M --breakdown_blocks 0,32,64    the direct kernel's phases.
//   ltx_alltoall --help           the flags, short and long.
//
// The command line is checked before anything looks for a GPU (alltoall_flags.h): -h/--help
// prints the usage and exits 0; a bad flag prints one line and exits 2; so do no GPU, a device
// that is not visible, and a --head_counts that does not fit the ranks.
// Times are medians of --windows windows of --iters calls, measured with CUDA events after
// --warmup calls; the table follows nccl-tests (size = output bytes per rank,
// busbw = algbw (n-1)/n).
// ltx's calls are issued in --style (default: eager per-rank calls from one thread per GPU);
// NCCL's calls are grouped from one thread, replayed from graphs with --style=graph.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "kernels/wire/fp8_run.h"
#include "ltx/runtime.h"
#include "ltx/status_macros.h"
#include "tools/bench/bench_style.h"
#include "tools/bench/bench_table.h"
#include "tools/bench/bench_timing.h"
#include "tools/bench/json_document.h"
#include "tools/bench/nccl_best.h"
#include "tools/bench/nccl_side.h"
#include "tools/bench/style_timing.h"
#include "tools/bench/tensor_calls.h"
#include "tools/bench/tensor_set.h"
#include "tools/flags/command_line.h"
#include "tools/ltx_alltoall/alltoall_breakdown.h"
#include "tools/ltx_alltoall/alltoall_config.h"
#include "tools/ltx_alltoall/alltoall_flags.h"
#include "tools/ltx_alltoall/alltoall_json.h"
#include "tools/ltx_alltoall/nccl_alltoall_modes.h"
#include "tools/testing/alltoall_harness.h"
#include "tools/testing/visible_gpus.h"

namespace ltx {
namespace {

std::vector<int64_t> EvenCounts(int64_t tokens, int world) {
  std::vector<int64_t> counts;
  for (int r = 0; r < world; ++r) counts.push_back(tokens / world + (r < tokens % world ? 1 : 0));
  return counts;
}

const char* DirectionName(AllToAllDirection direction) {
  return direction == AllToAllDirection::kSeqToHeads ? "seq->heads" : "heads->seq";
}

// The most bytes any rank's input or output takes in any of `cases` on `world` ranks (a case
// whose layout is rejected counts for nothing: preparing it reports why).
int64_t LargestBuffer(const std::vector<AllToAllCase>& cases, int world) {
  int64_t largest = 1;
  for (const AllToAllCase& c : cases) {
    const absl::StatusOr<AllToAllLayout> layout = ComputeAllToAllLayout(c.Shape(), world);
    if (!layout.ok()) continue;
    for (int r = 0; r < world; ++r) {
      largest = std::max({largest, layout->InputBytes(r), layout->OutputBytes(r)});
    }
  }
  return largest;
}

// The smoke cases: every dtype, odd head_dim, batch > 1, uneven and zero counts, misaligned,
// and an uneven head split: `head_counts` when given, else 2, 3, 2, 3, ... heads, none on the
// last of two or more ranks, on the native wire and, with `fp8` (the Runtime's calls run on the
// kernels) where its groups fit a run, with FP8 on the wire (bf16 and fp16).
std::vector<AllToAllCase> SmokeCases(int world, const std::vector<int64_t>& head_counts,
                                     bool fp8) {
  std::vector<AllToAllCase> cases;
  for (AllToAllDirection direction :
       {AllToAllDirection::kSeqToHeads, AllToAllDirection::kHeadsToSeq}) {
    for (DataType dtype : kAllDataTypes) {
      AllToAllCase c;
      c.dtype = dtype;
      c.heads = 4 * world;
      c.head_dim = 128;
      c.token_counts = EvenCounts(1000, world);
      c.direction = direction;
      cases.push_back(c);
    }
    AllToAllCase odd;
    odd.dtype = DataType::kFloat16;
    odd.batch = 3;
    odd.heads = world;
    odd.head_dim = 7;
    for (int r = 0; r < world; ++r) odd.token_counts.push_back(r % 3 == 1 ? 0 : 5 + 4 * r);
    odd.direction = direction;
    odd.input_misalignment = 2;
    odd.output_misalignment = 6;
    cases.push_back(odd);
    AllToAllCase split;
    split.head_dim = 64;
    split.token_counts = EvenCounts(777, world);
    split.direction = direction;
    split.head_counts = head_counts;
    for (int r = 0; head_counts.empty() && r < world; ++r) {
      split.head_counts.push_back(world > 1 && r == world - 1 ? 0 : 2 + r % 2);
    }
    split.heads = std::accumulate(split.head_counts.begin(), split.head_counts.end(), int64_t{0});
    cases.push_back(split);
    if (fp8 && *std::max_element(split.head_counts.begin(), split.head_counts.end()) <=
                   kFp8MaxRunVectors) {
      for (DataType dtype : {DataType::kBFloat16, DataType::kFloat16}) {
        AllToAllCase fp8 = split;
        fp8.dtype = dtype;
        fp8.wire = WireFormat::kFp8E4M3;
        cases.push_back(fp8);
      }
    }
  }
  return cases;
}

absl::Status RunOnce(Runtime& runtime, AllToAllHarness& harness, bool per_rank) {
  const AllToAllShape shape = harness.current_case().Shape();
  if (!per_rank) {
    return runtime.AllToAllAndWait(shape, harness.AllBuffers(), absl::Seconds(30));
  }
  for (int r = 0; r < runtime.world_size(); ++r) {
    LTX_RETURN_IF_ERROR(runtime.AllToAllRank(r, shape, harness.Buffers(r)));
  }
  return runtime.Synchronize(absl::Seconds(30));
}

// Runs every case of `cases` in both call styles, each with its round trip, and Resets the
// Runtime after a case that stopped it, so that the next case runs; the exit code.
int RunSmokeCases(Runtime& runtime, AllToAllHarness& harness,
                  const std::vector<AllToAllCase>& cases) {
  int failures = 0;
  absl::PrintF("%-70s %-12s %s\n", "# case", "style", "result");
  for (const AllToAllCase& c : cases) {
    for (bool per_rank : {false, true}) {
      absl::Status status = harness.Prepare(c);
      if (status.ok()) status = RunOnce(runtime, harness, per_rank);
      if (status.ok()) status = harness.Verify();
      if (status.ok()) status = harness.PrepareInverse();
      if (status.ok()) status = RunOnce(runtime, harness, per_rank);
      if (status.ok()) status = harness.Verify();  // The round trip returns the input.
      absl::PrintF("%-70s %-12s %s\n", c.ToString().c_str(), per_rank ? "per-rank" : "coordinated",
                   status.ok() ? "ok + round trip ok" : status.ToString().c_str());
      if (status.ok()) continue;
      ++failures;
      if (!runtime.status().ok()) runtime.Reset(absl::Seconds(30)).IgnoreError();
    }
  }
  absl::PrintF("%s: %d cases x 2 call styles, each with its round trip, on %d rank(s), GPUs [%s], "
               "%d failed\n",
               failures == 0 ? "PASS" : "FAIL", cases.size(), runtime.world_size(),
               absl::StrJoin(runtime.devices(), ","), failures);
  return failures == 0 ? kExitOk : kExitFailed;
}

// The smoke run, with the head split `head_counts` (empty: its own), on buffers that hold its
// largest case; the exit code.
int Smoke(Runtime& runtime, const std::vector<int64_t>& head_counts) {
  const int world = runtime.world_size();
  // FP8 on the wire runs on the kernels only: not on the copy-engine transport.
  const std::vector<AllToAllCase> cases =
      SmokeCases(world, head_counts, runtime.transport() == Transport::kPeerStores);
  const int64_t capacity = LargestBuffer(cases, world);
  const absl::StatusOr<std::unique_ptr<AllToAllHarness>> harness =
      AllToAllHarness::Create(runtime.devices(), capacity, capacity, /*seed=*/7);
  if (!harness.ok()) {
    absl::PrintF("ltx_alltoall: %s\nFAIL\n", harness.status().ToString().c_str());
    return kExitFailed;
  }
  return RunSmokeCases(runtime, **harness, cases);
}

struct BenchContext {
  Runtime* runtime = nullptr;
  TensorSet<AllToAllHarness>* tensors = nullptr;  // Tensor 0 also serves NCCL.
  const NcclSide* nccl = nullptr;                 // Without a clique: no NCCL comparison.
  const AllToAllToolConfig* config = nullptr;
  const TimedRanks* ranks = nullptr;  // The harness's streams, with their events.
};

// The benchmark's case of `shape` in `direction` on `world` ranks: `dtype`, batch 1, the tokens
// split evenly, the heads as `head_counts` says (empty: evenly), moved on `wire`.
AllToAllCase BenchCase(DataType dtype, WireFormat wire, const BenchShape& shape,
                       const std::vector<int64_t>& head_counts, AllToAllDirection direction,
                       int world) {
  AllToAllCase c;
  c.dtype = dtype;
  c.wire = wire;
  c.heads = shape.heads;
  c.head_dim = shape.head_dim;
  c.token_counts = EvenCounts(shape.tokens, world);
  c.direction = direction;
  c.head_counts = head_counts;
  return c;
}

void PrintBenchHeader(const BenchContext& bench) {
  const AllToAllToolConfig& config = *bench.config;
  absl::PrintF(
      "# ltx_alltoall: %d rank(s), transport %s, batch 1, medians of %d windows of %d calls (us); "
      "ltx: style %s (%s); NCCL: grouped from one thread (%s)\n",
      bench.runtime->world_size(), TransportName(bench.runtime->transport()), config.timing.windows,
      PlanAsRun(config.style, config.timing).iterations, BenchStyleName(config.style),
      CallTimingName(config.style),
      CallTimingName(config.style));
  absl::PrintF("#\n# %-10s %6s %5s %5s %12s %12s %6s %9s |%10s %8s %8s %6s |%10s %8s | %s %6s%s\n",
               "direction", "tokens", "heads", "hdim", "size", "count", "type", "protocol",
               "ltx us", "algbw", "busbw", "#wrong", "nccl us", "perm us", NcclColumnTitles(),
               "#wrong", TensorCallsTitles(config.tensors));
  absl::PrintF(
      "# (size: output bytes per rank, nccl-tests' size; count: its elements; protocol auto: "
      "the Runtime's choice; ltx us -1: the protocol refused the shape; nccl us, perm us: plain "
      "NCCL's send/recv and permute alone; plain, window, ce: NCCL's modes, each the whole op "
      "with its permute; speedup: best / ltx; #wrong: NCCL modes with a wrong output)\n");
  if (bench.nccl->clique == nullptr) absl::PrintF("# (no NCCL: its columns are -1 or -)\n");
  absl::PrintF("%s", TensorCallsNote(config.tensors));
  if (config.wire != WireFormat::kNative) {
    absl::PrintF(
        "# (ltx's calls: wire %s, each head vector sent to a peer as e4m3 codes with a scale, "
        "decoded by the receiver; size and algbw count the native bytes; NCCL moves the native "
        "bytes)\n",
        WireFormatName(config.wire));
  }
  if (!config.head_counts.empty()) {
    absl::PrintF("# (heads per rank %s, for ltx and NCCL alike; size: the mean per rank)\n",
                 absl::StrJoin(config.head_counts, ","));
  }
}

void PrintBenchRow(const AllToAllBenchRow& row, DataType dtype) {
  absl::PrintF(
      "  %-10s %6d %5d %5d %12.0f %12.0f %6s %9s |%10.1f %8.1f %8.1f %6d |%10.1f %8.1f | %s "
      "%6d%s\n",
      DirectionName(row.direction), row.shape.tokens, row.shape.heads, row.shape.head_dim,
      row.size_bytes, row.count, DataTypeName(dtype).c_str(), ProtocolName(row.protocol).c_str(),
      row.ltx_us, row.ltx_algbw, row.ltx_busbw, row.wrong, row.nccl_transfer_us,
      row.nccl_permute_us, NcclCells(row.nccl, LtxUsAgainstNccl(TensorCallsOf(row))),
      row.nccl_wrong,
      TensorCallsCells(TensorCallsOf(row)));
}

// The time of bench.config->tensors single-tensor calls of `shape` with `call`, one after
// another (each tensor's own buffers, on the timed streams), in the configured style.
absl::StatusOr<double> TimeSeparateCalls(const BenchContext& bench, const AllToAllShape& shape,
                                         const CallOptions& call) {
  Runtime& runtime = *bench.runtime;
  std::vector<std::vector<RankBuffers>> buffers;
  std::vector<LtxCall> calls;
  for (int tensor = 0; tensor < bench.tensors->count(); ++tensor) {
    buffers.push_back(bench.tensors->TensorBuffers(tensor));
  }
  for (const std::vector<RankBuffers>& own : buffers) {
    LtxCall one;
    one.rank = [&](int rank) { return runtime.AllToAllRank(rank, shape, own[rank], call); };
    one.coordinated = [&] { return runtime.AllToAll(shape, own, call).status(); };
    calls.push_back(one);
  }
  LTX_ASSIGN_OR_RETURN(const Measured measured,
                       MeasureLtxCall(bench.config->style, runtime.transport(),
                                      bench.config->timing, *bench.ranks, InTurn(calls)));
  LTX_RETURN_IF_ERROR(runtime.Synchronize(absl::Seconds(30)));
  return measured.device_us;
}

// Runs the current case once on `row->protocol` with every tensor in one op and fresh inputs
// (every tensor verified), then times it in the configured style on fresh inputs and poisoned
// outputs (verified again after the timed calls), and with more than one tensor as many
// single-tensor calls; sets the row's ltx figures. A protocol that refuses the shape (a
// one-trip piece over the staging) leaves them -1.
absl::Status TimeLtx(const BenchContext& bench, AllToAllBenchRow* row) {
  Runtime& runtime = *bench.runtime;
  TensorSet<AllToAllHarness>& tensors = *bench.tensors;
  const std::vector<RankBuffers> buffers = tensors.AllBuffers();
  const AllToAllShape one_tensor = tensors.at(0).current_case().Shape();
  AllToAllShape shape = one_tensor;
  shape.tensors = tensors.count();
  CallOptions call;
  call.protocol = row->protocol;
  call.blocks = bench.config->blocks;
  LTX_RETURN_IF_ERROR(tensors.RefreshInputs());  // Fresh inputs, poisoned outputs.
  const absl::Status first = runtime.AllToAllAndWait(shape, buffers, absl::Seconds(30), call);
  if (absl::IsInvalidArgument(first) && runtime.status().ok()) return absl::OkStatus();
  LTX_RETURN_IF_ERROR(first);
  row->wrong = tensors.Verify().ok() ? 0 : 1;
  // Fresh inputs and poisoned outputs again: the check after the timed calls sees only what
  // they wrote, in the style they were made.
  LTX_RETURN_IF_ERROR(tensors.RefreshInputs());
  LtxCall ltx_call;
  ltx_call.rank = [&](int rank) { return runtime.AllToAllRank(rank, shape, buffers[rank], call); };
  ltx_call.coordinated = [&] { return runtime.AllToAll(shape, buffers, call).status(); };
  LTX_ASSIGN_OR_RETURN(const Measured measured,
                       MeasureLtxCall(bench.config->style, runtime.transport(),
                                      bench.config->timing, *bench.ranks, ltx_call));
  LTX_RETURN_IF_ERROR(runtime.Synchronize(absl::Seconds(30)));
  if (!tensors.Verify().ok()) row->wrong = 1;
  const int world = runtime.world_size();
  row->ltx_us = measured.device_us;
  row->tensors = tensors.count();
  row->ltx_algbw = row->size_bytes * row->tensors / row->ltx_us / 1e3;
  row->ltx_busbw = BusBandwidth(row->ltx_algbw, world);
  if (row->tensors > 1) {
    LTX_ASSIGN_OR_RETURN(row->calls_us, TimeSeparateCalls(bench, one_tensor, call));
  }
  return absl::OkStatus();
}

// Times one shape in one direction: ltx's call on each protocol, then NCCL's modes (and plain
// NCCL's transfer and permute alone); prints and appends one row per protocol to `rows`.
absl::Status BenchOne(const BenchContext& bench, const BenchShape& shape,
                      AllToAllDirection direction, std::vector<AllToAllBenchRow>* rows) {
  const AllToAllToolConfig& config = *bench.config;
  Runtime& runtime = *bench.runtime;
  AllToAllHarness& harness = bench.tensors->at(0);
  const int world = runtime.world_size();
  LTX_RETURN_IF_ERROR(
      bench.tensors->Prepare(BenchCase(config.dtype, config.wire, shape, config.head_counts, direction, world)));
  const int64_t total = shape.tokens * shape.heads * shape.head_dim * ElementSize(config.dtype);
  std::vector<AllToAllBenchRow> shape_rows;
  for (Protocol protocol : config.protocols) {
    AllToAllBenchRow row;
    row.direction = direction;
    row.shape = shape;
    row.size_bytes = static_cast<double>(total) / world;
    row.count = row.size_bytes / ElementSize(config.dtype);
    row.protocol = protocol;
    LTX_RETURN_IF_ERROR(TimeLtx(bench, &row));
    shape_rows.push_back(row);
  }
  if (config.wire != WireFormat::kNative) {
    // NCCL moves the native rows: its outputs are checked against the native reference.
    LTX_RETURN_IF_ERROR(harness.Prepare(BenchCase(config.dtype, WireFormat::kNative, shape,
                                                  config.head_counts, direction, world)));
  }
  // NCCL's calls are grouped from one thread (ncclGroupStart/End over every rank).
  const OneThreadTimer from_one_thread =
      [&](const std::function<absl::Status()>& run) -> absl::StatusOr<double> {
    LTX_ASSIGN_OR_RETURN(const Measured measured,
                         MeasureOneThreadCall(config.style, config.timing, *bench.ranks, run));
    return measured.device_us;
  };
  LTX_ASSIGN_OR_RETURN(const NcclAllToAllTimes nccl,
                       TimeNcclAllToAll(*bench.nccl, harness, runtime.devices(),
                                        shape_rows.front().size_bytes, from_one_thread));
  for (AllToAllBenchRow& row : shape_rows) {
    row.nccl_transfer_us = nccl.transfer_us;
    row.nccl_permute_us = nccl.permute_us;
    row.nccl = nccl.modes;
    row.nccl_wrong = nccl.wrong;
    PrintBenchRow(row, config.dtype);
    rows->push_back(row);
  }
  std::fflush(stdout);
  return absl::OkStatus();
}

// Runs the benchmark of `config`, a row per shape, direction and protocol (and the JSON file);
// DataLoss once every row ran when ltx's output was wrong on some row.
absl::Status Bench(Runtime& runtime, const AllToAllToolConfig& config) {
  const int world = runtime.world_size();
  const std::vector<BenchShape> shapes = BenchShapes(config, world);
  std::vector<AllToAllCase> cases;
  for (AllToAllDirection direction : config.directions) {
    for (const BenchShape& shape : shapes) {
      cases.push_back(BenchCase(config.dtype, config.wire, shape, config.head_counts, direction, world));
    }
  }
  const int64_t capacity = LargestBuffer(cases, world);
  LTX_ASSIGN_OR_RETURN(TensorSet<AllToAllHarness> tensors,
                       TensorSet<AllToAllHarness>::Create(runtime.devices(), config.tensors,
                                                          capacity, capacity, /*seed=*/1));
  LTX_ASSIGN_OR_RETURN(EventPairs events, EventPairs::Create(runtime.devices()));
  const TimedRanks ranks = TimedRanksOf(runtime.devices(), tensors.AllBuffers(), &events);
  NcclSide nccl = LoadNccl(config.nccl_path, runtime.devices());
  NcclModeRequest modes;
  modes.buffer_bytes.assign(3, static_cast<size_t>(capacity));  // Input, staging, output.
  modes.no_windows = kAllToAllNoWindows;
  OpenNcclModes(runtime.devices(), modes, &nccl);
  absl::PrintF("%s", NcclModesNote(nccl));
  const BenchContext bench{&runtime, &tensors, &nccl, &config, &ranks};
  PrintBenchHeader(bench);
  std::vector<AllToAllBenchRow> rows;
  for (AllToAllDirection direction : config.directions) {
    for (const BenchShape& shape : shapes) {
      LTX_RETURN_IF_ERROR(BenchOne(bench, shape, direction, &rows));
    }
  }
  int wrong = 0;
  for (const AllToAllBenchRow& row : rows) wrong += row.wrong;
  return FinishBenchmarkRun(config.json_path,
                            AllToAllJson(config, runtime.devices(), nccl.version, rows), wrong);
}

// Runs the breakdown of `config`; the exit code.
int Breakdown(Runtime& runtime, const AllToAllToolConfig& config) {
  AllToAllBreakdownConfig breakdown;
  breakdown.protocol = config.breakdown_protocol;
  breakdown.dtype = config.dtype;
  breakdown.heads = config.heads;
  breakdown.head_dim = config.head_dim;
  breakdown.per_rank_bytes = config.breakdown_bytes;
  breakdown.directions = config.directions;
  breakdown.blocks = config.breakdown_blocks;
  breakdown.timing = config.timing;
  const absl::StatusOr<int> wrong = RunAllToAllBreakdown(runtime, breakdown);
  if (!wrong.ok()) {
    absl::PrintF("ltx_alltoall: %s\nFAIL\n", wrong.status().ToString().c_str());
    return kExitFailed;
  }
  absl::PrintF("%s: %d configuration(s) with a wrong output\n", *wrong == 0 ? "PASS" : "FAIL",
               *wrong);
  return *wrong == 0 ? kExitOk : kExitFailed;
}

// The ranks' devices of `config` (every visible GPU when it names none) once they are known to
// be visible and to fit the run; else why not (nothing can run).
absl::StatusOr<std::vector<int>> CheckedDevices(const AllToAllToolConfig& config) {
  const int visible = VisibleGpuCount();
  std::vector<int> devices = config.devices;
  for (int d = 0; devices.empty() && d < visible; ++d) devices.push_back(d);
  absl::Status status = CheckDevicesVisible(config.devices, visible);
  if (status.ok()) status = CheckWorldSize(config, static_cast<int>(devices.size()));
  if (!status.ok()) return status;
  return devices;
}

int Main(int argc, char** argv) {
  AllToAllToolConfig config;
  const CommandLineOutcome parsed =
      ParseAllToAllCommandLine(std::vector<std::string>(argv, argv + argc), &config);
  if (parsed.exit_code >= 0) return FinishCommandLine(parsed);
  const absl::StatusOr<std::vector<int>> devices = CheckedDevices(config);
  if (!devices.ok()) {
    absl::PrintF("ltx_alltoall: %s\n", devices.status().message());
    return kExitNothingRan;
  }
  RuntimeOptions options;
  options.devices = *devices;
  options.max_blocks = config.max_blocks;
  options.transport = config.transport;
  absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
  if (!runtime.ok()) {
    absl::PrintF("ltx_alltoall: %s\nFAIL\n", runtime.status().ToString().c_str());
    return kExitFailed;
  }
  int exit_code = kExitOk;
  if (config.smoke) exit_code = Smoke(**runtime, config.head_counts);
  if (config.bench) {
    const absl::Status status = Bench(**runtime, config);
    if (!status.ok()) {
      absl::PrintF("ltx_alltoall: %s\nFAIL\n", status.ToString().c_str());
      exit_code = kExitFailed;
    }
  }
  if (config.breakdown && exit_code == kExitOk) exit_code = Breakdown(**runtime, config);
  return exit_code;
}

}  // namespace
}  // namespace ltx

int main(int argc, char** argv) { return ltx::Main(argc, argv); }
