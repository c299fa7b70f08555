// What one overlap run of the ltx_allgather tool measures: the GEMM each GPU runs, the AllGather
// beside it (per-rank size, dtype) and the styles of AllGather to compare, with the plain logic
// over them (names, parsing, validation).
#ifndef LTX_TOOLS_LTX_ALLGATHER_OVERLAP_CONFIG_H_
#define LTX_TOOLS_LTX_ALLGATHER_OVERLAP_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ltx/data_type.h"
#include "ltx/runtime_options.h"
#include "tools/bench/gemm_shape.h"
#include "tools/ltx_allgather/bench_config.h"

namespace ltx {

// How the AllGather beside the GEMM is carried out.
enum class OverlapStyle {
  kSm,          // Peer-store kernels, protocol direct, one block per SM.
  kSmBudget,    // Peer-store kernels, protocol direct, at most the block budget.
  kCopyEngine,  // Copy engines (protocol copy_engine), eager per-rank calls: no SMs.
  kNccl,        // ncclAllGather, grouped from one thread (when libnccl loads).
};

// "sm", "sm_budget", "copy_engine" or "nccl"; parsing takes the same names.
std::string OverlapStyleName(OverlapStyle style);
// A comma-separated list of style names, in the given order, without repeats.
// InvalidArgument naming an unknown or repeated style, or for an empty list.
absl::StatusOr<std::vector<OverlapStyle>> ParseOverlapStyles(absl::string_view text);

// The block budget of OverlapStyle::kSmBudget when --max_blocks is not given.
inline constexpr int kDefaultBlockBudget = 16;

struct OverlapConfig {
  RuntimeOptions runtime;  // Devices, GPU timeout, one-trip limit; max_blocks set per style.
  DataType dtype = DataType::kBFloat16;
  int64_t hidden = 4096;
  int64_t per_rank_bytes = int64_t{64} << 20;  // Rounded down to whole token rows.
  GemmShape gemm;
  std::vector<OverlapStyle> styles = {OverlapStyle::kSm, OverlapStyle::kSmBudget,
                                      OverlapStyle::kCopyEngine, OverlapStyle::kNccl};
  int block_budget = kDefaultBlockBudget;
  TimingPlan timing;  // Warm-up and window lengths count GEMMs.
  bool check = true;
  // Each rank's input is its own tokens inside its output (AllGatherCase::in_place).
  bool in_place = false;
  absl::Duration host_wait = absl::Seconds(60);
  std::string nccl_path = "libnccl.so.2";  // Empty: no NCCL style.
  std::string cublas_path;                 // Empty: LTX_CUBLAS, then the usual places.
};

// InvalidArgument naming the first setting an overlap run cannot run with (per-rank size below
// one token row, hidden, block budget, timing counts, no style). Needs no GPU.
absl::Status ValidateOverlapConfig(const OverlapConfig& config);

// Tokens per rank: per_rank_bytes over the row size. Requires a valid config.
int64_t OverlapTokensPerRank(const OverlapConfig& config);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLGATHER_OVERLAP_CONFIG_H_
