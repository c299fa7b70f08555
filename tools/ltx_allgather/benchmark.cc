// nccl-tests-style AllGather sweep of ltx against its launch floor, with NCCL side by side three
// ways (plain buffers, symmetric windows, copy engines) and the best of them; with --tensors N,
// one op of N tensors beside N single-tensor calls.
#include "tools/ltx_allgather/benchmark.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/runtime.h"
#include "ltx/runtime/resolved_call.h"
#include "ltx/status_macros.h"
#include "tools/bench/bench_table.h"
#include "tools/bench/bench_timing.h"
#include "tools/bench/launch_floor.h"
#include "tools/bench/nccl_best.h"
#include "tools/bench/nccl_side.h"
#include "tools/bench/style_timing.h"
#include "tools/bench/tensor_calls.h"
#include "tools/bench/tensor_set.h"
#include "tools/ltx_allgather/bench_json.h"
#include "tools/testing/allgather_harness.h"

namespace ltx {
namespace {

// Seed of the benchmark's random data.
constexpr uint64_t kSeed = 42;

// One sweep: the Runtime, buffers, events, NCCL and the launch floor, shared by every row.
class Sweep {
 public:
  static absl::StatusOr<std::unique_ptr<Sweep>> Create(const BenchConfig& config);

  // Prints the lines above the table: settings, timing, floor, NCCL, column titles.
  void PrintHeader() const;
  // Measures (and checks, if asked) one total output size.
  absl::StatusOr<BenchRow> RunRow(int64_t size_bytes);
  const BenchRunInfo& info() const { return info_; }

 private:
  explicit Sweep(const BenchConfig& config) : config_(config) {}
  int world() const { return runtime_->world_size(); }
  absl::StatusOr<Measured> MeasureLtx(const AllGatherShape& shape,
                                      const std::vector<RankBuffers>& buffers);
  // The time of one single-tensor call of `shape` per tensor, one after another (each tensor's
  // own buffers, on the timed streams).
  absl::StatusOr<double> MeasureSeparateCalls(const AllGatherShape& shape);
  absl::Status MeasureNccl(const AllGatherCase& ltx_case, int64_t total_tokens, BenchRow* row);
  // Times NCCL's `mode` on the current (even) case, with fresh inputs, and checks its output;
  // the device time per call.
  absl::StatusOr<double> MeasureNcclMode(NcclMode mode, int64_t size_bytes);

