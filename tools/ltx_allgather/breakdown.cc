// The phase breakdown of the one-trip or the direct AllGather: device phases from the timed
// kernel, host cost per step of a per-rank call.
#include "tools/ltx_allgather/breakdown.h"

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ltx/collectives/allgather_launch.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/runtime.h"
#include "ltx/runtime/resolved_call.h"
#include "ltx/status_macros.h"
#include "tools/bench/bench_table.h"
#include "tools/bench/bench_timing.h"
#include "tools/bench/breakdown_calls.h"
#include "tools/bench/breakdown_phases.h"
#include "tools/bench/empty_kernel.h"
#include "tools/bench/launch_floor.h"
#include "tools/bench/phase_records.h"
#include "tools/bench/timer_step_kernel.h"
#include "tools/bench/breakdown_table.h"
#include "tools/testing/allgather_harness.h"

namespace ltx {
namespace {

constexpr uint64_t kSeed = 7;
// Ops whose records each rank keeps (the latest ones).
constexpr int kSamples = 512;

// The Runtime, buffers, streams and record buffers, shared by every block count.
class Breakdown {
 public:
  static absl::StatusOr<std::unique_ptr<Breakdown>> Create(const BreakdownConfig& config);
  ~Breakdown();

  // Prints the %globaltimer step of every GPU.
  absl::Status PrintTimerSteps();
  // Measures and prints one block count (0 = automatic), with or without early start; returns
  // its row.
  absl::StatusOr<BreakdownRow> RunBlocks(int blocks, bool early);
  // Measures and prints the host cost per step of a per-rank call.
  absl::Status RunHost();
  // Measures and prints the host cost of a launch by parameter size, and with its completion
  // event in the launch.
  absl::Status RunLaunchCosts();

 private:
  explicit Breakdown(const BreakdownConfig& config)
      : config_(config), layout_(PhaseLayoutOf(config.protocol)) {}
  int world() const { return runtime_->world_size(); }
  // The automatic block count of the protocol's kernel for this size.
  absl::StatusOr<ResolvedCall> AutoCall() const;
  absl::StatusOr<Measured> MeasureCalls(const BreakdownCalls& calls);
  // Clears the records, runs the timed calls, prints their table.
  absl::Status TimedTable(BreakdownCalls calls, const Measured& untimed);
  absl::StatusOr<double> HostMicroseconds(std::function<absl::Status(int rank)> one_call);
  // Host time of an empty-kernel launch with `params`, `blocks` blocks.
  absl::StatusOr<double> LaunchMicroseconds(EmptyKernelParams params, int blocks);

  const BreakdownConfig config_;
  const PhaseLayout layout_;  // Of config_.protocol's timed kernel.
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<AllGatherHarness> harness_;
  std::vector<RankBuffers> buffers_;
  AllGatherCase case_;
  EventPairs events_;
  TimedRanks ranks_;
  int sms_ = 0;
  std::unique_ptr<PhaseRecords> records_;
  std::vector<cudaEvent_t> done_;  // Per rank, without timing.
};

absl::StatusOr<std::unique_ptr<Breakdown>> Breakdown::Create(const BreakdownConfig& config) {
  std::unique_ptr<Breakdown> run(new Breakdown(config));
  LTX_ASSIGN_OR_RETURN(run->runtime_, Runtime::Create(config.runtime));
  const std::vector<int> devices = run->runtime_->devices();
  const int64_t tokens = BreakdownTokensPerRank(config);
  const int64_t row_bytes = config.hidden * ElementSize(config.dtype);
  LTX_ASSIGN_OR_RETURN(run->harness_,
                       AllGatherHarness::Create(devices, tokens * row_bytes,
                                                tokens * row_bytes * devices.size(), kSeed));
  run->case_.dtype = config.dtype;
  run->case_.hidden = config.hidden;
  run->case_.token_counts.assign(devices.size(), tokens);
  run->case_.in_place = config.in_place;
  LTX_RETURN_IF_ERROR(run->harness_->Prepare(run->case_));
  run->buffers_ = run->harness_->AllBuffers();
  LTX_ASSIGN_OR_RETURN(run->events_, EventPairs::Create(devices));
  run->ranks_.devices = devices;
  for (const RankBuffers& b : run->buffers_) run->ranks_.streams.push_back(b.stream);
  run->ranks_.events = &run->events_;
  LTX_ASSIGN_OR_RETURN(run->sms_, FloorBlocks(devices, 0, config.runtime.max_blocks));
  LTX_ASSIGN_OR_RETURN(run->records_, PhaseRecords::Create(devices, kSamples, run->sms_));
  for (int device : devices) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device), "cudaSetDevice"));
    cudaEvent_t done = nullptr;
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreate"));
    run->done_.push_back(done);
  }
  return run;
}

Breakdown::~Breakdown() {
  for (size_t rank = 0; rank < done_.size(); ++rank) {
    cudaSetDevice(ranks_.devices[rank]);
    cudaEventDestroy(done_[rank]);
  }
}

