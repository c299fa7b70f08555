// The short flags and the usage text of ltx_allgather.
#include "tools/ltx_allgather/command_line.h"

namespace ltx {
namespace {

constexpr ShortFlag kShortFlags[] = {
    {'b', "min_bytes"}, {'e', "max_bytes"}, {'f', "step_factor"}, {'n', "iters"},   {'w', "warmup"},
    {'c', "check"},     {'d', "dtype"},     {'g', "gpus"},        {'T', "timeout"},
};

}  // namespace

absl::Span<const ShortFlag> AllGatherShortFlags() { return kShortFlags; }

std::string AllGatherUsageText() {
  return R"(ltx_allgather: AllGather over NVLink peer-to-peer stores across the GPUs of this node.

  ltx_allgather [FLAGS]           smoke run: shapes and dtypes in both call styles (16-bit
                                  rows with FP8 on the wire too), each verified byte-exact
                                  against the reference on every GPU; ends with PASS or FAIL
  ltx_allgather --bench [FLAGS]   size sweep in the layout of nccl-tests, against the launch
                                  floor of an empty kernel, with NCCL side by side three ways
                                  (plain buffers, symmetric windows, copy-engine collectives;
                                  n/a with the reason where the loaded NCCL cannot), the best
                                  of them and ltx's speedup over it
  ltx_allgather --overlap [FLAGS] a cuBLAS bf16 GEMM and the AllGather on two streams of every
                                  GPU at once, per AllGather style, against each alone: GEMM
                                  slowdown and AllGather bandwidth kept
  ltx_allgather --breakdown [FLAGS]
                                  where an AllGather's time goes: each phase of the one-trip or
                                  the direct kernel per GPU (timed instantiation, %globaltimer),
                                  graph and eager, per block count; one-trip: host cost per step
                                  of a call

Flags (short forms as in nccl-tests; "-b 16K", "-b16K", "-b=16K" and "--min_bytes=16K" are the
same):
  GPUs and runtime
    -g, --gpus=N                 use GPUs 0..N-1 (default 0: every visible GPU)
        --devices=3,1            CUDA device ordinals in rank order, 1 to 8 (instead of -g);
                                 a GPU may repeat: its ranks share it (e.g. 0,0,0,0)
        --transport=NAME         auto | peer_stores | copy_engine (default auto)
        --max_blocks=N           cap on thread blocks per rank (default 0: one per SM, fewer
                                 where ranks share a GPU)
        --one_trip_max_bytes=N   largest shard the automatic protocol sends one-trip, at most
                                 524288 (default -1: by world size, 512K on 2 GPUs, 256K on 4)
        --copy_engine_min_bytes=N  smallest shard an eager automatic call moves by the copy
                                 engines (default 33554432; 0: never)
    -T, --timeout=DURATION       how long a GPU waits for its peers, e.g. 10s or 500ms; -T takes
                                 seconds (default 10s); the host waits at most 3 times as long
  Every call
    -d, --dtype=NAME             bf16 fp16 fp32 fp8_e4m3 fp8_e5m2 int8 uint8 int16 uint16
                                 int32 uint32 int64 uint64 fp64 bool complex64 complex128
                                 (benchmark default bf16; smoke run default: every dtype)
        --protocol=NAME          auto | direct | one_trip | copy_engine (default auto)
        --blocks=N               thread blocks per rank per call (default 0: by size)
  Benchmark (--bench)
    -b, --min_bytes=SIZE         smallest size in output bytes per rank (nccl-tests' size: one
                                 rank's output, here the whole gathered sequence), with K/M/G
                                 suffixes (default 32K: 8K of input per rank on 4 GPUs)
    -e, --max_bytes=SIZE         largest size, output bytes per rank (default 1G)
    -f, --step_factor=F          factor between sizes (default 8)
    -n, --iters=N                calls per timed window (default 100)
    -w, --warmup=N               warm-up calls (default 20)
        --windows=N              timed windows; the median is reported (default 5)
    -c, --check=0|1              verify every row byte-exact (default 1; also --nocheck)
        --style=NAME             rank (per-rank calls, one thread per GPU) | coordinated (one
                                 call for all ranks) | graph (CUDA graph replay) |
                                 rank_one_thread (every rank's per-rank call from one thread)
                                 (default rank)
                                 graph: 20 calls a graph, -n and -w rounded down to whole
                                 graphs (at least one per window)
        --hidden=N               elements per token row (default 4096)
        --split=NAME             even | uneven | zeros: tokens per rank (default even)
        --in_place               every rank's input inside its own output (NCCL's plain mode
                                 in place too; window and ce stay out of place)
        --wire=NAME              native | fp8_e4m3: rows as e4m3 codes with a scale per row
                                 (bf16 and fp16; NCCL's columns move the native rows)
                                 (default native)
        --nccl=PATH              libnccl to dlopen for the NCCL columns (plain, window, ce,
                                 best); empty: none (default libnccl.so.2)
        --json=FILE              also write every figure to FILE
        --tensors=N              tensors of the shape each timed call moves in one op, 1 to 4
                                 (default 1); above 1 also N calls of one tensor each and the
                                 ratio op/calls; --protocol auto or direct only
  Overlap (--overlap)
    -b, --min_bytes=SIZE         AllGather input per rank (default 64M)
        --gemm=M,N,K             the GEMM on every GPU, bf16 with fp32 accumulation (default
                                 8192,8192,8192)
        --overlap_styles=LIST    AllGather styles, in order: sm (kernels, direct), sm_budget
                                 (kernels under --max_blocks, default 16), copy_engine (no SMs
                                 but the own shard's copy; none --in_place), nccl (default
                                 sm,sm_budget,copy_engine,nccl)
        --cublas=PATH            libcublas.so.13 to dlopen (default: $LTX_CUBLAS, then PyTorch's
                                 wheels under python3's site-packages, then the loader's search)
    -n, -w, --windows, -d, --hidden, --nccl, -c, --in_place as above; -n and -w count GEMMs
  Breakdown (--breakdown)
    -b, --min_bytes=SIZE         bytes per rank (default 8K; one-trip: at most 512K)
        --protocol=NAME          one_trip | direct | auto (one_trip up to 512K per rank, direct
                                 above; default auto)
        --breakdown_blocks=LIST  block counts to compare, 0 = automatic (default 0,1,2,4)
    -n, -w, --windows, -d, --hidden, --max_blocks, -c, --in_place as above
  -h, --help                     this text

Exit codes: 0 pass; 1 a failure (a wrong result or an error while running); 2 nothing ran
(a bad command line, or no GPU visible).

Examples:
  ltx_allgather
  ltx_allgather -g 2 -d fp16 --protocol=one_trip --blocks=8
  ltx_allgather --bench -b 8K -e 4M -f 8 -n 100 -w 20
  ltx_allgather --bench --style=graph -b 32K -e 1G -f 8 --json=graph.json
  ltx_allgather --bench -b 32K -e 64M -f 4 --tensors 3
  ltx_allgather --overlap -b 64M --gemm=8192,8192,8192 --max_blocks=16
  ltx_allgather --breakdown -b 8K --breakdown_blocks=0,1,2,4 -n 100 --windows 5
  ltx_allgather --breakdown --protocol=direct -b 4M --breakdown_blocks=0,32,64
)";
}

}  // namespace ltx
