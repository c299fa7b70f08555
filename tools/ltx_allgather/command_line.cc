// Short-flag translation, help and flag checks of ltx_allgather's command line.
#include "tools/ltx_allgather/command_line.h"

#include <algorithm>
#include <cctype>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace ltx {
namespace {

// The short flags of nccl-tests that ltx_allgather takes, and the long flag each stands for.
struct ShortFlag {
  char letter;
  const char* long_name;
};
constexpr ShortFlag kShortFlags[] = {
    {'b', "min_bytes"}, {'e', "max_bytes"}, {'f', "step_factor"}, {'n', "iters"},   {'w', "warmup"},
    {'c', "check"},     {'d', "dtype"},     {'g', "gpus"},        {'T', "timeout"},
};

const ShortFlag* FindShortFlag(char letter) {
  for (const ShortFlag& flag : kShortFlags) {
    if (flag.letter == letter) return &flag;
  }
  return nullptr;
}

// The long form of short flag `flag` with `value`.
absl::StatusOr<std::string> LongForm(const ShortFlag& flag, const std::string& value) {
  if (flag.letter == 'c') {
    if (value == "0" || value == "false") return std::string("--check=false");
    if (value == "1" || value == "true") return std::string("--check=true");
    return absl::InvalidArgumentError(
        absl::StrFormat("-c %s: expected 0 or 1 (check the results or not)", value));
  }
  double seconds = 0;
  if (flag.letter == 'T' && absl::SimpleAtod(value, &seconds)) {
    return absl::StrCat("--timeout=", value, "s");
  }
  return absl::StrCat("--", flag.long_name, "=", value);
}

// True for an argument that is a negative number (a value, not a flag).
bool IsNegativeNumber(absl::string_view arg) {
  return arg.size() >= 2 && arg[0] == '-' &&
         (std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.');
}

// Checks one flag argument args[*i] (and its value in args[*i + 1], which it then skips).
absl::Status CheckFlag(const std::vector<std::string>& args, size_t* i) {
  absl::string_view arg = args[*i];
  arg.remove_prefix(absl::StartsWith(arg, "--") ? 2 : 1);
  const size_t equals = arg.find('=');
  const absl::string_view name = arg.substr(0, equals);
  const bool has_value = equals != absl::string_view::npos;
  absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  if (flag == nullptr && absl::StartsWith(name, "no") && !has_value) {
    absl::CommandLineFlag* negated = absl::FindCommandLineFlag(name.substr(2));
    if (negated != nullptr && negated->IsOfType<bool>()) return absl::OkStatus();
  }
  if (flag == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("unknown flag '%s'; --help lists the flags", args[*i]));
  }
  if (!has_value && flag->IsOfType<bool>()) return absl::OkStatus();
  std::string value;
  if (has_value) {
    value = std::string(arg.substr(equals + 1));
  } else if (*i + 1 < args.size()) {
    value = args[++*i];
  } else {
    return absl::InvalidArgumentError(absl::StrFormat("--%s needs a value", name));
  }
  std::string error;
  if (!flag->ParseFrom(value, &error)) {
    return absl::InvalidArgumentError(absl::StrFormat("--%s=%s: %s", name, value, error));
  }
  return absl::OkStatus();
}

}  // namespace

bool WantsHelp(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "-help" || arg == "--help" || arg == "--helpfull" ||
        arg == "--helpshort") {
      return true;
    }
  }
  return false;
}