absl::Status Breakdown::PrintTimerSteps() {
  std::vector<std::string> steps;
  for (int device : ranks_.devices) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device), "cudaSetDevice"));
    uint64_t* step = nullptr;
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaMalloc(reinterpret_cast<void**>(&step), sizeof(uint64_t)), "cudaMalloc"));
    uint64_t value = 0;
    absl::Status status = CudaStatus(LaunchTimerStep(step, nullptr), "timer step launch");
    if (status.ok()) {
      status = CudaStatus(cudaMemcpy(&value, step, sizeof(value), cudaMemcpyDeviceToHost),
                          "cudaMemcpy(timer step)");
    }
    cudaFree(step);
    LTX_RETURN_IF_ERROR(status);
    steps.push_back(absl::StrFormat("GPU %d: %d ns", device, value));
  }
  absl::PrintF("# %%globaltimer step (finest tick seen): %s\n", absl::StrJoin(steps, ", "));
  return absl::OkStatus();
}

absl::StatusOr<ResolvedCall> Breakdown::AutoCall() const {
  CallContext context;
  context.world_size = world();
  context.max_shard_bytes = harness_->layout().InputBytes(0);
  context.shard_bytes = context.max_shard_bytes;
  context.max_blocks = sms_;
  CallOptions call;
  call.protocol = config_.protocol;
  return ResolveCall(config_.runtime, context, call);
}

absl::StatusOr<Measured> Breakdown::MeasureCalls(const BreakdownCalls& c) {
  std::vector<CallOptions> calls(world());
  for (int rank = 0; rank < world(); ++rank) {
    calls[rank] = BreakdownCallOptions(config_.protocol, c, *records_, rank);
  }
  const AllGatherShape shape = case_.Shape();
  return MeasureBreakdownCalls(config_.timing, ranks_, world(), c, [&](int rank) {
    return runtime_->AllGatherRank(rank, shape, buffers_[rank], calls[rank]);
  });
}

absl::Status Breakdown::TimedTable(BreakdownCalls calls, const Measured& untimed) {
  LTX_RETURN_IF_ERROR(records_->Clear());
  calls.timed = true;
  LTX_ASSIGN_OR_RETURN(const Measured timed, MeasureCalls(calls));
  LTX_RETURN_IF_ERROR(harness_->SynchronizeStreams());
  const std::string title = PhaseTableTitle(
      config_.protocol, absl::StrCat(FormatBytes(harness_->layout().InputBytes(0)), " per rank"),
      calls, untimed, timed);
  LTX_ASSIGN_OR_RETURN(const std::string table, records_->Table(title, layout_));
  absl::PrintF("%s", table);
  std::fflush(stdout);
  return absl::OkStatus();
}

absl::StatusOr<BreakdownRow> Breakdown::RunBlocks(int blocks, bool early) {
  std::fprintf(stderr, "ltx_allgather: breakdown, blocks %d%s ...\n", blocks,
               early ? ", early start" : "");
  BreakdownRow row;
  row.blocks = blocks;
  row.early_start = early;
  for (const bool graph : {true, false}) {
    const BreakdownCalls calls = {blocks, early, /*timed=*/false, graph};
    LTX_ASSIGN_OR_RETURN(const Measured untimed, MeasureCalls(calls));
    LTX_RETURN_IF_ERROR(TimedTable(calls, untimed));
  }
  if (config_.check) {
    // The last calls above (timed, eager), then one call on fresh inputs.
    if (!harness_->Verify().ok()) row.wrong = 1;
    LTX_RETURN_IF_ERROR(harness_->RefreshInputs());
    CallOptions call;
    call.protocol = config_.protocol;
    call.blocks = blocks;
    call.early_start = early;
    LTX_RETURN_IF_ERROR(
        runtime_->AllGatherAndWait(case_.Shape(), buffers_, config_.host_wait, call));
    if (!harness_->Verify().ok()) row.wrong = 1;
  }
  return row;
}

absl::StatusOr<double> Breakdown::HostMicroseconds(std::function<absl::Status(int rank)> one_call) {
  LTX_ASSIGN_OR_RETURN(const Measured measured, Measure(config_.timing, /*per_rank_threads=*/true,
                                                        ranks_, Repeated(std::move(one_call)), 1));
  return measured.host_us;
}

absl::StatusOr<double> Breakdown::LaunchMicroseconds(EmptyKernelParams params, int blocks) {
  LTX_ASSIGN_OR_RETURN(const double us, HostMicroseconds([&](int rank) {
                         return CudaStatus(
                             LaunchEmptyKernelWith(params, blocks, ranks_.streams[rank]),
                             "empty kernel launch");
                       }));
  LTX_RETURN_IF_ERROR(harness_->SynchronizeStreams());
  return us;
}

