// Names of the benchmarks' call styles, and the transport graph replay needs.
#include "tools/bench/bench_style.h"

#include "absl/strings/str_format.h"

namespace ltx {

std::string BenchStyleName(BenchStyle style) {
  switch (style) {
    case BenchStyle::kPerRank:
      return "rank";
    case BenchStyle::kCoordinated:
      return "coordinated";
    case BenchStyle::kGraph:
      return "graph";
    case BenchStyle::kRankOneThread:
      return "rank_one_thread";
  }
  return "unknown";
}

absl::StatusOr<BenchStyle> ParseBenchStyle(absl::string_view name) {
  for (BenchStyle style : {BenchStyle::kPerRank, BenchStyle::kCoordinated, BenchStyle::kGraph,
                           BenchStyle::kRankOneThread}) {
    if (name == BenchStyleName(style)) return style;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "unknown style '%s'; expected one of rank, coordinated, graph, rank_one_thread", name));
}

std::string CallTimingName(BenchStyle style) {
  return style == BenchStyle::kGraph ? "graph replay" : "eager";
}

std::string HostTimeMeaning(BenchStyle style) {
  switch (style) {
    case BenchStyle::kPerRank:
      return "one rank's call, median over the ranks' threads";
    case BenchStyle::kCoordinated:
      return "the coordinated call for every rank";
    case BenchStyle::kGraph:
      return "one rank's graph launch over the calls it replays";
    case BenchStyle::kRankOneThread:
      break;
  }
  return "every rank's call in turn from one thread";
}

absl::Status CheckStyleOnTransport(BenchStyle style, Transport transport) {
  if (style == BenchStyle::kGraph && transport == Transport::kCopyEngine) {
    return absl::InvalidArgumentError(
        "--style=graph: calls on the copy-engine transport cannot be captured into CUDA graphs "
        "(--protocol=copy_engine on the peer-store transport can)");
  }
  return absl::OkStatus();
}

}  // namespace ltx
