// GPU test fixtures and case runners.
#include "tools/testing/gpu_fixture.h"

#include <utility>

#include "tools/testing/rank_threads.h"

namespace ltx {

std::vector<int> FirstDevices(int n) {
  std::vector<int> devices;
  for (int i = 0; i < n; ++i) devices.push_back(i);
  return devices;
}

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

absl::Status LaunchCase(GpuFixture& f, const AllGatherCase& c, CallStyle style,
                        const CallOptions& call, std::vector<int> ranks) {
  absl::Status status = f.harness->Prepare(c);
  if (!status.ok()) return status;
  const AllGatherShape shape = c.Shape();
  if (style == CallStyle::kCoordinated) {
    return f.runtime->AllGather(shape, f.harness->AllBuffers(), call).status();
  }
  if (ranks.empty()) ranks = FirstDevices(f.runtime->world_size());
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

}  // namespace ltx
