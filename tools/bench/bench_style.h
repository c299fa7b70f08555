// How a benchmark issues ltx's calls while they are timed (the call styles of the Runtime), with
// their names on the command line, in tables and in JSON, and the transport graph replay needs.
#ifndef TOOLS_BENCH_BENCH_STYLE_H_
#define TOOLS_BENCH_BENCH_STYLE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ltx/runtime_options.h"

namespace ltx {

// How ltx's calls are issued while timed.
enum class BenchStyle {
  kPerRank,      // AllGatherRank from one host thread per GPU, launched every iteration.
  kCoordinated,  // Runtime::AllGather from one thread, launched every iteration.
  kGraph,        // Per-rank calls captured into one CUDA graph per GPU, replayed.
  kRankOneThread,  // AllGatherRank of every rank in turn from one host thread.
};

// "rank", "coordinated", "graph" or "rank_one_thread"; parsing takes the same names.
// InvalidArgument lists them.
std::string BenchStyleName(BenchStyle style);
absl::StatusOr<BenchStyle> ParseBenchStyle(absl::string_view name);

// How the calls of `style` reach the GPUs: "graph replay" for kGraph, "eager" for the others.
std::string CallTimingName(BenchStyle style);

// What the host time per call (the tables' `host`) counts in `style`: "one rank's call, median
// over the ranks' threads", "the coordinated call for every rank", "one rank's graph launch over
// the calls it replays", "every rank's call in turn from one thread".
std::string HostTimeMeaning(BenchStyle style);

// OK unless `style` is kGraph and `transport` the copy-engine transport, whose calls cannot be
// captured into CUDA graphs: then InvalidArgument naming --style=graph (a tool refuses its
// command line with it; Protocol::kCopyEngine on the peer-store transport can be captured).
absl::Status CheckStyleOnTransport(BenchStyle style, Transport transport);

}  // namespace ltx

#endif  // TOOLS_BENCH_BENCH_STYLE_H_
