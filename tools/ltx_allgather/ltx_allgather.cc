// ltx_allgather: the command-line tool of ltx.
//
//   ltx_allgather                  smoke run on every visible GPU: a handful of shapes and
//                                  dtypes in both call styles, each verified byte-exact;
//                                  prints a table and PASS/FAIL (exit 0/1; 2 without GPUs).
//   ltx_allgather --bench          nccl-tests-style size sweep with NCCL side by side.
//   ltx_allgather --help           every flag.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "ltx/runtime.h"
#include "tools/allgather_harness.h"
#include "tools/benchmark.h"

ABSL_FLAG(std::string, devices, "",
          "Comma-separated CUDA device ordinals in rank order, e.g. 3,1. Default: all visible.");
ABSL_FLAG(bool, bench, false, "Run the benchmark sweep instead of the smoke run.");
ABSL_FLAG(std::string, b, "32K",
          "Benchmark: smallest size, in total output bytes as nccl-tests counts it (K/M/G "
          "suffixes). 32K on 4 GPUs is 8 KB per rank.");
ABSL_FLAG(std::string, e, "1G", "Benchmark: largest size in total output bytes (K/M/G).");
ABSL_FLAG(double, f, 8, "Benchmark: factor between successive sizes.");
ABSL_FLAG(std::string, dtype, "bf16", "Element type: bf16, fp16, fp32, fp8_e4m3, fp8_e5m2, int8, uint8.");
ABSL_FLAG(int64_t, hidden, 4096, "Benchmark: elements per token row.");
ABSL_FLAG(std::string, split, "even",
          "Benchmark: how tokens are split over ranks: even, uneven (counts grow with the "
          "rank) or zeros (every other rank has none). NCCL always runs an even split.");
ABSL_FLAG(std::string, style, "rank",
          "Benchmark call style: rank (AllGatherRank from one thread per GPU), coordinated "
          "(Runtime::AllGather from one thread) or graph (per-rank calls captured in CUDA graphs "
          "and replayed).");
ABSL_FLAG(int, warmup, 20, "Benchmark: warm-up calls before timing.");
ABSL_FLAG(int, iters, 100, "Benchmark: calls per timed window.");
ABSL_FLAG(int, windows, 5, "Benchmark: timed windows; the median is reported.");
ABSL_FLAG(int, blocks, 0, "Thread blocks per rank for each call; 0 = automatic by size.");
ABSL_FLAG(int, max_blocks, 0, "Cap on thread blocks per rank (SM budget); 0 = one per SM.");
ABSL_FLAG(std::string, protocol, "auto",
          "Benchmark: auto (one-trip for small messages, copy engines for large eager ones, "
          "direct otherwise), direct, one_trip or copy_engine.");
ABSL_FLAG(int64_t, one_trip_max_bytes, ltx::RuntimeOptions().one_trip_max_bytes,
          "Largest per-rank message the automatic protocol sends one-trip (at most 524288); -1 = "
          "by world size (512K on 2 GPUs, 256K on 4).");
ABSL_FLAG(int64_t, copy_engine_min_bytes, ltx::RuntimeOptions().copy_engine_min_bytes,
          "Smallest per-rank message the automatic protocol moves by the copy engines when the "
          "call is not captured into a graph; 0 = never.");
ABSL_FLAG(std::string, transport, "auto",
          "auto (peer stores where every pair has peer access, else copy engines), peer_stores "
          "or copy_engine (cudaMemcpyPeerAsync, for GPUs without peer access).");
ABSL_FLAG(bool, check, true, "Benchmark: verify every row byte-exact (--nocheck to skip).");
ABSL_FLAG(std::string, nccl, "libnccl.so.2",
          "Benchmark: NCCL library to load with dlopen for the side-by-side columns; empty to "
          "skip NCCL.");
ABSL_FLAG(std::string, json, "", "Benchmark: also write every figure to this JSON file.");

namespace ltx {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitNoGpu = 2;

absl::StatusOr<int64_t> ParseBytes(const std::string& text) {
  int64_t scale = 1;
  std::string digits = text;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K': case 'k': scale = int64_t{1} << 10; break;
      case 'M': case 'm': scale = int64_t{1} << 20; break;
      case 'G': case 'g': scale = int64_t{1} << 30; break;
      default: break;
    }
    if (scale != 1) digits.pop_back();
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(digits, &value) || value < 1) {
    return absl::InvalidArgumentError(absl::StrFormat("'%s' is not a byte size", text));
  }
  return value * scale;
}

