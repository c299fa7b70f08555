// Smoke cases of ltx_allgather, with the topology printed first.
#include "tools/ltx_allgather/smoke.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "ltx/collectives/allgather_layout.h"
#include "ltx/runtime.h"
#include "ltx/status_macros.h"
#include "tools/testing/allgather_harness.h"
#include "tools/testing/rank_threads.h"

namespace ltx {
namespace {

constexpr uint64_t kSeed = 2024;

// The input and output bytes per rank that hold every case of `cases` on `world` ranks (a case
// whose layout is refused is left to Prepare to report).
std::pair<int64_t, int64_t> Capacities(const std::vector<AllGatherCase>& cases, int world) {
  int64_t input = 0;
  int64_t output = 0;
  for (const AllGatherCase& c : cases) {
    const absl::StatusOr<AllGatherLayout> layout = ComputeAllGatherLayout(c.Shape(), world);
    if (!layout.ok()) continue;
    for (int rank = 0; rank < world; ++rank) input = std::max(input, layout->InputBytes(rank));
    output = std::max(output, layout->output_bytes);
  }
  return {std::max<int64_t>(input, 1), std::max<int64_t>(output, 1)};
}

// Prints each GPU and the peer-access matrix with the driver's link performance rank.
void PrintTopology(const std::vector<int>& devices) {
  for (int device : devices) {
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) continue;
    absl::PrintF("# GPU %d: %s, %d SMs, %.0f GiB\n", device, prop.name, prop.multiProcessorCount,
                 prop.totalGlobalMem / double(1 << 30));
  }
  absl::PrintF("# peer access (P = yes, with the driver's performance rank; - = no):\n#      ");
  for (int b : devices) absl::PrintF(" GPU%-3d", b);
  absl::PrintF("\n");
  for (int a : devices) {
    absl::PrintF("# GPU%-2d", a);
    for (int b : devices) {
      int access = 0;
      int rank = 0;
      if (a != b) {
        cudaDeviceCanAccessPeer(&access, a, b);
        cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, a, b);
      }
      const std::string cell = a == b ? "self" : access ? absl::StrFormat("P%d", rank) : "-";
      absl::PrintF("  %-5s", cell);
    }
    absl::PrintF("\n");
  }
  cudaGetLastError();
}

// The smoke cases for `world` ranks: every dtype, uneven counts and zeros, rows from 1 byte to
// 128 KiB, misaligned outputs; with `fp8`, bf16 and fp16 rows with FP8 on the wire too. With
// `dtype` set, every case takes that dtype instead.
std::vector<AllGatherCase> SmokeCases(int world, const absl::optional<DataType>& dtype,
                                      bool fp8) {
  std::vector<int64_t> uneven;
  std::vector<int64_t> with_zeros;
  for (int r = 0; r < world; ++r) {
    uneven.push_back(7 + 5 * r);
    with_zeros.push_back(r % 2 == 1 ? 0 : 11 + r);
  }
  std::vector<AllGatherCase> cases;
  auto add = [&](DataType type, int64_t batch, int64_t hidden, const std::vector<int64_t>& counts,
                 int misalign) {
    AllGatherCase c;
    c.dtype = dtype.value_or(type);
    c.batch = batch;
    c.hidden = hidden;
    c.token_counts = counts;
    c.output_misalignment = misalign;
    cases.push_back(c);
  };
  add(DataType::kBFloat16, 1, 4096, uneven, 0);
  add(DataType::kFloat16, 3, 1000, with_zeros, 0);
  add(DataType::kFloat32, 2, 7, uneven, 0);
  add(DataType::kFloat8E4M3, 1, 12288, uneven, 0);
  add(DataType::kFloat8E5M2, 2, 64, with_zeros, 0);
  add(DataType::kInt8, 1, 1, uneven, 3);
  add(DataType::kBFloat16, 1, 65536, uneven, 0);
  add(DataType::kUint8, 3, 333, uneven, 5);
  if (fp8) {
    add(DataType::kBFloat16, 1, 4096, uneven, 0);
    cases.back().wire = WireFormat::kFp8E4M3;
    add(DataType::kFloat16, 2, 1000, with_zeros, 2);
    cases.back().wire = WireFormat::kFp8E4M3;
  }
  return cases;
}

// Runs `c` once in one call style, waits and verifies.
absl::Status RunCase(Runtime& runtime, AllGatherHarness& harness, const SmokeConfig& config,
                     const AllGatherCase& c, bool per_rank) {
  LTX_RETURN_IF_ERROR(harness.Prepare(c));
  const AllGatherShape shape = c.Shape();
  if (per_rank) {
    LTX_RETURN_IF_ERROR(RunOnRankThreads(runtime.world_size(), [&](int rank) {
      return runtime.AllGatherRank(rank, shape, harness.Buffers(rank), config.call);
    }));
    LTX_RETURN_IF_ERROR(runtime.Synchronize(config.host_wait));
  } else {
    LTX_RETURN_IF_ERROR(
        runtime.AllGatherAndWait(shape, harness.AllBuffers(), config.host_wait, config.call));
  }
  return harness.Verify();
}

}  // namespace

absl::StatusOr<SmokeResult> RunSmoke(const SmokeConfig& config) {
  LTX_ASSIGN_OR_RETURN(std::unique_ptr<Runtime> runtime, Runtime::Create(config.runtime));
  const std::vector<int> devices = runtime->devices();
  PrintTopology(devices);
  absl::PrintF("# transport: %s, protocol: %s, blocks: %s\n", TransportName(runtime->transport()),
               ProtocolName(config.call.protocol),
               config.call.blocks > 0 ? absl::StrCat(config.call.blocks) : "auto");
  // FP8 on the wire where the calls can carry it: 16-bit rows, on the kernels.
  const bool fp8 =
      (!config.dtype.has_value() || *config.dtype == DataType::kBFloat16 ||
       *config.dtype == DataType::kFloat16) &&
      (config.call.protocol == Protocol::kAuto || config.call.protocol == Protocol::kDirect) &&
      runtime->transport() == Transport::kPeerStores;
  const std::vector<AllGatherCase> cases = SmokeCases(runtime->world_size(), config.dtype, fp8);
  const auto [input_capacity, output_capacity] = Capacities(cases, runtime->world_size());
  LTX_ASSIGN_OR_RETURN(std::unique_ptr<AllGatherHarness> harness,
                       AllGatherHarness::Create(devices, input_capacity, output_capacity, kSeed));
  absl::PrintF("#\n# %-52s %-12s %10s  %s\n", "case", "style", "time", "result");
  SmokeResult result;
  for (const AllGatherCase& c : cases) {
    for (bool per_rank : {false, true}) {
      const absl::Time launched = absl::Now();
      const absl::Status status = RunCase(*runtime, *harness, config, c, per_rank);
      absl::PrintF("  %-52s %-12s %8.0fus  %s\n", c.ToString(),
                   per_rank ? "per-rank" : "coordinated",
                   absl::ToDoubleMicroseconds(absl::Now() - launched),
                   status.ok() ? "ok" : status.ToString());
      ++result.cases;
      if (status.ok()) continue;
      ++result.failures;
      if (!runtime->status().ok()) runtime->Reset(config.host_wait).IgnoreError();
    }
  }
  absl::PrintF("%s: %d cases x 2 call styles on %d rank(s), GPUs [%s], %d failed\n",
               result.failures == 0 ? "PASS" : "FAIL", cases.size(), devices.size(),
               absl::StrJoin(devices, ","), result.failures);
  return result;
}

}  // namespace ltx