absl::Status Breakdown::RunHost() {
  std::fprintf(stderr, "ltx_allgather: host steps ...\n");
  LTX_ASSIGN_OR_RETURN(const ResolvedCall resolved, AutoCall());
  const AllGatherShape shape = case_.Shape();
  const AllGatherLayout& layout = harness_->layout();
  std::vector<std::pair<std::string, std::function<absl::Status(int)>>> steps = {
      {"cudaStreamIsCapturing",
       [&](int rank) {
         cudaStreamCaptureStatus capture;
         return CudaStatus(cudaStreamIsCapturing(ranks_.streams[rank], &capture), "capturing");
       }},
      {"cudaGetDevice",
       [&](int) {
         int device = 0;
         return CudaStatus(cudaGetDevice(&device), "cudaGetDevice");
       }},
      {"ComputeAllGatherLayout (shape checks and layout)",
       [&](int) { return ComputeAllGatherLayout(shape, world()).status(); }},
      {"ResolveCall", [&](int) { return AutoCall().status(); }},
      {"AllGatherParamsOf (fill the parameters)",
       [&](int rank) {
         PeerStoreView view;
         view.rank = rank;
         view.world_size = world();
         const AllGatherKernelParams params =
             AllGatherParamsOf(view, layout, buffers_[rank], resolved);
         return params.world_size == world() ? absl::OkStatus() : absl::InternalError("params");
       }},
      {"cudaEventRecord",
       [&](int rank) {
         return CudaStatus(cudaEventRecord(done_[rank], ranks_.streams[rank]), "cudaEventRecord");
       }},
  };
  std::vector<HostStep> parts;
  for (auto& step : steps) {
    LTX_ASSIGN_OR_RETURN(const double us, HostMicroseconds(step.second));
    parts.push_back(HostStep{step.first, us});
  }
  LTX_ASSIGN_OR_RETURN(const double launch,
                       LaunchMicroseconds(EmptyKernelParams::kAllGather, resolved.blocks));
  parts.push_back(HostStep{"launch (an empty kernel with the same parameters)", launch});
  LTX_ASSIGN_OR_RETURN(const Measured whole, MeasureCalls(BreakdownCalls{}));
  absl::PrintF("# host cost of an eager per-rank call, %d threads at once, %s, %d blocks\n",
               world(), ProtocolName(config_.protocol), resolved.blocks);
  absl::PrintF("%s",
               FormatHostTable(parts, HostStep{"AllGatherRank (the whole call)", whole.host_us}));
  std::fflush(stdout);
  return absl::OkStatus();
}

absl::Status Breakdown::RunLaunchCosts() {
  std::fprintf(stderr, "ltx_allgather: launch costs ...\n");
  LTX_ASSIGN_OR_RETURN(const ResolvedCall resolved, AutoCall());
  absl::PrintF(
      "# host cost of one launch, %d threads at once (peer tables in device memory would "
      "leave about %d bytes of parameters)\n",
      world(), kSmallParamBytes);
  for (const EmptyKernelParams params :
       {EmptyKernelParams::kNone, EmptyKernelParams::kSmall, EmptyKernelParams::kAllGather}) {
    LTX_ASSIGN_OR_RETURN(const double us, LaunchMicroseconds(params, resolved.blocks));
    absl::PrintF("%-64s %9.3f\n",
                 absl::StrFormat("empty kernel %d x %d, %d-byte params", resolved.blocks,
                                 kEmptyKernelThreads, EmptyKernelParamBytes(params)),
                 us);
  }
  // Not every driver takes a programmatic event: an error is printed, not fatal.
  const absl::StatusOr<double> recording = HostMicroseconds([&](int rank) {
    return CudaStatus(
        LaunchEmptyKernelRecording(resolved.blocks, done_[rank], ranks_.streams[rank]),
        "cudaLaunchKernelEx with a programmatic event");
  });
  const absl::Status synced = harness_->SynchronizeStreams();
  cudaGetLastError();
  absl::PrintF(
      "%-64s %s\n", "the last, its completion event in the launch (cudaLaunchKernelEx)",
      recording.ok() ? absl::StrFormat("%9.3f", *recording) : recording.status().ToString());
  std::fflush(stdout);
  return synced;
}

}  // namespace

absl::StatusOr<std::vector<BreakdownRow>> RunBreakdown(const BreakdownConfig& config) {
  LTX_RETURN_IF_ERROR(ValidateBreakdownConfig(config));
  LTX_ASSIGN_OR_RETURN(std::unique_ptr<Breakdown> run, Breakdown::Create(config));
  LTX_RETURN_IF_ERROR(run->PrintTimerSteps());
  std::vector<BreakdownRow> rows;
  for (int blocks : config.blocks) {
    LTX_ASSIGN_OR_RETURN(BreakdownRow row, run->RunBlocks(blocks, /*early=*/false));
    rows.push_back(row);
  }
  // The host side and early start matter for the small messages of the one-trip path. Early
  // start last: whatever it does, everything else is printed by then.
  if (config.protocol != Protocol::kOneTrip) return rows;
  LTX_RETURN_IF_ERROR(run->RunHost());
  LTX_RETURN_IF_ERROR(run->RunLaunchCosts());
  for (int blocks : config.blocks) {
    LTX_ASSIGN_OR_RETURN(BreakdownRow row, run->RunBlocks(blocks, /*early=*/true));
    rows.push_back(row);
  }
  return rows;
}

}  // namespace ltx
