// ltx_allreduce's flags, usage text and the parse of its command line.
#include "tools/ltx_allreduce/allreduce_flags.h"

#include <cstdint>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "tools/bench/bench_flags.h"

// The flags of ltx_allreduce alone, with the defaults of ltx::AllReduceFlagValues (those every
// tool takes are tools/bench/bench_flags.cc's); --help (AllReduceUsageText) describes them all
// for people, with their short forms.
ABSL_FLAG(bool, smoke, ltx::AllReduceFlagValues().smoke,
          "Run the smoke test (the default without --bench).");
ABSL_FLAG(std::string, max_bytes, ltx::AllReduceFlagValues().max_bytes,
          "-e: largest size, input bytes per rank (K/M/G); empty = 256M.");
ABSL_FLAG(double, step_factor, ltx::AllReduceFlagValues().step_factor,
          "-f: factor between successive sizes; 0 = 2.");
ABSL_FLAG(std::string, op, ltx::AllReduceFlagValues().op,
          "allreduce, reduce_scatter or allreduce_rmsnorm.");
ABSL_FLAG(std::string, dtype, ltx::AllReduceFlagValues().dtype, "-d: bf16, fp16 or fp32.");
ABSL_FLAG(std::string, reduction, ltx::AllReduceFlagValues().reduction, "sum, max or min.");
ABSL_FLAG(std::string, path, ltx::AllReduceFlagValues().path,
          "The AllReduce's path: auto, one_shot, two_shot or both.");
ABSL_FLAG(int64_t, hidden, ltx::AllReduceFlagValues().hidden,
          "--op allreduce_rmsnorm: elements per row; 0 = 4096.");
ABSL_FLAG(int, iters, ltx::AllReduceFlagValues().iters, "-n: calls per timed window.");

namespace ltx {
namespace {

// The flag values as the command line set them.
AllReduceFlagValues ReadFlags() {
  AllReduceFlagValues f;
  f.smoke = absl::GetFlag(FLAGS_smoke);
  ReadBenchFlags(&f);
  f.max_bytes = absl::GetFlag(FLAGS_max_bytes);
  f.step_factor = absl::GetFlag(FLAGS_step_factor);
  f.op = absl::GetFlag(FLAGS_op);
  f.dtype = absl::GetFlag(FLAGS_dtype);
  f.reduction = absl::GetFlag(FLAGS_reduction);
  f.path = absl::GetFlag(FLAGS_path);
  f.hidden = absl::GetFlag(FLAGS_hidden);
  f.iters = absl::GetFlag(FLAGS_iters);
  return f;
}

}  // namespace

CommandLineOutcome ParseAllReduceCommandLine(const std::vector<std::string>& args,
                                             AllReduceToolConfig* config) {
  return ParseToolSettings(
      args, {"ltx_allreduce", kSweepShortFlags, AllReduceUsageText()},
      [] { return MakeAllReduceToolConfig(ReadFlags()); }, config);
}

std::string AllReduceUsageText() {
  return R"(ltx_allreduce: the AllReduce and the ReduceScatter across the GPUs of this node.

  ltx_allreduce [FLAGS]           smoke run: one AllReduce and one ReduceScatter per dtype
                                  (bf16, fp16, fp32) and reduction (sum, max, min), odd counts,
                                  uneven and zero token counts, and the AllReduce with the fused
                                  RMSNorm in each dtype; random data, every rank's outputs
                                  checked bit for bit against a host reference in rank order;
                                  ends with PASS or FAIL
  ltx_allreduce --bench [FLAGS]   a sweep of sizes, ltx beside NCCL three ways: plain
                                  (cudaMalloc buffers), window (symmetric windows, NCCL 2.27+),
                                  ce (n/a: NCCL has no copy-engine reductions); the best of
                                  them and ltx's speedup over it
  --smoke adds the smoke run before --bench.

Flags (short forms as in nccl-tests; "-b 1M", "-b1M", "-b=1M" and "--min_bytes=1M" are the same):
  GPUs and runtime
    -g, --gpus=N                 use GPUs 0..N-1 (default 0: every visible GPU)
        --devices=3,1            CUDA device ordinals in rank order, 1 to 8 (instead of -g);
                                 a GPU may repeat: its ranks share it (e.g. 0,0,0,0)
        --max_blocks=N           cap on thread blocks per rank (default 0: one per SM, fewer
                                 where ranks share a GPU)
  Benchmark (--bench)
        --op=NAME                allreduce | reduce_scatter | allreduce_rmsnorm (the AllReduce
                                 with the fused residual-add + RMSNorm, beside ltx's AllReduce
                                 alone and followed by the RMSNorm as a kernel of its own;
                                 NCCL's columns are its AllReduce alone) (default allreduce)
        --hidden=N               --op allreduce_rmsnorm: elements per row (default 4096)
    -d, --dtype=NAME             bf16 | fp16 | fp32 (default bf16)
        --reduction=NAME         sum | max | min (default sum)
        --path=NAME              auto | one_shot | two_shot | both: the AllReduce's path
                                 (auto: the Runtime's threshold, two_shot_min_bytes; both:
                                 one row each per size, NCCL timed once) (default auto;
                                 --op reduce_scatter takes auto only)
    -b, --min_bytes=SIZE         smallest size, input bytes per rank (nccl-tests' size: the
                                 AllReduce's count, the ReduceScatter's whole input), with
                                 K/M/G suffixes (default 8K)
    -e, --max_bytes=SIZE         largest size, input bytes per rank (default 256M)
    -f, --step_factor=F          factor between sizes (default 2)
        --blocks=N               thread blocks per rank per call (default 0: by size)
    -n, --iters=N                calls per timed window (default 50)
    -w, --warmup=N               warm-up calls (default 20)
        --windows=N              timed windows; the median is reported (default 5)
        --style=NAME             rank (per-rank calls, one thread per GPU) | coordinated (one
                                 call for all ranks) | graph (CUDA graph replay, NCCL's calls
                                 too) | rank_one_thread (every rank's per-rank call from one
                                 thread) (default rank)
                                 graph: 20 calls a graph, -n and -w rounded down to whole
                                 graphs (at least one per window)
        --nccl=PATH              libnccl to dlopen for the NCCL columns (plain, window, ce,
                                 best); empty: none (default libnccl.so.2)
        --json=FILE              also write every figure to FILE
  -h, --help                     this text

Exit codes: 0 pass; 1 a failure (a wrong result or an error while running); 2 nothing ran
(a bad command line, or no GPU visible).

Examples:
  ltx_allreduce
  ltx_allreduce --devices=0,0,0,0
  ltx_allreduce --bench -b 8K -e 256M -f 2
  ltx_allreduce --bench --op reduce_scatter -d fp32 --reduction max
  ltx_allreduce --bench -b 64K -e 16M --path both
  ltx_allreduce --bench --style=graph --json=allreduce.json
  ltx_allreduce --bench --op allreduce_rmsnorm --hidden 8192 -b 16K -e 4M
)";
}

}  // namespace ltx
