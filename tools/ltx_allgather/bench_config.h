// What one benchmark sweep of the ltx_allgather tool runs: the call style, how tokens are split
// over ranks, the sizes, the timing plan and the Runtime and call options; with the plain
// logic over them (names, token splits, the size list, validation).
#ifndef LTX_TOOLS_LTX_ALLGATHER_BENCH_CONFIG_H_
#define LTX_TOOLS_LTX_ALLGATHER_BENCH_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ltx/data_type.h"
#include "ltx/runtime_options.h"
#include "ltx/wire_format.h"
#include "tools/bench/bench_style.h"
#include "tools/bench/timing_plan.h"

namespace ltx {

// How the tokens of one size are split across ranks.
enum class SplitPattern {
  kEven,    // Equal counts (NCCL can run the same shape).
  kUneven,  // Counts grow with the rank, same total.
  kZeros,   // Every other rank has no tokens, same total.
};

// "even", "uneven" or "zeros"; parsing takes the same names. InvalidArgument lists them.
std::string SplitPatternName(SplitPattern pattern);
absl::StatusOr<SplitPattern> ParseSplitPattern(absl::string_view name);

// Token counts for `total_tokens` split over `world` ranks by `pattern`; they sum to
// `total_tokens` and none is negative.
std::vector<int64_t> SplitTokens(int64_t total_tokens, int world, SplitPattern pattern);

struct BenchConfig {
  RuntimeOptions runtime;        // Devices, transport, protocol limits, max_blocks, GPU timeout.
  CallOptions call;              // Protocol and block count of every timed call.
  // Tensors of the shape every timed call gathers in one op; above 1, each row also times as
  // many single-tensor calls (TensorCalls).
  int tensors = 1;
  int64_t min_bytes = 32 << 10;  // Sizes are total output bytes, as in nccl-tests.
  int64_t max_bytes = int64_t{1} << 30;
  double factor = 8;
  DataType dtype = DataType::kBFloat16;
  int64_t hidden = 4096;
  SplitPattern split = SplitPattern::kEven;
  BenchStyle style = BenchStyle::kPerRank;
  TimingPlan timing;
  bool check = true;
  // Each rank's input is its own tokens inside its output (AllGatherCase::in_place).
  bool in_place = false;
  // How the rows travel (AllGatherShape::wire).
  WireFormat wire = WireFormat::kNative;
  absl::Duration host_wait = absl::Seconds(60);  // Longest host wait for the GPUs.
  std::string nccl_path = "libnccl.so.2";        // Empty: no NCCL comparison.
  std::string json_path;                         // Empty: no JSON.
};

// InvalidArgument naming the first setting a sweep cannot run with (sizes, factor, hidden,
// timing counts, a graph style with the copy engines forced; with the FP8 wire, a dtype other
// than bf16 and fp16, hidden below 8, in place, several tensors, or a protocol other than auto
// and direct). Needs no GPU.
absl::Status ValidateBenchConfig(const BenchConfig& config);

// The total output sizes of the sweep: min_bytes, then times factor while <= max_bytes, each
// rounded down to whole bytes. Requires a valid config.
std::vector<int64_t> SweepSizes(const BenchConfig& config);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLGATHER_BENCH_CONFIG_H_
