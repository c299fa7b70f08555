// The settings of one ltx_alltoall run, built from its flag values and validated without a GPU,
// so that a bad flag is one clear line before the tool looks for GPUs; with the plain logic
// over them (the benchmark's shapes, the checks that need the world size).
#ifndef LTX_TOOLS_LTX_ALLTOALL_ALLTOALL_CONFIG_H_
#define LTX_TOOLS_LTX_ALLTOALL_ALLTOALL_CONFIG_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ltx/alltoall_shape.h"
#include "ltx/data_type.h"
#include "ltx/wire_format.h"
#include "ltx/runtime_options.h"
#include "tools/bench/bench_flags.h"
#include "tools/bench/bench_style.h"
#include "tools/bench/timing_plan.h"

namespace ltx {

// The flag values as given (defaults are those of the tool's flags); the flags the tools share
// are BenchFlagValues'. An empty min_bytes is the model shapes (benchmark), 8K (breakdown).
struct AllToAllFlagValues : BenchFlagValues {
  bool smoke = false;
  std::string max_bytes;  // Empty: 256M.
  double step_factor = std::numeric_limits<double>::quiet_NaN();  // NaN: not given, 4.
  int64_t heads = 32;
  int64_t head_dim = 128;
  std::string head_counts;
  std::string direction = "both";
  std::string dtype = "bf16";
  int iters = 50;
  std::string wire = "native";
};

// One benchmark shape: total tokens (split evenly), heads and head_dim.
struct BenchShape {
  int64_t tokens;
  int64_t heads;
  int64_t head_dim;
};

struct AllToAllToolConfig {
  bool smoke = true;  // Runs first; then the benchmark, then the breakdown (if the smoke passed).
  bool bench = false;
  bool breakdown = false;
  std::vector<int> devices;  // The ranks' GPUs (empty: every visible GPU).
  int max_blocks = 0;        // RuntimeOptions::max_blocks.
  // RuntimeOptions::transport.
  Transport transport = Transport::kAuto;
  DataType dtype = DataType::kBFloat16;
  std::vector<AllToAllDirection> directions;
  std::vector<int64_t> head_counts;  // Heads per rank; empty: the even split.
  TimingPlan timing;
  // Benchmark: the protocols of ltx's calls (one row each per shape), their block count, the
  // call style they (and NCCL's calls) are timed in, the NCCL library (empty: none), the JSON
  // file (empty: none), and the sweep of output bytes per rank (min_bytes 0: the model shapes)
  // over shapes of `heads` x `head_dim`; the tensors each timed call moves (above 1: also as
  // many single-tensor calls, TensorCalls).
  std::vector<Protocol> protocols;
  int tensors = 1;
  // How ltx's calls move the head vectors (NCCL's move the native bytes).
  WireFormat wire = WireFormat::kNative;
  int blocks = 0;
  BenchStyle style = BenchStyle::kPerRank;
  std::string nccl_path;
  std::string json_path;
  int64_t min_bytes = 0;
  int64_t max_bytes = 0;
  double factor = 4;
  int64_t heads = 32;
  int64_t head_dim = 128;
  // Breakdown: the kernel timed (kOneTrip or kDirect), bytes per rank and block counts.
  Protocol breakdown_protocol = Protocol::kOneTrip;
  int64_t breakdown_bytes = 8 << 10;
  std::vector<int> breakdown_blocks;
};

// Validates every value and builds the run's settings; InvalidArgument names the flag (in the
// form the user typed, e.g. "-b/--min_bytes") and says what it accepts. -e and -f need --bench
// and -b; -b needs --bench or --breakdown; --style (other than rank) and --json need --bench;
// --style=graph refuses --transport=copy_engine (CheckStyleOnTransport); --tensors is
// BenchTensorsOf's; --wire (native or fp8_e4m3) needs --bench and, for fp8_e4m3, -d bf16 or fp16,
// --head_dim >= 8 and --protocol auto or direct; --breakdown takes one --protocol (auto, one_trip or direct); --head_counts
// must fit the shapes' heads (and, with --devices or -g, the ranks).
// Needs no GPU. Thread-safe (pure).
absl::StatusOr<AllToAllToolConfig> MakeAllToAllToolConfig(const AllToAllFlagValues& flags);

// OK when `config` can run on `world` ranks (--head_counts gives one count per rank); else
// InvalidArgument naming the flag. Thread-safe (pure).
absl::Status CheckWorldSize(const AllToAllToolConfig& config, int world);

// The benchmark's shapes on `world` ranks: the model shapes (32 heads), or the sweep from
// min_bytes to max_bytes output bytes per rank, times factor each step, with total tokens
// max(1, bytes * world / token row). Requires a valid config. Thread-safe (pure).
std::vector<BenchShape> BenchShapes(const AllToAllToolConfig& config, int world);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLTOALL_ALLTOALL_CONFIG_H_
