// Timing machinery of the ltx_allgather benchmark: CUDA events around windows of calls on every
// GPU, issued from one host thread per GPU or from one thread, graphs of captured calls to
// replay, and the median over windows.
#ifndef TOOLS_BENCH_BENCH_TIMING_H_
#define TOOLS_BENCH_BENCH_TIMING_H_

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ltx/rank_buffers.h"
#include "tools/bench/timing_plan.h"

namespace ltx {

// Median of `values` (the upper one of an even count); 0 when empty.
double Median(std::vector<double> values);

// One start/stop event pair per GPU. Not thread-safe, except that different ranks may record
// from different threads.
class EventPairs {
 public:
  // Creates the events on each of `devices` (rank order). Errors: as CUDA reports them.
  static absl::StatusOr<EventPairs> Create(const std::vector<int>& devices);
  EventPairs() = default;
  EventPairs(EventPairs&& other) noexcept;
  EventPairs& operator=(EventPairs&& other) noexcept;
  ~EventPairs();

  // Record rank `rank`'s start or stop event on `stream` (a stream of that rank's GPU).
  absl::Status RecordStart(int rank, cudaStream_t stream);
  absl::Status RecordStop(int rank, cudaStream_t stream);
  // Makes `stream` (of rank `rank`'s GPU) wait for rank `rank`'s start or stop event as last
  // recorded: to fork work onto a second stream at the start, or join it before the stop.
  absl::Status WaitForStart(int rank, cudaStream_t stream);
  absl::Status WaitForStop(int rank, cudaStream_t stream);
  // Waits for every stop event; the longest start-to-stop time over the GPUs, in microseconds.
  absl::StatusOr<double> SlowestMicroseconds();

 private:
  void Destroy();
  std::vector<cudaEvent_t> start_;
  std::vector<cudaEvent_t> stop_;
};

// What one timed window runs for rank `rank` (-1: every rank, from one thread): `calls` units.
using RankLoop = std::function<absl::Status(int rank, int calls)>;

// A RankLoop that runs `one_call(rank)` `calls` times, stopping at the first error.
RankLoop Repeated(std::function<absl::Status(int rank)> one_call);

// Where a measurement runs: the GPUs in rank order, one stream per rank, the events to time it.
struct TimedRanks {
  std::vector<int> devices;
  std::vector<cudaStream_t> streams;
  EventPairs* events = nullptr;
};

// The TimedRanks of the ranks on `devices` (rank order) with the streams of `buffers` (each
// rank's RankBuffers::stream), timed by `events` (which must outlive the result).
TimedRanks TimedRanksOf(const std::vector<int>& devices, const std::vector<RankBuffers>& buffers,
                        EventPairs* events);

// Per-call times of a measurement, medians over the plan's windows.
struct Measured {
  double device_us = 0;  // Device time per call, slowest GPU.
  double host_us = 0;    // Host time to issue one call.
};

// Runs `loop` for plan.warmup calls, then plan.windows windows of plan.iterations calls, each
// between the events on every stream; a unit of the loop is `calls_per_unit` calls (a graph of
// several captured calls), and both counts are rounded down to whole units (a window has at
// least one; a warm-up of fewer calls than a unit runs none). With `per_rank_threads` each
// rank's loop runs on its own host thread (all released at once), else one thread runs
// loop(-1, units). Returns the first error.
absl::StatusOr<Measured> Measure(const TimingPlan& plan, bool per_rank_threads,
                                 const TimedRanks& ranks, const RankLoop& loop, int calls_per_unit);

// One executable graph per GPU, each holding kCallsPerGraph calls captured from one thread, or
// from one thread per GPU.
class GraphSet {
 public:
  // Calls captured into each graph.
  static constexpr int kCallsPerGraph = 20;

  GraphSet() = default;
  GraphSet(const GraphSet&) = delete;
  GraphSet& operator=(const GraphSet&) = delete;
  ~GraphSet();

  // Captures kCallsPerGraph calls of `one_call_all_ranks` (which enqueues one call on every
  // rank's stream) into one graph per stream, and instantiates them. Returns the first error;
  // every capture is ended either way.
  absl::Status Capture(const TimedRanks& ranks,
                       const std::function<absl::Status()>& one_call_all_ranks);
  // Captures kCallsPerGraph calls of `one_call(rank)` into rank `rank`'s graph, each rank from
  // its own thread, all at once (per-rank calls whose captures meet on the host, as captured
  // copy-engine calls do). Returns the first error; every capture is ended either way.
  absl::Status CapturePerRank(const TimedRanks& ranks,
                              const std::function<absl::Status(int rank)>& one_call);
  // A RankLoop that launches rank `rank`'s graph `units` times on ranks.streams[rank]; the
  // GraphSet and `ranks` must outlive it.
  RankLoop Replays(const TimedRanks& ranks) const;

 private:
  // Begins the capture of rank `rank`'s stream, its device made current.
  static absl::Status BeginCapture(const TimedRanks& ranks, int rank);
  // Ends rank `rank`'s capture and instantiates its graph; returns `captured` if it is an
  // error, else the first error of these steps.
  absl::Status EndCapture(const TimedRanks& ranks, int rank, absl::Status captured);

  std::vector<cudaGraphExec_t> execs_;  // Per rank; null where nothing was instantiated.
};

// Captures `one_call_all_ranks` into a GraphSet and Measures its replays, each rank's from its
// own host thread. Returns the first error.
absl::StatusOr<Measured> MeasureGraphReplays(
    const TimingPlan& plan, const TimedRanks& ranks,
    const std::function<absl::Status()>& one_call_all_ranks);

// The same with GraphSet::CapturePerRank.
absl::StatusOr<Measured> MeasureGraphReplaysPerRank(
    const TimingPlan& plan, const TimedRanks& ranks,
    const std::function<absl::Status(int rank)>& one_call);

}  // namespace ltx

#endif  // TOOLS_BENCH_BENCH_TIMING_H_
