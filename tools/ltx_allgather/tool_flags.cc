// ltx_allgather's flags and the parse of its command line.
#include "tools/ltx_allgather/tool_flags.h"

#include <cstdint>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "tools/bench/bench_flags.h"
#include "tools/ltx_allgather/command_line.h"

// The flags of ltx_allgather alone, with the defaults of ltx::FlagValues (those both tools take
// are tools/bench/bench_flags.cc's); --help (command_line.cc) describes them all for people,
// with their short forms.
ABSL_FLAG(bool, overlap, ltx::FlagValues().overlap,
          "Run a GEMM beside the AllGather on every GPU, per AllGather style.");
ABSL_FLAG(std::string, max_bytes, ltx::FlagValues().max_bytes,
          "-e: largest size, output bytes per rank (K/M/G).");
ABSL_FLAG(double, step_factor, ltx::FlagValues().step_factor,
          "-f: factor between successive sizes.");
ABSL_FLAG(std::string, dtype, ltx::FlagValues().dtype,
          "-d: element type; default bf16 (bench), every type (smoke).");
ABSL_FLAG(int64_t, hidden, ltx::FlagValues().hidden, "Benchmark: elements per token row.");
ABSL_FLAG(std::string, split, ltx::FlagValues().split, "Benchmark: even, uneven or zeros.");
ABSL_FLAG(int, iters, ltx::FlagValues().iters, "-n: calls per timed window.");
ABSL_FLAG(int64_t, one_trip_max_bytes, ltx::FlagValues().one_trip_max_bytes,
          "Largest one-trip shard (at most 524288); -1 = by world size.");
ABSL_FLAG(int64_t, copy_engine_min_bytes, ltx::FlagValues().copy_engine_min_bytes,
          "Smallest shard of an eager automatic call on the copy engines; 0 = never.");
ABSL_FLAG(absl::Duration, timeout, ltx::FlagValues().timeout,
          "-T: how long a GPU waits for its peers; the host waits 3 times as long.");
ABSL_FLAG(bool, check, ltx::FlagValues().check, "-c: verify every benchmark row byte-exact.");
ABSL_FLAG(bool, in_place, ltx::FlagValues().in_place,
          "Benchmark, overlap, breakdown: each rank's input is its own tokens inside its output "
          "(NCCL's in-place AllGather; NCCL is called in place too).");
ABSL_FLAG(std::string, wire, ltx::FlagValues().wire,
          "Benchmark: native or fp8_e4m3 (rows as e4m3 codes with a scale, bf16 and fp16).");
ABSL_FLAG(std::string, gemm, ltx::FlagValues().gemm, "Overlap: the GEMM's M,N,K.");
ABSL_FLAG(std::string, overlap_styles, ltx::FlagValues().overlap_styles,
          "Overlap: AllGather styles to compare (sm, sm_budget, copy_engine, nccl).");
ABSL_FLAG(std::string, cublas, ltx::FlagValues().cublas,
          "Overlap: libcublas.so.13 to dlopen; empty = LTX_CUBLAS, then the usual places.");

namespace ltx {
namespace {

// The flag values as the command line set them.
FlagValues ReadFlags() {
  FlagValues f;
  ReadBenchFlags(&f);
  f.overlap = absl::GetFlag(FLAGS_overlap);
  f.max_bytes = absl::GetFlag(FLAGS_max_bytes);
  f.step_factor = absl::GetFlag(FLAGS_step_factor);
  f.dtype = absl::GetFlag(FLAGS_dtype);
  f.hidden = absl::GetFlag(FLAGS_hidden);
  f.split = absl::GetFlag(FLAGS_split);
  f.iters = absl::GetFlag(FLAGS_iters);
  f.one_trip_max_bytes = absl::GetFlag(FLAGS_one_trip_max_bytes);
  f.copy_engine_min_bytes = absl::GetFlag(FLAGS_copy_engine_min_bytes);
  f.timeout = absl::GetFlag(FLAGS_timeout);
  f.check = absl::GetFlag(FLAGS_check);
  f.in_place = absl::GetFlag(FLAGS_in_place);
  f.wire = absl::GetFlag(FLAGS_wire);
  f.gemm = absl::GetFlag(FLAGS_gemm);
  f.overlap_styles = absl::GetFlag(FLAGS_overlap_styles);
  f.cublas = absl::GetFlag(FLAGS_cublas);
  return f;
}

}  // namespace

CommandLineOutcome ParseAllGatherCommandLine(const std::vector<std::string>& args,
                                             ToolConfig* config) {
  return ParseToolSettings(
      args, {"ltx_allgather", AllGatherShortFlags(), AllGatherUsageText()},
      [] { return MakeToolConfig(ReadFlags()); }, config);
}

}  // namespace ltx
