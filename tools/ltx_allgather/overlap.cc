// A GEMM and the AllGather side by side on every GPU, per AllGather style.
#include "tools/ltx_allgather/overlap.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ltx/runtime.h"
#include "ltx/status_macros.h"
#include "tools/bench/bench_table.h"
#include "tools/bench/bench_timing.h"
#include "tools/bench/cublas_paths.h"
#include "tools/bench/gemm_load.h"
#include "tools/bench/nccl_side.h"
#include "tools/ltx_allgather/overlap_timing.h"
#include "tools/testing/allgather_harness.h"
#include "tools/testing/rank_threads.h"
#include "tools/testing/visible_gpus.h"

namespace ltx {
namespace {

// Seeds of the AllGather data and the GEMM operands.
constexpr uint64_t kSeed = 42;
constexpr uint64_t kGemmSeed = 7;

std::string Getenv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// cuBLAS from --cublas, LTX_CUBLAS, the Python wheels or the loader's search.
absl::StatusOr<std::unique_ptr<tools::CublasLibrary>> LoadCublas(const std::string& flag_path) {
  const tools::SiteEnvironment env{Getenv("HOME"), Getenv("VIRTUAL_ENV"), Getenv("CONDA_PREFIX"),
                                   Getenv("PATH")};
  return tools::CublasLibrary::Load(tools::CublasCandidates(
      flag_path, Getenv("LTX_CUBLAS"), tools::GlobDirectories(tools::SitePackagePatterns(env))));
}

// One style's AllGather: its label, its Runtime and call options (ltx styles), and its loop.
struct StyleCollective {
  std::string label;
  std::unique_ptr<Runtime> runtime;  // Null for NCCL.
  CallOptions call;
  CollectiveLoop loop;
};

class OverlapRun {
 public:
  static absl::StatusOr<std::unique_ptr<OverlapRun>> Create(const OverlapConfig& config);
  void PrintHeader() const;
  // Measures one style; the NCCL style needs has_nccl().
  absl::StatusOr<OverlapRow> RunStyle(OverlapStyle style);
  bool has_nccl() const { return nccl_.clique != nullptr; }
  OverlapShape shape() const;

 private:
  explicit OverlapRun(const OverlapConfig& config) : config_(config) {}
  int world() const { return static_cast<int>(devices_.size()); }
  // The style's AllGather over the harness's buffers: a Runtime of its own for the ltx styles
  // (block budget by style), the NCCL clique for kNccl (needs has_nccl()).
  absl::StatusOr<StyleCollective> MakeCollective(OverlapStyle style);
  // Waits for the style's calls and returns their errors.
  absl::Status Finish(const StyleCollective& collective);
  // Fresh inputs, poisoned outputs: what the next calls must reproduce.
  absl::Status Refresh() { return config_.check ? harness_->RefreshInputs() : absl::OkStatus(); }
  // Waits, then 1 if any rank's output is not the expected bytes, else 0.
  absl::StatusOr<int64_t> CountWrong(const StyleCollective& collective);

