// CUDA-event windows, graph capture and medians for the benchmark.
#include "tools/bench/bench_timing.h"

#include <algorithm>
#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/status_macros.h"
#include "tools/testing/rank_threads.h"

namespace ltx {
namespace {

struct WindowTimes {
  double device_us_per_unit = 0;
  double host_us_per_unit = 0;
};

absl::Status RecordOnEveryRank(const TimedRanks& ranks, bool start) {
  for (size_t rank = 0; rank < ranks.devices.size(); ++rank) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(ranks.devices[rank]), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(start ? ranks.events->RecordStart(rank, ranks.streams[rank])
                              : ranks.events->RecordStop(rank, ranks.streams[rank]));
  }
  return absl::OkStatus();
}

// Each rank's loop on its own host thread, between its events.
absl::StatusOr<WindowTimes> TimeWindowPerRankThreads(const TimedRanks& ranks, const RankLoop& loop,
                                                     int units) {
  const int world = static_cast<int>(ranks.devices.size());
  std::vector<double> host_us(world, 0);
  LTX_RETURN_IF_ERROR(RunOnRankThreads(world, [&](int rank) -> absl::Status {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(ranks.devices[rank]), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(ranks.events->RecordStart(rank, ranks.streams[rank]));
    const absl::Time begin = absl::Now();
    LTX_RETURN_IF_ERROR(loop(rank, units));
    host_us[rank] = absl::ToDoubleMicroseconds(absl::Now() - begin) / units;
    return ranks.events->RecordStop(rank, ranks.streams[rank]);
  }));
  LTX_ASSIGN_OR_RETURN(const double slowest, ranks.events->SlowestMicroseconds());
  return WindowTimes{slowest / units, Median(host_us)};
}

// The loop for every rank at once (loop(-1, units)) from the calling thread.
absl::StatusOr<WindowTimes> TimeWindowOneThread(const TimedRanks& ranks, const RankLoop& loop,
                                                int units) {
  LTX_RETURN_IF_ERROR(RecordOnEveryRank(ranks, /*start=*/true));
  const absl::Time begin = absl::Now();
  LTX_RETURN_IF_ERROR(loop(-1, units));
  const double host_us = absl::ToDoubleMicroseconds(absl::Now() - begin) / units;
  LTX_RETURN_IF_ERROR(RecordOnEveryRank(ranks, /*start=*/false));
  LTX_ASSIGN_OR_RETURN(const double slowest, ranks.events->SlowestMicroseconds());
  return WindowTimes{slowest / units, host_us};
}

}  // namespace

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

RankLoop Repeated(std::function<absl::Status(int rank)> one_call) {
  return [one_call = std::move(one_call)](int rank, int calls) -> absl::Status {
    for (int i = 0; i < calls; ++i) LTX_RETURN_IF_ERROR(one_call(rank));
    return absl::OkStatus();
  };
}

TimedRanks TimedRanksOf(const std::vector<int>& devices, const std::vector<RankBuffers>& buffers,
                        EventPairs* events) {
  TimedRanks ranks;
  ranks.devices = devices;
  for (const RankBuffers& b : buffers) ranks.streams.push_back(b.stream);
  ranks.events = events;
  return ranks;
}

absl::StatusOr<EventPairs> EventPairs::Create(const std::vector<int>& devices) {
  EventPairs pairs;
  for (int device : devices) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device), "cudaSetDevice"));
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    LTX_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&start), "cudaEventCreate"));
    pairs.start_.push_back(start);
    LTX_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&stop), "cudaEventCreate"));
    pairs.stop_.push_back(stop);
  }
  return pairs;
}

EventPairs::EventPairs(EventPairs&& other) noexcept
    : start_(std::move(other.start_)), stop_(std::move(other.stop_)) {
  other.start_.clear();
  other.stop_.clear();
}

EventPairs& EventPairs::operator=(EventPairs&& other) noexcept {
  if (this != &other) {
    Destroy();
    start_ = std::move(other.start_);
    stop_ = std::move(other.stop_);
    other.start_.clear();
    other.stop_.clear();
  }
  return *this;
}

EventPairs::~EventPairs() { Destroy(); }

void EventPairs::Destroy() {
  for (cudaEvent_t e : start_) cudaEventDestroy(e);
  for (cudaEvent_t e : stop_) cudaEventDestroy(e);
  start_.clear();
  stop_.clear();
}

absl::Status EventPairs::RecordStart(int rank, cudaStream_t stream) {
  return CudaStatus(cudaEventRecord(start_[rank], stream), "cudaEventRecord");
}

absl::Status EventPairs::RecordStop(int rank, cudaStream_t stream) {
  return CudaStatus(cudaEventRecord(stop_[rank], stream), "cudaEventRecord");
}

absl::Status EventPairs::WaitForStart(int rank, cudaStream_t stream) {
  return CudaStatus(cudaStreamWaitEvent(stream, start_[rank], 0), "cudaStreamWaitEvent");
}

absl::Status EventPairs::WaitForStop(int rank, cudaStream_t stream) {
  return CudaStatus(cudaStreamWaitEvent(stream, stop_[rank], 0), "cudaStreamWaitEvent");
}

