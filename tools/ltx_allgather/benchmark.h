// The benchmark of the ltx_allgather tool: an nccl-tests-style size sweep of ltx's AllGather
// in a chosen call style, with NCCL's AllGather on the same buffers and streams side by side
// when a libnccl can be loaded at run time.
#ifndef LTX_TOOLS_BENCHMARK_H_
#define LTX_TOOLS_BENCHMARK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ltx/data_type.h"
#include "ltx/runtime.h"
#include "tools/allgather_harness.h"

namespace ltx {

// How ltx's calls are issued while timed.
enum class BenchStyle {
  kPerRank,      // AllGatherRank from one host thread per GPU, launched every iteration.
  kCoordinated,  // Runtime::AllGather from one thread, launched every iteration.
  kGraph,        // Per-rank calls captured into one CUDA graph per GPU, replayed.
};

absl::StatusOr<BenchStyle> ParseBenchStyle(const std::string& name);
std::string BenchStyleName(BenchStyle style);

// How the tokens of one size are split across ranks.
enum class SplitPattern {
  kEven,    // Equal counts (NCCL can run the same shape).
  kUneven,  // Counts grow with the rank, same total.
  kZeros,   // Every other rank has no tokens, same total.
};

absl::StatusOr<SplitPattern> ParseSplitPattern(const std::string& name);

// Token counts for `total_tokens` split over `world` ranks by `pattern`.
absl::StatusOr<Protocol> ParseProtocol(const std::string& name);
absl::StatusOr<Transport> ParseTransport(const std::string& name);
std::string TransportName(Transport transport);
std::string ProtocolName(Protocol protocol);

std::vector<int64_t> SplitTokens(int64_t total_tokens, int world, SplitPattern pattern);

struct BenchConfig {
  std::vector<int> devices;
  int64_t min_bytes = 32 << 10;        // Sizes are total output bytes, as in nccl-tests.
  int64_t max_bytes = int64_t{1} << 30;
  double factor = 8;
  DataType dtype = DataType::kBFloat16;
  int64_t hidden = 4096;
  SplitPattern split = SplitPattern::kEven;
  BenchStyle style = BenchStyle::kPerRank;
  int warmup = 20;
  int iterations = 100;
  int windows = 5;
  int blocks = 0;       // Per-call block count; 0 = automatic.
  Protocol protocol = Protocol::kAuto;
  Transport transport = Transport::kAuto;
  int64_t one_trip_max_bytes = RuntimeOptions().one_trip_max_bytes;
  int64_t copy_engine_min_bytes = RuntimeOptions().copy_engine_min_bytes;
  int max_blocks = 0;   // RuntimeOptions::max_blocks.
  bool check = true;
  std::string nccl_path = "libnccl.so.2";  // Empty: no NCCL comparison.
  std::string json_path;                   // Empty: no JSON.
};

// One row of the sweep. Times are medians over windows of device time per call.
struct BenchRow {
  int64_t size_bytes = 0;       // Total output bytes.
  int64_t per_rank_bytes = 0;   // Largest rank's input bytes.
  int64_t count = 0;            // Output elements.
  double ltx_us = 0;
  double ltx_algbw = 0;         // GB/s: size / time.
  double ltx_busbw = 0;         // GB/s: algbw * (n - 1) / n.
  double host_us = 0;           // Host time of one call (launch cost), median.
  int64_t wrong = 0;            // Ranks whose output was wrong in the check.
  double nccl_us = -1;          // < 0: not measured.
  double nccl_busbw = -1;
};

// Runs the sweep, printing the nccl-tests-style table to stdout as rows complete and progress
// to stderr; writes JSON if asked. Returns the rows, or the first error that stopped it.
absl::StatusOr<std::vector<BenchRow>> RunBenchmark(const BenchConfig& config);

}  // namespace ltx

#endif  // LTX_TOOLS_BENCHMARK_H_