absl::StatusOr<std::vector<std::string>> TranslateShortFlags(const std::vector<std::string>& args) {
  std::vector<std::string> out(args.begin(), args.begin() + std::min<size_t>(1, args.size()));
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      out.insert(out.end(), args.begin() + i, args.end());
      break;
    }
    const ShortFlag* flag = arg.size() >= 2 && arg[0] == '-' ? FindShortFlag(arg[1]) : nullptr;
    const std::string rest = flag != nullptr ? arg.substr(2) : std::string();
    if (flag == nullptr) {
      out.push_back(arg);
      continue;
    }
    std::string value;
    if (rest.empty()) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("-%c needs a value (-%c VALUE is --%s=VALUE)", flag->letter,
                            flag->letter, flag->long_name));
      }
      value = args[++i];
    } else if (rest[0] == '=') {
      value = rest.substr(1);
    } else if (std::isdigit(static_cast<unsigned char>(rest[0])) || rest[0] == '.') {
      value = rest;
    } else {
      out.push_back(arg);  // A long flag with one dash, e.g. -dtype=bf16.
      continue;
    }
    absl::StatusOr<std::string> long_form = LongForm(*flag, value);
    if (!long_form.ok()) return long_form.status();
    out.push_back(*std::move(long_form));
  }
  return out;
}

absl::Status CheckFlags(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 2 || arg[0] != '-' || IsNegativeNumber(arg)) continue;
    absl::Status status = CheckFlag(args, &i);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

std::string UsageText() {
  return R"(ltx_allgather: AllGather over NVLink peer-to-peer stores across the GPUs of this node.

  ltx_allgather [FLAGS]           smoke run: shapes and dtypes in both call styles, each
                                  verified byte-exact on every GPU; ends with PASS or FAIL
  ltx_allgather --bench [FLAGS]   size sweep in the layout of nccl-tests, against the launch
                                  floor of an empty kernel, with NCCL side by side
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
        --devices=3,1            CUDA device ordinals in rank order (instead of -g)
        --transport=NAME         auto | peer_stores | copy_engine (default auto)
        --max_blocks=N           cap on thread blocks per rank (default 0: one per SM)
        --one_trip_max_bytes=N   largest shard the automatic protocol sends one-trip, at most
                                 524288 (default -1: by world size, 512K on 2 GPUs, 256K on 4)
        --copy_engine_min_bytes=N  smallest shard an eager automatic call moves by the copy
                                 engines (default 33554432; 0: never)
    -T, --timeout=DURATION       how long a GPU waits for its peers, e.g. 10s or 500ms; -T takes
                                 seconds (default 10s); the host waits at most 3 times as long
  Every call
    -d, --dtype=NAME             bf16 | fp16 | fp32 | fp8_e4m3 | fp8_e5m2 | int8 | uint8
                                 (benchmark default bf16; smoke run default: every dtype)
        --protocol=NAME          auto | direct | one_trip | copy_engine (default auto)
        --blocks=N               thread blocks per rank per call (default 0: by size)
  Benchmark (--bench)
    -b, --min_bytes=SIZE         smallest size, total output bytes as nccl-tests counts them,
                                 with K/M/G suffixes (default 32K: 8K per rank on 4 GPUs)
    -e, --max_bytes=SIZE         largest size (default 1G)
    -f, --step_factor=F          factor between sizes (default 8)
    -n, --iters=N                calls per timed window (default 100)
    -w, --warmup=N               warm-up calls (default 20)
        --windows=N              timed windows; the median is reported (default 5)
    -c, --check=0|1              verify every row byte-exact (default 1; also --nocheck)
        --style=NAME             rank (per-rank calls, one thread per GPU) | coordinated (one
                                 call for all ranks) | graph (CUDA graph replay) |
                                 rank_one_thread (every rank's per-rank call from one thread)
                                 (default rank)
        --hidden=N               elements per token row (default 4096)
        --split=NAME             even | uneven | zeros: tokens per rank (default even)
        --in_place               every rank's input inside its own output (NCCL in place too)
        --nccl=PATH              libnccl to dlopen for the NCCL columns; empty: none
                                 (default libnccl.so.2)
        --json=FILE              also write every figure to FILE
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
  ltx_allgather --overlap -b 64M --gemm=8192,8192,8192 --max_blocks=16
  ltx_allgather --breakdown -b 8K --breakdown_blocks=0,1,2,4 -n 100 --windows 5
  ltx_allgather --breakdown --protocol=direct -b 4M --breakdown_blocks=0,32,64
)";
}

}  // namespace ltx
