// ltx_alltoall's flags, usage text and the parse of its command line.
#include "tools/ltx_alltoall/alltoall_flags.h"

#include <cstdint>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "tools/bench/bench_flags.h"

// The flags of ltx_alltoall alone, with the defaults of ltx::AllToAllFlagValues (those both
// tools take are tools/bench/bench_flags.cc's); --help (AllToAllUsageText) describes them all
// for people, with their short forms.
ABSL_FLAG(bool, smoke, ltx::AllToAllFlagValues().smoke,
          "Run the smoke test (the default when neither --bench nor --breakdown is given).");
ABSL_FLAG(std::string, max_bytes, ltx::AllToAllFlagValues().max_bytes,
          "-e: largest size, output bytes per rank (K/M/G); empty = 256M.");
ABSL_FLAG(double, step_factor, ltx::AllToAllFlagValues().step_factor,
          "-f: factor between successive sizes; 0 = 4.");
ABSL_FLAG(int64_t, heads, ltx::AllToAllFlagValues().heads, "Sweep and breakdown: heads.");
ABSL_FLAG(int64_t, head_dim, ltx::AllToAllFlagValues().head_dim, "Sweep and breakdown: head_dim.");
ABSL_FLAG(std::string, head_counts, ltx::AllToAllFlagValues().head_counts,
          "Heads per rank, one per rank; empty = the even split.");
ABSL_FLAG(std::string, direction, ltx::AllToAllFlagValues().direction,
          "seq_to_heads, heads_to_seq or both.");
ABSL_FLAG(std::string, dtype, ltx::AllToAllFlagValues().dtype, "-d: element type.");
ABSL_FLAG(int, iters, ltx::AllToAllFlagValues().iters, "-n: calls per timed window.");
ABSL_FLAG(std::string, wire, ltx::AllToAllFlagValues().wire,
          "Benchmark: native or fp8_e4m3 (head vectors as e4m3 codes with a scale).");

