// The settings of one ltx_allgather run, built from its flag values and validated without a
// GPU: a bad flag is a clear InvalidArgument before the tool looks for GPUs.
#ifndef LTX_TOOLS_LTX_ALLGATHER_TOOL_CONFIG_H_
#define LTX_TOOLS_LTX_ALLGATHER_TOOL_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "ltx/data_type.h"
#include "ltx/runtime_options.h"
#include "tools/bench/bench_flags.h"
#include "tools/flags/device_list.h"
#include "tools/ltx_allgather/bench_config.h"
#include "tools/ltx_allgather/breakdown_config.h"
#include "tools/ltx_allgather/overlap_config.h"

namespace ltx {

// The flag values as given (defaults are those of the tool's flags); the flags the tools share
// are BenchFlagValues'. An empty min_bytes is 32K total (benchmark), 64M per rank (overlap).
struct FlagValues : BenchFlagValues {
  bool overlap = false;
  std::string max_bytes = "1G";
  double step_factor = 8;
  std::string dtype;  // Empty: bf16 in the benchmark, every dtype in the smoke run.
  int64_t hidden = 4096;
  std::string split = "even";
  int iters = 100;
  int64_t one_trip_max_bytes = RuntimeOptions().one_trip_max_bytes;
  int64_t copy_engine_min_bytes = RuntimeOptions().copy_engine_min_bytes;
  absl::Duration timeout = RuntimeOptions().timeout;
  bool check = true;
  // Each rank's input is its own tokens inside its output (AllGatherCase::in_place).
  bool in_place = false;
  // Benchmark: how the rows travel ("native" or "fp8_e4m3": AllGatherShape::wire).
  std::string wire = "native";
  std::string gemm = "8192,8192,8192";
  std::string overlap_styles = "sm,sm_budget,copy_engine,nccl";
  std::string cublas;
};

// The smoke run: its Runtime and call options, and the one dtype to run if given.
struct SmokeConfig {
  RuntimeOptions runtime;
  CallOptions call;
  absl::optional<DataType> dtype;  // Unset: the smoke run's own mix of dtypes.
  absl::Duration host_wait;        // Longest host wait for one case.
};

// What the tool runs.
enum class ToolMode { kSmoke, kBench, kOverlap, kBreakdown };

struct ToolConfig {
  ToolMode mode = ToolMode::kSmoke;
  std::vector<int> devices;      // The ranks' GPUs, every mode's (empty: every visible GPU).
  SmokeConfig smoke;             // Set for kSmoke.
  BenchConfig bench_config;      // Set for kBench.
  OverlapConfig overlap_config;  // Set for kOverlap.
  BreakdownConfig breakdown;     // Set for kBreakdown.
};

// How much longer than the GPUs' timeout the host waits for a call.
inline constexpr int kHostWaitFactor = 3;

// Validates every value and builds the run's settings; InvalidArgument names the flag (in the
// form the user typed, e.g. "-b" or "--dtype") and says what it accepts. --bench and --overlap
// exclude each other; --overlap picks the protocol, blocks and transport of each style itself
// and writes no JSON, so it rejects --protocol, --blocks, --transport, --split and --json other
// than their defaults (-b is then bytes per rank). --breakdown excludes both; it times the
// one-trip or the direct kernel (--protocol; auto: one-trip up to 512 KiB per rank, direct above)
// at one size (-b bytes per rank, default 8K) for each of --breakdown_blocks, so it rejects
// --protocol=copy_engine, and --blocks, --split and --json other than their defaults. --tensors
// as BenchTensorsOf (above 1: --bench only). Needs no GPU.
absl::StatusOr<ToolConfig> MakeToolConfig(const FlagValues& flags);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLGATHER_TOOL_CONFIG_H_
