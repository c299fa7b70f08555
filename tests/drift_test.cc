// Long runs without host synchronisation: every rank's thread issues thousands of per-rank ops
// of random shapes and protocols back to back, with random busy kernels injected on its stream,
// so the ranks drift apart by many ops. Each output is poisoned on its rank's stream right before
// its op and checked on the device, against a hash of the sources, just before its slot of a
// ring of three is used again. Nothing but the collectives themselves orders the ranks.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <random>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "kernels/wire/one_trip_layout.h"
#include "ltx/runtime.h"
#include "tests/busy_kernel.h"
#include "tests/pattern_kernels.h"
#include "tools/testing/gpu_fixture.h"

namespace ltx {
namespace {

constexpr int kOps = 10000;
constexpr int kRing = 3;
constexpr int64_t kMaxTokens = 32;
constexpr int64_t kMaxHidden = 2048;
constexpr int64_t kMaxBatch = 2;
constexpr int64_t kMaxRowBytes = kMaxHidden * 4;
constexpr int64_t kInputBytes = kMaxBatch * kMaxTokens * kMaxRowBytes;
constexpr int64_t kOutputBytes = kInputBytes * kPatternMaxRanks;

// One op of the run, the same for every rank.
struct PlannedOp {
  AllGatherShape shape;
  PatternShape pattern;
  std::vector<int64_t> counts;
  CallOptions call;
  std::vector<uint64_t> busy_ns;  // Per rank: a busy kernel before the op (0: none).
};

// The ops of the run on `world` ranks. Where ranks share a GPU the run keeps to the kernels
// (`copy_engines` false): a copy stream there may share a hardware queue with a co-located
// rank's waiting kernel (kernels/PROTOCOL.md, "Ranks that share a GPU").
std::vector<PlannedOp> PlanOps(int world, bool copy_engines, uint64_t seed) {
  const DataType kTypes[] = {DataType::kBFloat16,   DataType::kFloat16,    DataType::kFloat32,
                             DataType::kFloat8E4M3, DataType::kFloat8E5M2, DataType::kInt8,
                             DataType::kUint8};
  std::mt19937_64 random(seed);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(random);
  };
  std::vector<PlannedOp> ops(kOps);
  for (int i = 0; i < kOps; ++i) {
    PlannedOp& op = ops[i];
    op.shape.dtype = kTypes[uniform(0, 6)];
    op.shape.batch = uniform(1, kMaxBatch);
    op.shape.hidden = uniform(0, 3) == 0 ? uniform(1, 9) : uniform(1, kMaxHidden);
    int64_t max_shard = 0;
    for (int r = 0; r < world; ++r) {
      op.counts.push_back(uniform(0, 4) == 0 ? 0 : uniform(1, kMaxTokens));
      max_shard = std::max(max_shard, op.shape.batch * op.counts.back() * op.shape.hidden *
                                          ElementSize(op.shape.dtype));
    }
    op.shape.token_counts = op.counts;
    const int64_t pick = uniform(0, 9);
    op.call.protocol = pick < 5                                         ? Protocol::kAuto
                       : pick < 7                                       ? Protocol::kDirect
                       : pick < 9 && max_shard <= kOneTripMaxShardBytes ? Protocol::kOneTrip
                       : copy_engines                                   ? Protocol::kCopyEngine
                                                                        : Protocol::kDirect;
    for (int r = 0; r < world; ++r) {
      op.busy_ns.push_back(uniform(0, 2) == 0 ? uniform(1000, 200000) : 0);
    }
    op.pattern.op = static_cast<uint64_t>(i) + 1;
    op.pattern.world_size = world;
    op.pattern.batch = op.shape.batch;
    op.pattern.row_bytes = op.shape.hidden * ElementSize(op.shape.dtype);
    for (int r = 0; r < world; ++r) op.pattern.token_counts[r] = op.counts[r];
  }
  return ops;
}

int64_t OutputBytes(const PatternShape& p) {
  int64_t total = 0;
  for (int r = 0; r < p.world_size; ++r) total += p.token_counts[r];
  return p.batch * total * p.row_bytes;
}

// One rank's memory for the run.
struct RankMemory {
  cudaStream_t stream = nullptr;
  void* input = nullptr;
  void* outputs[kRing] = {};
  PatternMismatches* mismatches = nullptr;
};

// Issues every op of rank `rank`; returns the first error.
absl::Status RunRank(Runtime& runtime, int rank, const std::vector<PlannedOp>& ops,
                     const RankMemory& m) {
  if (cudaSetDevice(runtime.devices()[rank]) != cudaSuccess) {
    return absl::InternalError("cudaSetDevice");
  }
  auto check = [&](int i) {
    return LaunchCheckPattern(ops[i].pattern, m.outputs[i % kRing], m.mismatches, m.stream);
  };
  for (int i = 0; i < kOps; ++i) {
    const PlannedOp& op = ops[i];
    void* output = m.outputs[i % kRing];
    cudaError_t error = i >= kRing ? check(i - kRing) : cudaSuccess;
    if (error == cudaSuccess && op.busy_ns[rank] > 0) {
      error = LaunchBusyKernel(op.busy_ns[rank], m.stream);
    }
    if (error == cudaSuccess) error = LaunchFillPattern(op.pattern, rank, m.input, m.stream);
    if (error == cudaSuccess) {
      error = cudaMemsetAsync(output, 0xA5 ^ (i & 0xff), OutputBytes(op.pattern), m.stream);
    }
    if (error != cudaSuccess) {
      return absl::InternalError(
          absl::StrFormat("rank %d op %d: %s", rank, i, cudaGetErrorString(error)));
    }
    const absl::Status status =
        runtime.AllGatherRank(rank, op.shape, {m.input, output, m.stream}, op.call);
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrFormat("rank %d op %d: %s", rank, i, status.message()));
    }
  }
  for (int i = kOps - kRing; i < kOps; ++i) {
    if (check(i) != cudaSuccess) return absl::InternalError("check launch");
  }
  return absl::OkStatus();
}