  const BenchConfig config_;
  std::unique_ptr<Runtime> runtime_;
  // Every tensor of the timed calls; tensor 0 also serves NCCL.
  TensorSet<AllGatherHarness> tensors_;
  EventPairs events_;
  TimedRanks ranks_;
  NcclSide nccl_;
  BenchRunInfo info_;
  int64_t row_bytes_ = 0;
};

absl::StatusOr<std::unique_ptr<Sweep>> Sweep::Create(const BenchConfig& config) {
  std::unique_ptr<Sweep> sweep(new Sweep(config));
  LTX_ASSIGN_OR_RETURN(sweep->runtime_, Runtime::Create(config.runtime));
  const std::vector<int> devices = sweep->runtime_->devices();
  sweep->row_bytes_ = config.hidden * ElementSize(config.dtype);
  const int64_t max_tokens =
      std::max<int64_t>(devices.size(), config.max_bytes / sweep->row_bytes_);
  const int64_t capacity = max_tokens * sweep->row_bytes_;
  LTX_ASSIGN_OR_RETURN(sweep->tensors_, TensorSet<AllGatherHarness>::Create(
                                            devices, config.tensors, capacity, capacity, kSeed));
  LTX_ASSIGN_OR_RETURN(sweep->events_, EventPairs::Create(devices));
  sweep->ranks_.devices = devices;
  for (const RankBuffers& b : sweep->tensors_.AllBuffers()) {
    sweep->ranks_.streams.push_back(b.stream);
  }
  sweep->ranks_.events = &sweep->events_;
  sweep->nccl_ = LoadNccl(config.nccl_path, devices);
  // NCCL runs an even split: no rank's input exceeds max_tokens / world (rounded up) rows.
  NcclModeRequest modes;
  modes.buffer_bytes = {
      static_cast<size_t>((max_tokens / static_cast<int64_t>(devices.size()) + 1) *
                          sweep->row_bytes_),
      static_cast<size_t>(capacity)};
  OpenNcclModes(devices, modes, &sweep->nccl_);
  LTX_ASSIGN_OR_RETURN(const int blocks,
                       FloorBlocks(devices, config.call.blocks, config.runtime.max_blocks));
  std::fprintf(stderr, "ltx_allgather: launch floor ...\n");
  LTX_ASSIGN_OR_RETURN(sweep->info_.floor,
                       MeasureLaunchFloor(config.timing, sweep->ranks_, blocks));
  sweep->info_.devices = devices;
  sweep->info_.nccl_version = sweep->nccl_.version;
  return sweep;
}

void Sweep::PrintHeader() const {
  const RuntimeOptions& options = config_.runtime;
  absl::PrintF(
      "# ltx all_gather benchmark: %d GPUs [%s], transport %s, dtype %s, hidden %d, split %s, "
      "wire %s, style %s, protocol %s (one-trip up to %d bytes per rank, eager calls by copy "
      "engines from %s)\n",
      world(), absl::StrJoin(info_.devices, ","), TransportName(runtime_->transport()),
      DataTypeName(config_.dtype), config_.hidden, SplitPatternName(config_.split),
      WireFormatName(config_.wire),
      BenchStyleName(config_.style), ProtocolName(config_.call.protocol),
      OneTripLimit(options.one_trip_max_bytes, world()),
      options.copy_engine_min_bytes > 0
          ? absl::StrCat(options.copy_engine_min_bytes, " bytes per rank")
          : std::string("no size"));
  const TimingPlan run = PlanAsRun(config_.style, config_.timing);
  absl::PrintF(
      "# time = median over %d windows of %d calls (after %d warm-up calls) of device "
      "time per call, slowest GPU; host = host time per call: %s\n",
      run.windows, run.iterations, run.warmup, HostTimeMeaning(config_.style));
  absl::PrintF("%s", FloorLine(info_.floor));
  if (nccl_.clique != nullptr) {
    absl::PrintF(
        "# NCCL: grouped ncclAllGather from one thread, %s%s; plain on ltx's buffers and "
        "streams%s, window and ce on their own buffers (out of place); every output checked\n",
        CallTimingName(config_.style),
        config_.split == SplitPattern::kEven ? "" : " (even shards of the same tokens)",
        config_.in_place ? " (in place)" : "");
    absl::PrintF("%s", NcclModesNote(nccl_));
  }
  absl::PrintF("%s", ColumnHeader(config_.tensors));
  std::fflush(stdout);
}

absl::StatusOr<Measured> Sweep::MeasureLtx(const AllGatherShape& shape,
                                           const std::vector<RankBuffers>& buffers) {
  const CallOptions& call = config_.call;
  LtxCall ltx_call;
  ltx_call.rank = [&](int rank) {
    return runtime_->AllGatherRank(rank, shape, buffers[rank], call);
  };
  ltx_call.coordinated = [&] { return runtime_->AllGather(shape, buffers, call).status(); };
  return MeasureLtxCall(config_.style, runtime_->transport(), config_.timing, ranks_, ltx_call);
}

absl::StatusOr<double> Sweep::MeasureSeparateCalls(const AllGatherShape& shape) {
  const CallOptions& call = config_.call;
  std::vector<std::vector<RankBuffers>> buffers;
  for (int tensor = 0; tensor < tensors_.count(); ++tensor) {
    buffers.push_back(tensors_.TensorBuffers(tensor));
  }
  std::vector<LtxCall> calls;
  for (const std::vector<RankBuffers>& own : buffers) {
    LtxCall one;
    one.rank = [&](int rank) { return runtime_->AllGatherRank(rank, shape, own[rank], call); };
    one.coordinated = [&] { return runtime_->AllGather(shape, own, call).status(); };
    calls.push_back(one);
  }
  LTX_ASSIGN_OR_RETURN(
      const Measured measured,
      MeasureLtxCall(config_.style, runtime_->transport(), config_.timing, ranks_, InTurn(calls)));
  LTX_RETURN_IF_ERROR(runtime_->Synchronize(config_.host_wait));
  return measured.device_us;
}

absl::StatusOr<double> Sweep::MeasureNcclMode(NcclMode mode, int64_t size_bytes) {
  AllGatherHarness& harness = tensors_.at(0);
  const AllGatherLayout& layout = harness.layout();
  const std::vector<RankBuffers> buffers = harness.AllBuffers();
  // Fresh inputs and poisoned outputs: an output that a mode leaves alone shows up as wrong.
  LTX_RETURN_IF_ERROR(harness.RefreshInputs());
  const tools::NcclClique& clique =
      mode == NcclMode::kCopyEngine ? *nccl_.ce_clique : *nccl_.clique;
  const tools::NcclWindows* windows = mode == NcclMode::kPlain     ? nullptr
                                      : mode == NcclMode::kWindows ? nccl_.windows.get()
                                                                   : nccl_.ce_windows.get();
  std::vector<const void*> inputs;
  std::vector<void*> outputs;
  for (int r = 0; r < world(); ++r) {
    if (windows == nullptr) {
      inputs.push_back(buffers[r].input);
      outputs.push_back(buffers[r].output);
      continue;
    }
    inputs.push_back(windows->buffer(r, 0));
    outputs.push_back(windows->buffer(r, 1));
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(info_.devices[r]), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaMemcpyAsync(windows->buffer(r, 0), buffers[r].input, layout.InputBytes(r),
                                   cudaMemcpyDeviceToDevice, buffers[r].stream),
                   "copying the input into NCCL's window"));
  }
  const tools::NcclType type = NcclTypeOf(config_.dtype);
  const size_t count = layout.InputBytes(0) / tools::NcclTypeSize(type);
  auto nccl_call = [&]() -> absl::Status {
    return clique.AllGather(inputs, outputs, count, type, ranks_.streams);
  };
  LTX_ASSIGN_OR_RETURN(const Measured measured,
                       MeasureOneThreadCall(config_.style, config_.timing, ranks_, nccl_call));
  for (int r = 0; windows != nullptr && r < world(); ++r) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(info_.devices[r]), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaMemcpyAsync(buffers[r].output, outputs[r], layout.output_bytes,
                                   cudaMemcpyDeviceToDevice, buffers[r].stream),
                   "copying NCCL's window out"));
  }
  LTX_RETURN_IF_ERROR(harness.SynchronizeStreams());
  if (config_.check && !harness.Verify().ok()) {
    absl::PrintF("# NCCL %s: output differs from the expected bytes at size %s\n",
                 NcclModeName(mode), FormatBytes(size_bytes));
  }
  return measured.device_us;
}