absl::StatusOr<std::vector<int>> ParseDevices(const std::string& text) {
  std::vector<int> devices;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int device = 0;
    if (!absl::SimpleAtoi(part, &device)) {
      return absl::InvalidArgumentError(absl::StrFormat("--devices: '%s' is not a number", part));
    }
    devices.push_back(device);
  }
  return devices;
}

// Prints each GPU and the peer-access matrix with the driver's link performance rank.
void PrintTopology(const std::vector<int>& devices) {
  for (int device : devices) {
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) continue;
    std::printf("# GPU %d: %s, %d SMs, %.0f GiB\n", device, prop.name, prop.multiProcessorCount,
                prop.totalGlobalMem / double(1 << 30));
  }
  std::printf("# peer access (P = yes, with the driver's performance rank; - = no):\n#      ");
  for (int b : devices) std::printf(" GPU%-3d", b);
  std::printf("\n");
  for (int a : devices) {
    std::printf("# GPU%-2d", a);
    for (int b : devices) {
      int access = 0;
      int rank = 0;
      if (a == b) {
        std::printf("  %-5s", "self");
        continue;
      }
      cudaDeviceCanAccessPeer(&access, a, b);
      cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, a, b);
      std::printf("  %-5s", access ? absl::StrFormat("P%d", rank).c_str() : "-");
    }
    std::printf("\n");
  }
  cudaGetLastError();
}

int Smoke(const std::vector<int>& requested) {
  RuntimeOptions options;
  options.devices = requested;
  options.max_blocks = absl::GetFlag(FLAGS_max_blocks);
  options.one_trip_max_bytes = absl::GetFlag(FLAGS_one_trip_max_bytes);
  options.copy_engine_min_bytes = absl::GetFlag(FLAGS_copy_engine_min_bytes);
  auto transport = ParseTransport(absl::GetFlag(FLAGS_transport));
  if (!transport.ok()) {
    std::printf("ltx_allgather: %s\n", transport.status().ToString().c_str());
    return kExitFailed;
  }
  options.transport = *transport;
  auto runtime = Runtime::Create(options);
  if (!runtime.ok()) {
    std::printf("ltx_allgather: cannot create the runtime: %s\n",
                runtime.status().ToString().c_str());
    return kExitFailed;
  }
  const std::vector<int> devices = (*runtime)->devices();
  const int world = (*runtime)->world_size();
  PrintTopology(devices);
  std::printf("# transport: %s\n", TransportName((*runtime)->transport()).c_str());
  auto harness = AllGatherHarness::Create(devices, 16 << 20, 64 << 20, /*seed=*/2024);
  if (!harness.ok()) {
    std::printf("ltx_allgather: %s\n", harness.status().ToString().c_str());
    return kExitFailed;
  }
  std::vector<AllGatherCase> cases;
  auto add = [&](DataType dtype, int64_t batch, int64_t hidden, std::vector<int64_t> counts,
                 int misalign) {
    AllGatherCase c;
    c.dtype = dtype;
    c.batch = batch;
    c.hidden = hidden;
    c.token_counts = std::move(counts);
    c.output_misalignment = misalign;
    cases.push_back(c);
  };
  std::vector<int64_t> uneven;
  std::vector<int64_t> with_zeros;
  for (int r = 0; r < world; ++r) {
    uneven.push_back(7 + 5 * r);
    with_zeros.push_back(r % 2 == 1 ? 0 : 11 + r);
  }
  add(DataType::kBFloat16, 1, 4096, uneven, 0);
  add(DataType::kFloat16, 3, 1000, with_zeros, 0);
  add(DataType::kFloat32, 2, 7, uneven, 0);
  add(DataType::kFloat8E4M3, 1, 12288, uneven, 0);
  add(DataType::kFloat8E5M2, 2, 64, with_zeros, 0);
  add(DataType::kInt8, 1, 1, uneven, 3);
  add(DataType::kBFloat16, 1, 65536, uneven, 0);
  add(DataType::kUint8, 3, 333, uneven, 5);

  std::printf("#\n# %-52s %-12s %10s  %s\n", "case", "style", "time", "result");
  int failures = 0;
  for (const AllGatherCase& c : cases) {
    for (bool per_rank : {false, true}) {
      absl::Status status = (*harness)->Prepare(c);
      const absl::Time launched = absl::Now();
      if (status.ok() && per_rank) {
        for (int rank = 0; rank < world && status.ok(); ++rank) {
          status = (*runtime)->AllGatherRank(rank, c.Shape(), (*harness)->Buffers(rank));
        }
        if (status.ok()) status = (*runtime)->Synchronize(absl::Seconds(30));
      } else if (status.ok()) {
        status = (*runtime)->AllGatherAndWait(c.Shape(), (*harness)->AllBuffers(),
                                              absl::Seconds(30));
      }
      const absl::Duration took = absl::Now() - launched;
      if (status.ok()) status = (*harness)->Verify();
      std::printf("  %-52s %-12s %8.0fus  %s\n", c.ToString().c_str(),
                  per_rank ? "per-rank" : "coordinated", absl::ToDoubleMicroseconds(took),
                  status.ok() ? "ok" : status.ToString().c_str());
      if (!status.ok()) {
        ++failures;
        if (!(*runtime)->status().ok()) (*runtime)->Reset(absl::Seconds(30)).IgnoreError();
      }
    }
  }
  std::printf("%s: %zu cases x 2 call styles on %d GPU(s) [%s], %d failed\n",
              failures == 0 ? "PASS" : "FAIL", cases.size(), world,
              absl::StrJoin(devices, ",").c_str(), failures);
  return failures == 0 ? kExitOk : kExitFailed;
}

