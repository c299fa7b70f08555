// GPU test fixtures and case runners.
#include "tools/testing/gpu_fixture.h"

#include <utility>

#include "ltx/cuda/cuda_status.h"
#include "tools/testing/rank_graphs.h"
#include "tools/testing/rank_threads.h"

namespace ltx {

GpuFixture MakeGpuFixture(std::vector<int> devices, RuntimeOptions options) {
  constexpr int64_t kInputCapacity = int64_t{24} << 20;
  constexpr int64_t kOutputCapacity = int64_t{96} << 20;
  GpuFixture f;
  options.devices = devices;
  auto runtime = Runtime::Create(options);
  EXPECT_TRUE(runtime.ok()) << runtime.status();
  auto harness = AllGatherHarness::Create(devices, kInputCapacity, kOutputCapacity,
                                          /*seed=*/devices.size() * 7919 + devices[0]);
  EXPECT_TRUE(harness.ok()) << harness.status();
  if (runtime.ok() && harness.ok()) {
    f.runtime = std::move(*runtime);
    f.harness = std::move(*harness);
  }
  return f;
}

RuntimeOptions OnPeerStores(RuntimeOptions options) {
  options.transport = Transport::kPeerStores;
  return options;
}

absl::Status LaunchCase(GpuFixture& f, const AllGatherCase& c, CallStyle style,
                        const CallOptions& call, std::vector<int> ranks) {
  absl::Status status = f.harness->Prepare(c);
  if (!status.ok()) return status;
  const AllGatherShape shape = c.Shape();
  if (style == CallStyle::kCoordinated) {
    return f.runtime->AllGather(shape, f.harness->AllBuffers(), call).status();
  }
  if (ranks.empty()) ranks = RankIndices(f.runtime->world_size());
  return RunOnRankThreads(static_cast<int>(ranks.size()), [&](int i) {
    return f.runtime->AllGatherRank(ranks[i], shape, f.harness->Buffers(ranks[i]), call);
  });
}

absl::Status RunAndVerify(GpuFixture& f, const AllGatherCase& c, CallStyle style,
                          const CallOptions& call) {
  absl::Status status;
  if (style == CallStyle::kCoordinated) {
    status = f.harness->Prepare(c);
    if (status.ok()) {
      status = f.runtime->AllGatherAndWait(c.Shape(), f.harness->AllBuffers(), kTestWait, call);
    }
  } else {
    status = LaunchCase(f, c, style, call);
    if (status.ok()) status = f.runtime->Synchronize(kTestWait);
  }
  if (status.ok()) status = f.harness->Verify();
  return status;
}

CapturedRankCalls::~CapturedRankCalls() {
  for (cudaGraphExec_t exec : execs_) {
    if (exec != nullptr) cudaGraphExecDestroy(exec);
  }
}

absl::Status CapturedRankCalls::Capture(const std::vector<int>& devices,
                                        const std::vector<RankBuffers>& buffers,
                                        const std::function<absl::Status(int rank)>& call_rank) {
  execs_.assign(devices.size(), nullptr);
  return CaptureRankGraphs(devices, buffers, call_rank, [&](int rank, cudaGraph_t graph) {
    const absl::Status status =
        CudaStatus(cudaGraphInstantiate(&execs_[rank], graph, 0), "Instantiate");
    cudaGraphDestroy(graph);
    return status;
  });
}

absl::Status CapturedRankCalls::CaptureAllGather(Runtime& runtime, const AllGatherShape& shape,
                                                 const std::vector<RankBuffers>& buffers,
                                                 const CallOptions& call) {
  return Capture(runtime.devices(), buffers, [&](int rank) {
    return runtime.AllGatherRank(rank, shape, buffers[rank], call);
  });
}

absl::Status CapturedRankCalls::CaptureAllToAll(Runtime& runtime, const AllToAllShape& shape,
                                                const std::vector<RankBuffers>& buffers,
                                                const CallOptions& call) {
  return Capture(runtime.devices(), buffers, [&](int rank) {
    return runtime.AllToAllRank(rank, shape, buffers[rank], call);
  });
}

absl::Status CapturedRankCalls::Replay(const std::vector<int>& devices,
                                       const std::vector<RankBuffers>& buffers,
                                       const std::vector<int>& ranks) {
  const std::vector<int> replayed =
      ranks.empty() ? RankIndices(static_cast<int>(execs_.size())) : ranks;
  for (int rank : replayed) {
    cudaSetDevice(devices[rank]);
    const absl::Status status =
        CudaStatus(cudaGraphLaunch(execs_[rank], buffers[rank].stream), "cudaGraphLaunch");
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace ltx
