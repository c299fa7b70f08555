// Windows of a GEMM and a collective side by side on two streams of every GPU.
#include "tools/ltx_allgather/overlap_timing.h"

#include <algorithm>
#include <cmath>

#include "ltx/cuda/cuda_status.h"
#include "ltx/status_macros.h"
#include "tools/testing/rank_threads.h"

namespace ltx {
namespace {

// The events of one pair measurement: each stream's work, and the pair.
struct PairEvents {
  EventPairs gemm;
  EventPairs collective;
  EventPairs wall;
};

// Forks the collective stream of every rank from the GEMM stream and starts the clocks.
absl::Status ForkAndStart(const PairRanks& ranks, PairEvents* events) {
  for (size_t rank = 0; rank < ranks.devices.size(); ++rank) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(ranks.devices[rank]), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(events->wall.RecordStart(rank, ranks.gemm_streams[rank]));
    LTX_RETURN_IF_ERROR(events->wall.WaitForStart(rank, ranks.collective_streams[rank]));
    LTX_RETURN_IF_ERROR(events->gemm.RecordStart(rank, ranks.gemm_streams[rank]));
    LTX_RETURN_IF_ERROR(events->collective.RecordStart(rank, ranks.collective_streams[rank]));
  }
  return absl::OkStatus();
}

// Stops each stream's clock, joins the collective stream into the GEMM stream, stops the pair.
absl::Status StopAndJoin(const PairRanks& ranks, PairEvents* events) {
  for (size_t rank = 0; rank < ranks.devices.size(); ++rank) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(ranks.devices[rank]), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(events->gemm.RecordStop(rank, ranks.gemm_streams[rank]));
    LTX_RETURN_IF_ERROR(events->collective.RecordStop(rank, ranks.collective_streams[rank]));
    LTX_RETURN_IF_ERROR(events->collective.WaitForStop(rank, ranks.gemm_streams[rank]));
    LTX_RETURN_IF_ERROR(events->wall.RecordStop(rank, ranks.gemm_streams[rank]));
  }
  return absl::OkStatus();
}

// Launches `gemms` GEMMs with `collectives` collective calls spread among them, for `rank`
// (-1: every rank).
absl::Status Interleave(const RankLoop& gemm, const RankLoop& collective, int rank, int gemms,
                        int collectives) {
  for (int i = 0; i < gemms; ++i) {
    LTX_RETURN_IF_ERROR(gemm(rank, 1));
    const int calls = CallsAfterGemm(i, gemms, collectives);
    if (calls > 0) LTX_RETURN_IF_ERROR(collective(rank, calls));
  }
  return absl::OkStatus();
}

absl::StatusOr<PairTimes> PairWindow(const PairRanks& ranks, const RankLoop& gemm,
                                     const CollectiveLoop& collective, int gemms, int collectives,
                                     PairEvents* events) {
  LTX_RETURN_IF_ERROR(ForkAndStart(ranks, events));
  if (collective.per_rank_threads) {
    LTX_RETURN_IF_ERROR(
        RunOnRankThreads(static_cast<int>(ranks.devices.size()), [&](int rank) -> absl::Status {
          return Interleave(gemm, collective.loop, rank, gemms, collectives);
        }));
  } else {
    LTX_RETURN_IF_ERROR(Interleave(gemm, collective.loop, -1, gemms, collectives));
  }
  LTX_RETURN_IF_ERROR(StopAndJoin(ranks, events));
  PairTimes times;
  LTX_ASSIGN_OR_RETURN(const double gemm_us, events->gemm.SlowestMicroseconds());
  LTX_ASSIGN_OR_RETURN(const double collective_us, events->collective.SlowestMicroseconds());
  LTX_ASSIGN_OR_RETURN(times.wall_us, events->wall.SlowestMicroseconds());
  times.gemm_us = gemm_us / gemms;
  times.collective_us = collective_us / collectives;
  times.gemm_calls = gemms;
  times.collective_calls = collectives;
  return times;
}

}  // namespace

int MatchingCalls(int gemms, double gemm_us, double collective_us) {
  if (!(collective_us > 0)) return 1;
  return std::max(1, static_cast<int>(std::lround(gemms * gemm_us / collective_us)));
}

int CallsAfterGemm(int i, int gemms, int collectives) {
  const int64_t before = int64_t{i} * collectives / gemms;
  const int64_t after = int64_t{i + 1} * collectives / gemms;
  return static_cast<int>(after - before);
}

absl::StatusOr<PairTimes> MeasurePair(const TimingPlan& plan, const PairRanks& ranks,
                                      const RankLoop& gemm, const CollectiveLoop& collective,
                                      int collective_calls) {
  PairEvents events;
  LTX_ASSIGN_OR_RETURN(events.gemm, EventPairs::Create(ranks.devices));
  LTX_ASSIGN_OR_RETURN(events.collective, EventPairs::Create(ranks.devices));
  LTX_ASSIGN_OR_RETURN(events.wall, EventPairs::Create(ranks.devices));
  if (plan.warmup > 0) {
    const int warm_calls =
        std::max<int>(1, static_cast<int64_t>(collective_calls) * plan.warmup / plan.iterations);
    LTX_RETURN_IF_ERROR(
        PairWindow(ranks, gemm, collective, plan.warmup, warm_calls, &events).status());
  }
  std::vector<double> gemm_us, collective_us, wall_us;
  for (int w = 0; w < plan.windows; ++w) {
    LTX_ASSIGN_OR_RETURN(const PairTimes times, PairWindow(ranks, gemm, collective, plan.iterations,
                                                           collective_calls, &events));
    gemm_us.push_back(times.gemm_us);
    collective_us.push_back(times.collective_us);
    wall_us.push_back(times.wall_us);
  }
  PairTimes result;
  result.gemm_us = Median(gemm_us);
  result.collective_us = Median(collective_us);
  result.wall_us = Median(wall_us);
  result.gemm_calls = plan.iterations;
  result.collective_calls = collective_calls;
  return result;
}

}  // namespace ltx