namespace ltx {
namespace {

// The flag values as the command line set them.
AllToAllFlagValues ReadFlags() {
  AllToAllFlagValues f;
  f.smoke = absl::GetFlag(FLAGS_smoke);
  ReadBenchFlags(&f);
  f.max_bytes = absl::GetFlag(FLAGS_max_bytes);
  f.step_factor = absl::GetFlag(FLAGS_step_factor);
  f.heads = absl::GetFlag(FLAGS_heads);
  f.head_dim = absl::GetFlag(FLAGS_head_dim);
  f.head_counts = absl::GetFlag(FLAGS_head_counts);
  f.direction = absl::GetFlag(FLAGS_direction);
  f.dtype = absl::GetFlag(FLAGS_dtype);
  f.iters = absl::GetFlag(FLAGS_iters);
  f.wire = absl::GetFlag(FLAGS_wire);
  return f;
}

}  // namespace

CommandLineOutcome ParseAllToAllCommandLine(const std::vector<std::string>& args,
                                            AllToAllToolConfig* config) {
  return ParseToolSettings(
      args, {"ltx_alltoall", kSweepShortFlags, AllToAllUsageText()},
      [] { return MakeAllToAllToolConfig(ReadFlags()); }, config);
}

std::string AllToAllUsageText() {
  return R"(ltx_alltoall: the Ulysses all-to-all (sequence <-> heads) across the GPUs of this node.

  ltx_alltoall [FLAGS]            smoke run: both directions, every dtype, odd shapes, uneven
                                  and zero counts, an uneven head split (also with FP8 on the
                                  wire), both call styles, each verified byte-exact against the
                                  reference with its round trip; ends with PASS or FAIL
  ltx_alltoall --bench [FLAGS]    the model shapes (or a sweep with -b/-e/-f), ltx on each
                                  --protocol beside NCCL three ways, each with its permute:
                                  plain (grouped send/recv), window (n/a: not for send/recv),
                                  ce (ncclAlltoAll on the copy engines, NCCL 2.28+); the best
                                  of them and ltx's speedup over it
  ltx_alltoall --breakdown [FLAGS]
                                  where an all-to-all's time goes: each phase of the one-trip or
                                  the direct kernel per rank and block count, graph and eager
  --smoke adds the smoke run before --bench or --breakdown.

Flags (short forms as in nccl-tests; "-b 1M", "-b1M", "-b=1M" and "--min_bytes=1M" are the same):
  GPUs and runtime
    -g, --gpus=N                 use GPUs 0..N-1 (default 0: every visible GPU)
        --devices=3,1            CUDA device ordinals in rank order, 1 to 8 (instead of -g);
                                 a GPU may repeat: its ranks share it (e.g. 0,0,0,0)
        --transport=NAME         auto | peer_stores | copy_engine (default auto)
        --max_blocks=N           cap on thread blocks per rank (default 0: one per SM, fewer
                                 where ranks share a GPU)
  Every run
    -d, --dtype=NAME             bf16 fp16 fp32 fp8_e4m3 fp8_e5m2 int8 uint8 int16 uint16
                                 int32 uint32 int64 uint64 fp64 bool complex64 complex128
                                 (default bf16; the smoke run runs every dtype)
        --direction=NAME         seq_to_heads | heads_to_seq | both (default both; the smoke
                                 run runs both)
        --head_counts=LIST       heads per rank, one per rank, summing to the shapes' heads
                                 (default: the even split; smoke run: its own uneven split)
  Benchmark (--bench)
    -b, --min_bytes=SIZE         smallest size of a sweep in output bytes per rank (nccl-tests'
                                 size: one rank's output, here the whole sequence over its heads
                                 or its tokens over all heads), with K/M/G suffixes (default:
                                 no sweep, the model shapes 15360x32x128, 32640x32x128,
                                 6144x32x64, 1024x32x128 in tokens x heads x head_dim)
    -e, --max_bytes=SIZE         largest size, output bytes per rank (default 256M; needs -b)
    -f, --step_factor=F          factor between sizes (default 4; needs -b)
        --heads=N                heads of the sweep's shapes (default 32)
        --head_dim=N             head_dim of the sweep's shapes (default 128)
        --protocol=LIST          auto | direct | one_trip | copy_engine, comma-separated: one row
                                 each per shape (default auto)
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
                                 best); empty: none
                                 (default libnccl.so.2)
        --json=FILE              also write every figure to FILE
        --tensors=N              tensors of the shape each timed call moves in one op, 1 to 4
                                 (default 1); above 1 also N calls of one tensor each and the
                                 ratio op/calls; --protocol auto or direct only
        --wire=NAME              native | fp8_e4m3: ltx's calls move each head vector a rank
                                 sends to a peer as e4m3 codes with a scale (bf16 and fp16,
                                 --head_dim >= 8, --protocol auto or direct; NCCL's columns
                                 move the native bytes) (default native)
  Breakdown (--breakdown)
    -b, --min_bytes=SIZE         bytes per rank (default 8K)
        --protocol=NAME          one_trip | direct | auto (one_trip up to 512K per rank, direct
                                 above; default auto)
        --breakdown_blocks=LIST  block counts to compare, 0 = automatic (default 0,1,2,4)
    -n, -w, --windows, -d, --heads, --head_dim, --direction, --max_blocks as above
  -h, --help                     this text

Exit codes: 0 pass; 1 a failure (a wrong result or an error while running); 2 nothing ran
(a bad command line, or no GPU visible).

Examples:
  ltx_alltoall
  ltx_alltoall --devices=0,0,0,0
  ltx_alltoall --bench -b 1M -e 256M -f 4
  ltx_alltoall --bench -b 8K -e 1M -f 2 --protocol direct,one_trip,copy_engine
  ltx_alltoall --bench --head_counts 6,10,6,10
  ltx_alltoall --bench -b 8K -e 16M -f 4 --tensors 3
  ltx_alltoall --bench -b 1M -e 256M -f 4 --wire fp8_e4m3
  ltx_alltoall --bench --style=graph --json=alltoall.json
  ltx_alltoall --breakdown -b 4M --breakdown_blocks 0,32,64 --direction seq_to_heads
)";
}

}  // namespace ltx
