// The benchmark of the ltx_allgather tool: an nccl-tests-style size sweep of ltx's AllGather
// in a chosen call style, read against the launch floor of an empty kernel, with NCCL's
// AllGather on the same buffers and streams side by side when a libnccl can be loaded at run
// time.
#ifndef LTX_TOOLS_LTX_ALLGATHER_BENCHMARK_H_
#define LTX_TOOLS_LTX_ALLGATHER_BENCHMARK_H_

#include <vector>

#include "absl/status/statusor.h"
#include "tools/bench/bench_table.h"
#include "tools/ltx_allgather/bench_config.h"

namespace ltx {

// Runs the sweep: validates `config` (InvalidArgument before touching a GPU), creates the
// Runtime, measures the launch floor, then one row per size, printing the header and each row
// to stdout as it completes and progress to stderr; writes JSON if asked. Returns the rows, or
// the first error that stopped it.
absl::StatusOr<std::vector<BenchRow>> RunBenchmark(const BenchConfig& config);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLGATHER_BENCHMARK_H_