absl::Status Sweep::MeasureNccl(const AllGatherCase& ltx_case, int64_t total_tokens,
                                BenchRow* row) {
  AllGatherCase even = ltx_case;
  even.wire = WireFormat::kNative;  // NCCL moves the native rows, checked as such.
  // NCCL's AllGather takes even shards of at least a token: the most tokens of the total that
  // split evenly, said where that is fewer than ltx moves.
  const int64_t nccl_tokens = total_tokens - total_tokens % world();
  even.token_counts = SplitTokens(nccl_tokens, world(), SplitPattern::kEven);
  if (nccl_tokens == 0) {
    for (NcclMode mode : kNcclModes) At(row->nccl, mode).why_not = "fewer tokens than ranks";
    absl::PrintF("# NCCL at size %s: n/a: %d token(s) for %d ranks\n",
                 FormatBytes(row->size_bytes), total_tokens, world());
    return absl::OkStatus();
  }
  if (nccl_tokens != total_tokens) {
    absl::PrintF("# NCCL at size %s: %d of the %d tokens (even shards), %s of output per rank\n",
                 FormatBytes(row->size_bytes), nccl_tokens, total_tokens,
                 FormatBytes(row->size_bytes / total_tokens * nccl_tokens));
  }
  AllGatherHarness& harness = tensors_.at(0);
  LTX_RETURN_IF_ERROR(harness.Prepare(even));
  for (NcclMode mode : kNcclModes) {
    NcclTime& time = At(row->nccl, mode);
    if (!nccl_.Runs(mode)) {
      time.why_not = nccl_.why_not[static_cast<int>(mode)];
      continue;
    }
    const absl::StatusOr<double> us = MeasureNcclMode(mode, row->size_bytes);
    if (!us.ok()) {
      // This row's column says why; the sweep goes on.
      time.why_not = std::string(us.status().message());
      absl::PrintF("# NCCL %s at size %s: n/a: %s\n", NcclModeName(mode),
                   FormatBytes(row->size_bytes), time.why_not);
      continue;
    }
    time.us = *us;
    time.busbw = BusBandwidth(harness.layout().output_bytes / (time.us * 1e3), world());
  }
  return absl::OkStatus();
}