TEST(DriftTest, TenThousandOpsWithoutHostSynchronisationAllProtocolsRandomDelays) {
  LTX_REQUIRE_RANKS(2);
  const int world = std::min(TestWorldSize(2), kPatternMaxRanks);
  RuntimeOptions options = OnPeerStores();
  options.devices = TestDevices(world);
  options.timeout = absl::Seconds(5);
  absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  const std::vector<PlannedOp> ops =
      PlanOps(world, !RanksShareGpus(options.devices), /*seed=*/20261130);

  std::vector<RankMemory> memory(world);
  for (int rank = 0; rank < world; ++rank) {
    RankMemory& m = memory[rank];
    ASSERT_EQ(cudaSetDevice(options.devices[rank]), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&m.stream, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&m.input, kInputBytes), cudaSuccess);
    for (void*& output : m.outputs) ASSERT_EQ(cudaMalloc(&output, kOutputBytes), cudaSuccess);
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&m.mismatches), sizeof(PatternMismatches)),
              cudaSuccess);
    // On the rank's stream, before its pattern checks: a cudaMemset would run on the legacy
    // stream, which the non-blocking stream does not wait for.
    ASSERT_EQ(cudaMemsetAsync(m.mismatches, 0, sizeof(PatternMismatches), m.stream), cudaSuccess);
  }

  std::vector<absl::Status> results(world);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back(
        [&, rank] { results[rank] = RunRank(**runtime, rank, ops, memory[rank]); });
  }
  for (std::thread& thread : threads) thread.join();
  for (int rank = 0; rank < world; ++rank) EXPECT_TRUE(results[rank].ok()) << results[rank];
  EXPECT_TRUE((*runtime)->Synchronize(absl::Seconds(60)).ok());

  for (int rank = 0; rank < world; ++rank) {
    RankMemory& m = memory[rank];
    cudaSetDevice(options.devices[rank]);
    ASSERT_EQ(cudaStreamSynchronize(m.stream), cudaSuccess);
    PatternMismatches found = {};
    ASSERT_EQ(cudaMemcpy(&found, m.mismatches, sizeof(found), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(found.count, 0u) << "rank " << rank << ": first wrong byte at offset "
                               << found.first_offset << " of op " << found.first_op - 1;
    cudaFree(m.input);
    for (void* output : m.outputs) cudaFree(output);
    cudaFree(m.mismatches);
    cudaStreamDestroy(m.stream);
  }
  EXPECT_TRUE((*runtime)->status().ok()) << (*runtime)->status();
}

}  // namespace
}  // namespace ltx
