// The flags that the collectives' tools (ltx_allgather, ltx_alltoall, ltx_allreduce) share with one
// meaning and one default: what runs (--bench, --breakdown), the ranks (--devices, -g) and their
// transport, the smallest size (-b), ltx's calls (--protocol, --blocks, --max_blocks), the timing
// (-w, --windows) and the benchmark's call style (--style), the breakdown's block counts, the NCCL
// library, the benchmark's JSON file (--json) and the tensors of its calls (--tensors). They are
// defined once, in bench_flags.cc; each tool's --help describes them with the tool's own flags.
// ltx_allreduce takes neither --protocol, --transport, the breakdown's flags nor --tensors and
// refuses them.
#ifndef TOOLS_BENCH_BENCH_FLAGS_H_
#define TOOLS_BENCH_BENCH_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/bench/timing_plan.h"
#include "tools/flags/command_line.h"

namespace ltx {

// The nccl-tests short flags of the tools whose benchmark sweeps sizes (ltx_alltoall,
// ltx_allreduce): -b, -e, -f, -n, -w, -d and -g.
inline constexpr ShortFlag kSweepShortFlags[] = {
    {'b', "min_bytes"}, {'e', "max_bytes"}, {'f', "step_factor"}, {'n', "iters"},
    {'w', "warmup"},    {'d', "dtype"},     {'g', "gpus"},
};

// The shared flags' values as given; their defaults are the flags' defaults. Each tool's flag
// values extend it.
struct BenchFlagValues {
  bool bench = false;
  bool breakdown = false;
  std::string breakdown_blocks = "0,1,2,4";
  std::string devices;
  int gpus = 0;
  std::string min_bytes;  // Empty: the tool's default for what it runs.
  std::string protocol = "auto";
  int blocks = 0;
  int max_blocks = 0;
  std::string transport = "auto";
  int warmup = 20;
  int windows = 5;
  std::string style = "rank";
  std::string nccl = "libnccl.so.2";
  std::string json;  // Empty: no JSON file.
  int tensors = 1;
};

// Sets the fields of `values` to the shared flags' values as the command line set them.
void ReadBenchFlags(BenchFlagValues* values);

// The shared flags of the benchmark's timing and output (-w/--warmup, --windows, --style, --json,
// --nccl, --tensors), each with whether `values` sets it away from its default, for a mode that
// reads none of them (RefuseGivenFlags). Thread-safe.
std::vector<GivenFlag> GivenBenchFlags(const BenchFlagValues& values);

// ltx's calls and their timing as the shared flags give them, with the tool's -n (`iters`).
struct BenchCallSettings {
  int blocks = 0;      // CallOptions::blocks.
  int max_blocks = 0;  // RuntimeOptions::max_blocks.
  TimingPlan timing;
};

// The settings of `values` and `iters`; InvalidArgument naming --blocks or --max_blocks when
// negative, or the timing plan's (ValidateTimingPlan). Thread-safe (pure).
absl::StatusOr<BenchCallSettings> BenchCallSettingsOf(const BenchFlagValues& values, int iters);

// The tensors each of the benchmark's timed calls moves (--tensors; AllToAllShape::tensors,
// AllGatherShape::tensors): 1 to kMaxTensors, and more than one only with --bench and with
// every --protocol (a comma-separated list) auto or direct, since several tensors run on the
// direct kernel alone. InvalidArgument naming --tensors otherwise. Thread-safe (pure).
absl::StatusOr<int> BenchTensorsOf(const BenchFlagValues& values);

}  // namespace ltx

#endif  // TOOLS_BENCH_BENCH_FLAGS_H_