absl::StatusOr<BenchRow> Sweep::RunRow(int64_t size_bytes) {
  const int64_t total_tokens = std::max<int64_t>(1, size_bytes / row_bytes_);
  AllGatherCase c;
  c.dtype = config_.dtype;
  c.hidden = config_.hidden;
  c.token_counts = SplitTokens(total_tokens, world(), config_.split);
  c.in_place = config_.in_place;
  c.wire = config_.wire;
  LTX_RETURN_IF_ERROR(tensors_.Prepare(c));
  const AllGatherLayout& layout = tensors_.at(0).layout();
  const std::vector<RankBuffers> buffers = tensors_.AllBuffers();
  const AllGatherShape one_tensor = c.Shape();
  AllGatherShape shape = one_tensor;
  shape.tensors = tensors_.count();
  BenchRow row;
  row.size_bytes = layout.output_bytes;
  for (int rank = 0; rank < world(); ++rank) {
    row.per_rank_bytes = std::max(row.per_rank_bytes, layout.InputBytes(rank));
  }
  row.count = layout.output_bytes / ElementSize(config_.dtype);
  std::fprintf(stderr, "ltx_allgather: %s ...\n", FormatBytes(row.size_bytes).c_str());
  if (config_.check) {
    LTX_RETURN_IF_ERROR(
        runtime_->AllGatherAndWait(shape, buffers, config_.host_wait, config_.call));
    if (!tensors_.Verify().ok()) row.wrong = 1;
    // Fresh inputs and poisoned outputs again: the check after the timed calls sees only what
    // they wrote, in the style they were made.
    LTX_RETURN_IF_ERROR(tensors_.RefreshInputs());
  }
  LTX_ASSIGN_OR_RETURN(const Measured ltx, MeasureLtx(shape, buffers));
  LTX_RETURN_IF_ERROR(runtime_->Synchronize(config_.host_wait));
  if (config_.check && !tensors_.Verify().ok()) row.wrong = 1;
  row.ltx_us = ltx.device_us;
  row.host_us = ltx.host_us;
  row.tensors = tensors_.count();
  row.ltx_algbw = row.size_bytes * row.tensors / (row.ltx_us * 1e3);
  row.ltx_busbw = BusBandwidth(row.ltx_algbw, world());
  row.vs_floor = row.ltx_us / info_.floor.For(config_.style);
  if (row.tensors > 1) {
    LTX_ASSIGN_OR_RETURN(row.calls_us, MeasureSeparateCalls(one_tensor));
  }
  if (nccl_.clique != nullptr) LTX_RETURN_IF_ERROR(MeasureNccl(c, total_tokens, &row));
  return row;
}

}  // namespace

absl::StatusOr<std::vector<BenchRow>> RunBenchmark(const BenchConfig& config) {
  LTX_RETURN_IF_ERROR(ValidateBenchConfig(config));
  LTX_ASSIGN_OR_RETURN(std::unique_ptr<Sweep> sweep, Sweep::Create(config));
  sweep->PrintHeader();
  std::vector<BenchRow> rows;
  for (int64_t size : SweepSizes(config)) {
    LTX_ASSIGN_OR_RETURN(BenchRow row, sweep->RunRow(size));
    absl::PrintF("%s", FormatRow(row, config.dtype));
    std::fflush(stdout);
    rows.push_back(row);
  }
  if (!config.json_path.empty()) LTX_RETURN_IF_ERROR(WriteJson(config, sweep->info(), rows));
  return rows;
}

}  // namespace ltx