int Bench(const std::vector<int>& devices) {
  BenchConfig config;
  config.devices = devices;
  auto min_bytes = ParseBytes(absl::GetFlag(FLAGS_b));
  auto max_bytes = ParseBytes(absl::GetFlag(FLAGS_e));
  auto dtype = ParseDataType(absl::GetFlag(FLAGS_dtype));
  auto split = ParseSplitPattern(absl::GetFlag(FLAGS_split));
  auto style = ParseBenchStyle(absl::GetFlag(FLAGS_style));
  auto protocol = ParseProtocol(absl::GetFlag(FLAGS_protocol));
  auto transport = ParseTransport(absl::GetFlag(FLAGS_transport));
  for (const absl::Status& status :
       {min_bytes.status(), max_bytes.status(), dtype.status(), split.status(), style.status(),
        protocol.status(), transport.status()}) {
    if (!status.ok()) {
      std::fprintf(stderr, "ltx_allgather: %s\n", status.ToString().c_str());
      return kExitFailed;
    }
  }
  config.min_bytes = *min_bytes;
  config.max_bytes = *max_bytes;
  config.factor = absl::GetFlag(FLAGS_f);
  config.dtype = *dtype;
  config.hidden = absl::GetFlag(FLAGS_hidden);
  config.split = *split;
  config.style = *style;
  config.protocol = *protocol;
  config.transport = *transport;
  config.one_trip_max_bytes = absl::GetFlag(FLAGS_one_trip_max_bytes);
  config.copy_engine_min_bytes = absl::GetFlag(FLAGS_copy_engine_min_bytes);
  config.warmup = absl::GetFlag(FLAGS_warmup);
  config.iterations = absl::GetFlag(FLAGS_iters);
  config.windows = absl::GetFlag(FLAGS_windows);
  config.blocks = absl::GetFlag(FLAGS_blocks);
  config.max_blocks = absl::GetFlag(FLAGS_max_blocks);
  config.check = absl::GetFlag(FLAGS_check);
  config.nccl_path = absl::GetFlag(FLAGS_nccl);
  config.json_path = absl::GetFlag(FLAGS_json);
  auto rows = RunBenchmark(config);
  if (!rows.ok()) {
    std::fprintf(stderr, "ltx_allgather: %s\n", rows.status().ToString().c_str());
    return kExitFailed;
  }
  int64_t wrong = 0;
  for (const BenchRow& row : *rows) wrong += row.wrong;
  std::printf("# %s: %zu sizes, %d with wrong results\n", wrong == 0 ? "PASS" : "FAIL",
              rows->size(), static_cast<int>(wrong));
  return wrong == 0 ? kExitOk : kExitFailed;
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "AllGather over NVLink peer-to-peer stores across the GPUs of this node.\n"
      "  ltx_allgather            smoke run: verified shapes and dtypes, PASS/FAIL\n"
      "  ltx_allgather --bench    size sweep with NCCL side by side (see the flags)\n"
      "Exit codes: 0 pass, 1 failure, 2 no GPU visible.");
  absl::ParseCommandLine(argc, argv);
  auto devices = ParseDevices(absl::GetFlag(FLAGS_devices));
  if (!devices.ok()) {
    std::fprintf(stderr, "ltx_allgather: %s\n", devices.status().ToString().c_str());
    return kExitFailed;
  }
  if (VisibleGpuCount() == 0) {
    std::printf("ltx_allgather: no CUDA GPU is visible; nothing to run (exit 2)\n");
    return kExitNoGpu;
  }
  return absl::GetFlag(FLAGS_bench) ? Bench(*devices) : Smoke(*devices);
}

}  // namespace
}  // namespace ltx

int main(int argc, char** argv) { return ltx::Main(argc, argv); }