absl::StatusOr<double> EventPairs::SlowestMicroseconds() {
  double slowest = 0;
  for (size_t rank = 0; rank < stop_.size(); ++rank) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaEventSynchronize(stop_[rank]), "cudaEventSynchronize"));
    float ms = 0;
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaEventElapsedTime(&ms, start_[rank], stop_[rank]), "cudaEventElapsedTime"));
    slowest = std::max(slowest, 1000.0 * ms);
  }
  return slowest;
}

absl::StatusOr<Measured> Measure(const TimingPlan& plan, bool per_rank_threads,
                                 const TimedRanks& ranks, const RankLoop& loop,
                                 int calls_per_unit) {
  auto window = [&](int units) {
    return per_rank_threads ? TimeWindowPerRankThreads(ranks, loop, units)
                            : TimeWindowOneThread(ranks, loop, units);
  };
  const TimingPlan as_run = InWholeUnits(plan, calls_per_unit);
  const int warm_units = as_run.warmup / calls_per_unit;
  const int timed_units = as_run.iterations / calls_per_unit;
  if (warm_units > 0) LTX_RETURN_IF_ERROR(window(warm_units).status());
  std::vector<double> device_us;
  std::vector<double> host_us;
  for (int w = 0; w < plan.windows; ++w) {
    LTX_ASSIGN_OR_RETURN(const WindowTimes times, window(timed_units));
    device_us.push_back(times.device_us_per_unit / calls_per_unit);
    host_us.push_back(times.host_us_per_unit / calls_per_unit);
  }
  return Measured{Median(device_us), Median(host_us)};
}

GraphSet::~GraphSet() {
  for (cudaGraphExec_t exec : execs_) {
    if (exec != nullptr) cudaGraphExecDestroy(exec);
  }
}

absl::Status GraphSet::BeginCapture(const TimedRanks& ranks, int rank) {
  LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(ranks.devices[rank]), "cudaSetDevice"));
  return CudaStatus(cudaStreamBeginCapture(ranks.streams[rank], cudaStreamCaptureModeRelaxed),
                    "cudaStreamBeginCapture");
}

absl::Status GraphSet::EndCapture(const TimedRanks& ranks, int rank, absl::Status captured) {
  cudaSetDevice(ranks.devices[rank]);
  cudaGraph_t graph = nullptr;
  const absl::Status ended =
      CudaStatus(cudaStreamEndCapture(ranks.streams[rank], &graph), "cudaStreamEndCapture");
  if (captured.ok()) captured = ended;
  if (graph == nullptr) return captured;
  const absl::Status made =
      CudaStatus(cudaGraphInstantiate(&execs_[rank], graph, 0), "cudaGraphInstantiate");
  if (captured.ok()) captured = made;
  cudaGraphDestroy(graph);
  return captured;
}

absl::Status GraphSet::Capture(const TimedRanks& ranks,
                               const std::function<absl::Status()>& one_call_all_ranks) {
  execs_.assign(ranks.devices.size(), nullptr);
  for (size_t rank = 0; rank < ranks.devices.size(); ++rank) {
    LTX_RETURN_IF_ERROR(BeginCapture(ranks, static_cast<int>(rank)));
  }
  absl::Status captured;
  for (int k = 0; k < kCallsPerGraph && captured.ok(); ++k) captured = one_call_all_ranks();
  for (size_t rank = 0; rank < ranks.devices.size(); ++rank) {
    captured = EndCapture(ranks, static_cast<int>(rank), captured);
  }
  return captured;
}

absl::Status GraphSet::CapturePerRank(const TimedRanks& ranks,
                                      const std::function<absl::Status(int rank)>& one_call) {
  execs_.assign(ranks.devices.size(), nullptr);
  return RunOnRankThreads(static_cast<int>(ranks.devices.size()), [&](int rank) {
    LTX_RETURN_IF_ERROR(BeginCapture(ranks, rank));
    absl::Status captured;
    for (int k = 0; k < kCallsPerGraph && captured.ok(); ++k) captured = one_call(rank);
    return EndCapture(ranks, rank, captured);
  });
}

RankLoop GraphSet::Replays(const TimedRanks& ranks) const {
  return [this, &ranks](int rank, int units) -> absl::Status {
    for (int i = 0; i < units; ++i) {
      LTX_RETURN_IF_ERROR(
          CudaStatus(cudaGraphLaunch(execs_[rank], ranks.streams[rank]), "cudaGraphLaunch"));
    }
    return absl::OkStatus();
  };
}

absl::StatusOr<Measured> MeasureGraphReplays(
    const TimingPlan& plan, const TimedRanks& ranks,
    const std::function<absl::Status()>& one_call_all_ranks) {
  GraphSet graphs;
  LTX_RETURN_IF_ERROR(graphs.Capture(ranks, one_call_all_ranks));
  return Measure(plan, /*per_rank_threads=*/true, ranks, graphs.Replays(ranks),
                 GraphSet::kCallsPerGraph);
}

absl::StatusOr<Measured> MeasureGraphReplaysPerRank(
    const TimingPlan& plan, const TimedRanks& ranks,
    const std::function<absl::Status(int rank)>& one_call) {
  GraphSet graphs;
  LTX_RETURN_IF_ERROR(graphs.CapturePerRank(ranks, one_call));
  return Measure(plan, /*per_rank_threads=*/true, ranks, graphs.Replays(ranks),
                 GraphSet::kCallsPerGraph);
}

}  // namespace ltx
