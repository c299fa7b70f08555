// The settings of one ltx_allreduce run, built from its flag values and validated without a GPU,
// so that a bad flag is one clear line before the tool looks for GPUs; with the benchmark's
// sizes and the names its command line gives the reductions.
#ifndef LTX_TOOLS_LTX_ALLREDUCE_ALLREDUCE_CONFIG_H_
#define LTX_TOOLS_LTX_ALLREDUCE_ALLREDUCE_CONFIG_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels/wire/collective.h"
#include "ltx/data_type.h"
#include "ltx/reduction.h"
#include "tools/bench/bench_flags.h"
#include "tools/bench/bench_style.h"
#include "tools/bench/timing_plan.h"
#include "tools/ltx_allreduce/allreduce_path.h"

namespace ltx {

// The flag values as given (defaults are those of the tool's flags); the flags the tools share
// are BenchFlagValues'. An empty min_bytes is the default sweep's 8K.
struct AllReduceFlagValues : BenchFlagValues {
  bool smoke = false;
  std::string max_bytes;   // Empty: 256M.
  double step_factor = std::numeric_limits<double>::quiet_NaN();  // NaN: not given, 2.
  std::string op = "allreduce";
  std::string dtype = "bf16";
  std::string reduction = "sum";
  std::string path = "auto";
  int64_t hidden = 0;  // 0: 4096.
  int iters = 50;
};

struct AllReduceToolConfig {
  bool smoke = true;  // Runs first; then the benchmark.
  bool bench = false;
  std::vector<int> devices;  // The ranks' GPUs (empty: every visible GPU).
  int max_blocks = 0;        // RuntimeOptions::max_blocks.
  // Benchmark: the collective (kAllReduce, kReduceScatter or kAllReduceRmsNorm, whose rows have
  // `hidden` elements), its dtype and reduction, the AllReduce's paths (one row each per size),
  // the block count of ltx's calls, the call style they (and NCCL's calls) are timed in, the
  // timing, the NCCL library (empty: none), the JSON file (empty: none), and the sweep of input
  // bytes per rank from min_bytes to max_bytes, times factor each step.
  Collective collective = Collective::kAllReduce;
  int64_t hidden = 4096;
  DataType dtype = DataType::kBFloat16;
  Reduction reduction = Reduction::kSum;
  std::vector<AllReducePath> paths = {AllReducePath::kAuto};
  int blocks = 0;
  BenchStyle style = BenchStyle::kPerRank;
  TimingPlan timing;
  std::string nccl_path;
  std::string json_path;
  int64_t min_bytes = 8 << 10;
  int64_t max_bytes = 256 << 20;
  double factor = 2;
};

// "allreduce", "reduce_scatter" or "allreduce_rmsnorm", as --op names the collective; parsing
// takes the same names (InvalidArgument naming --op otherwise). Thread-safe (pure).
std::string OpFlagName(Collective collective);
absl::StatusOr<Collective> ParseOp(absl::string_view name);

// "sum", "max" or "min" as --reduction takes them (InvalidArgument naming the flag otherwise).
// Thread-safe (pure).
absl::StatusOr<Reduction> ParseReduction(absl::string_view name);

// Validates every value and builds the run's settings; InvalidArgument names the flag (in the
// form the user typed, e.g. "-b/--min_bytes") and says what it accepts. -b, -e, -f, --style,
// --json, --path and --hidden need --bench; --path other than auto needs --op allreduce;
// --hidden (1..2^24) needs --op allreduce_rmsnorm, which sums only; --dtype takes bf16, fp16 or
// fp32; the shared flags the reductions have no use for (--protocol other than
// auto, --transport other than auto, --breakdown, --breakdown_blocks and --tensors other than 1)
// are refused. Needs no GPU. Thread-safe (pure).
absl::StatusOr<AllReduceToolConfig> MakeAllReduceToolConfig(const AllReduceFlagValues& flags);

// The benchmark's sizes (input bytes per rank): min_bytes, times factor, up to max_bytes.
// Requires a valid config. Thread-safe (pure).
std::vector<int64_t> BenchSizes(const AllReduceToolConfig& config);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLREDUCE_ALLREDUCE_CONFIG_H_