  const OverlapConfig config_;
  std::vector<int> devices_;
  std::unique_ptr<tools::CublasLibrary> cublas_;
  std::unique_ptr<GemmLoad> gemm_;
  std::unique_ptr<AllGatherHarness> harness_;
  AllGatherCase case_;
  EventPairs events_;
  PairRanks ranks_;
  NcclSide nccl_;
};

absl::StatusOr<std::unique_ptr<OverlapRun>> OverlapRun::Create(const OverlapConfig& config) {
  std::unique_ptr<OverlapRun> run(new OverlapRun(config));
  run->devices_ = config.runtime.devices;
  for (int device = 0; run->devices_.empty() && device < VisibleGpuCount(); ++device) {
    run->devices_.push_back(device);
  }
  LTX_ASSIGN_OR_RETURN(run->cublas_, LoadCublas(config.cublas_path));
  std::fprintf(stderr, "ltx_allgather: GEMM operands ...\n");
  LTX_ASSIGN_OR_RETURN(run->gemm_,
                       GemmLoad::Create(*run->cublas_, run->devices_, config.gemm, kGemmSeed));
  run->case_.dtype = config.dtype;
  run->case_.hidden = config.hidden;
  run->case_.token_counts.assign(run->world(), OverlapTokensPerRank(config));
  run->case_.in_place = config.in_place;
  const int64_t row_bytes = config.hidden * ElementSize(config.dtype);
  const int64_t input_bytes = OverlapTokensPerRank(config) * row_bytes;
  std::fprintf(stderr, "ltx_allgather: AllGather buffers ...\n");
  LTX_ASSIGN_OR_RETURN(run->harness_, AllGatherHarness::Create(run->devices_, input_bytes,
                                                               input_bytes * run->world(), kSeed));
  LTX_RETURN_IF_ERROR(run->harness_->Prepare(run->case_));
  LTX_ASSIGN_OR_RETURN(run->events_, EventPairs::Create(run->devices_));
  run->ranks_.devices = run->devices_;
  run->ranks_.gemm_streams = run->gemm_->streams();
  for (const RankBuffers& b : run->harness_->AllBuffers()) {
    run->ranks_.collective_streams.push_back(b.stream);
  }
  for (OverlapStyle style : config.styles) {
    if (style == OverlapStyle::kNccl) run->nccl_ = LoadNccl(config.nccl_path, run->devices_);
  }
  return run;
}

OverlapShape OverlapRun::shape() const {
  return OverlapShape{harness_->layout().output_bytes, world(), config_.gemm.Flops()};
}

void OverlapRun::PrintHeader() const {
  const TimingPlan& t = config_.timing;
  absl::PrintF(
      "# ltx all_gather overlap: %d GPUs [%s]; on each, GEMM %dx%dx%d (bf16, fp32 accumulate, "
      "cuBLAS %s) on one stream, AllGather of %s per rank (%s, hidden %d, %d tokens per rank; "
      "output %s) on another\n",
      world(), absl::StrJoin(devices_, ","), config_.gemm.m, config_.gemm.n, config_.gemm.k,
      cublas_->path(), FormatBytes(harness_->layout().InputBytes(0)), DataTypeName(config_.dtype),
      config_.hidden, OverlapTokensPerRank(config_), FormatBytes(harness_->layout().output_bytes));
  absl::PrintF(
      "# times: median over %d windows of %d GEMMs (after %d warm-up GEMMs; as many AllGather "
      "calls alone), slowest GPU. A pair window starts both streams together and runs 'calls' "
      "AllGathers beside the %d GEMMs, as many as take as long as the GEMMs alone\n",
      t.windows, t.iterations, t.warmup, t.iterations);
  absl::PrintF(
      "# slower%% = GEMM beside / alone - 1; kept%% = AllGather bandwidth beside / alone; wall%% "
      "= pair wall time / (GEMMs alone + calls alone): 100 = no overlap, 50 = perfect overlap "
      "of two equal parts\n");
  if (nccl_.clique != nullptr) {
    absl::PrintF("# NCCL %s: grouped ncclAllGather from one thread, eager\n", nccl_.version);
  }
  absl::PrintF("%s", OverlapColumnHeader());
  std::fflush(stdout);
}

absl::StatusOr<StyleCollective> OverlapRun::MakeCollective(OverlapStyle style) {
  StyleCollective collective;
  collective.label = OverlapStyleName(style);
  const std::vector<RankBuffers> buffers = harness_->AllBuffers();
  if (style == OverlapStyle::kNccl) {
    std::vector<const void*> inputs;
    std::vector<void*> outputs;
    for (const RankBuffers& b : buffers) {
      inputs.push_back(b.input);
      outputs.push_back(b.output);
    }
    const tools::NcclType type = NcclTypeOf(config_.dtype);
    const size_t count = harness_->layout().InputBytes(0) / tools::NcclTypeSize(type);
    collective.loop.per_rank_threads = false;
    collective.loop.loop = Repeated([this, inputs, outputs, count, type](int) {
      return nccl_.clique->AllGather(inputs, outputs, count, type, ranks_.collective_streams);
    });
    return collective;
  }
  RuntimeOptions options = config_.runtime;
  options.devices = devices_;
  options.max_blocks = style == OverlapStyle::kSmBudget ? config_.block_budget : 0;
  if (style == OverlapStyle::kSmBudget) {
    absl::StrAppend(&collective.label, "(", options.max_blocks, ")");
  }
  LTX_ASSIGN_OR_RETURN(collective.runtime, Runtime::Create(options));
  collective.call.protocol =
      style == OverlapStyle::kCopyEngine ? Protocol::kCopyEngine : Protocol::kDirect;
  Runtime* runtime = collective.runtime.get();
  const CallOptions call = collective.call;
  const AllGatherShape shape = case_.Shape();
  collective.loop.loop = Repeated([runtime, shape, buffers, call](int rank) {
    return runtime->AllGatherRank(rank, shape, buffers[rank], call);
  });
  return collective;
}

absl::Status OverlapRun::Finish(const StyleCollective& collective) {
  if (collective.runtime != nullptr) {
    LTX_RETURN_IF_ERROR(collective.runtime->Synchronize(config_.host_wait));
  }
  return harness_->SynchronizeStreams();
}

absl::StatusOr<int64_t> OverlapRun::CountWrong(const StyleCollective& collective) {
  LTX_RETURN_IF_ERROR(Finish(collective));
  if (!config_.check) return 0;
  const absl::Status verified = harness_->Verify();
  if (verified.ok()) return 0;
  absl::PrintF("# %s: wrong output: %s\n", collective.label, verified.ToString());
  return 1;
}

absl::StatusOr<OverlapRow> OverlapRun::RunStyle(OverlapStyle style) {
  LTX_ASSIGN_OR_RETURN(const StyleCollective collective, MakeCollective(style));
  const CollectiveLoop& loop = collective.loop;
  std::fprintf(stderr, "ltx_allgather: %s ...\n", collective.label.c_str());
  OverlapRow row;
  row.style = collective.label;
  LTX_RETURN_IF_ERROR(Refresh());
  LTX_RETURN_IF_ERROR(loop.per_rank_threads
                          ? RunOnRankThreads(world(), [&](int rank) { return loop.loop(rank, 1); })
                          : loop.loop(-1, 1));
  LTX_ASSIGN_OR_RETURN(row.wrong, CountWrong(collective));
  const TimingPlan& plan = config_.timing;
  TimedRanks alone{devices_, ranks_.gemm_streams, &events_};
  LTX_ASSIGN_OR_RETURN(const Measured gemm,
                       Measure(plan, /*per_rank_threads=*/true, alone, gemm_->Loop(), 1));
  alone.streams = ranks_.collective_streams;
  LTX_ASSIGN_OR_RETURN(const Measured gathered,
                       Measure(plan, loop.per_rank_threads, alone, loop.loop, 1));
  LTX_RETURN_IF_ERROR(Finish(collective));
  const int calls = MatchingCalls(plan.iterations, gemm.device_us, gathered.device_us);
  LTX_RETURN_IF_ERROR(Refresh());
  LTX_ASSIGN_OR_RETURN(const PairTimes pair, MeasurePair(plan, ranks_, gemm_->Loop(), loop, calls));
  LTX_ASSIGN_OR_RETURN(const int64_t wrong_after, CountWrong(collective));
  row.wrong += wrong_after;
  row.gemm_alone_us = gemm.device_us;
  row.collective_alone_us = gathered.device_us;
  row.gemm_beside_us = pair.gemm_us;
  row.collective_beside_us = pair.collective_us;
  row.pair_us = pair.wall_us;
  row.gemm_calls = pair.gemm_calls;
  row.collective_calls = pair.collective_calls;
  return row;
}

}  // namespace

absl::StatusOr<std::vector<OverlapRow>> RunOverlap(const OverlapConfig& config) {
  LTX_RETURN_IF_ERROR(ValidateOverlapConfig(config));
  LTX_ASSIGN_OR_RETURN(std::unique_ptr<OverlapRun> run, OverlapRun::Create(config));
  run->PrintHeader();
  std::vector<OverlapRow> rows;
  for (OverlapStyle style : config.styles) {
    if (style == OverlapStyle::kNccl && !run->has_nccl()) {
      absl::PrintF("  %-14s | skipped: no NCCL loaded\n", OverlapStyleName(style));
      continue;
    }
    absl::StatusOr<OverlapRow> row = run->RunStyle(style);
    if (!row.ok()) return row.status();
    absl::PrintF("%s", FormatOverlapRow(*row, run->shape()));
    std::fflush(stdout);
    rows.push_back(*std::move(row));
  }
  return rows;
}

}  // namespace ltx
