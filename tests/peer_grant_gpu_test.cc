// GPU test of the grants of ltx/cuda/peer_memory.h (EnsurePeerWritable's PeerGrant and
// PeerGrantHolds): a grant holds while the allocation it was made for is at its address
// (cudaMalloc and pool memory), for no other memory there (freed, a new allocation after a free,
// a new pool's), and never for a mapping of the virtual memory API, whose access is checked in
// full on every use. One GPU suffices: classifying memory needs no peer. Also reports what the
// check costs the host on every call, per memory kind.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "ltx/cuda/peer_memory.h"
#include "tests/memory_kind_buffer.h"
#include "tools/testing/test_ranks.h"
#include "tools/testing/visible_gpus.h"

namespace ltx {
namespace {

constexpr int64_t kBytes = int64_t{1} << 20;

// The grant for `bytes` bytes at `pointer` of GPU 0, with no peer to grant to.
PeerGrant GrantOf(const void* pointer) {
  const absl::StatusOr<PeerGrant> grant = EnsurePeerWritable(pointer, kBytes, 0, {});
  EXPECT_TRUE(grant.ok()) << grant.status();
  return grant.ok() ? *grant : PeerGrant{};
}

TEST(PeerGrantGpuTest, CudaMallocGrantHoldsForItsAllocationOnly) {
  if (VisibleGpuCount() == 0) LTX_SKIP_GPU_TEST("needs a GPU, none is visible");
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  void* first = nullptr;
  ASSERT_EQ(cudaMalloc(&first, kBytes), cudaSuccess);
  const PeerGrant grant = GrantOf(first);
  EXPECT_EQ(grant.scope, PeerGrant::Scope::kProcess);
  EXPECT_NE(grant.buffer_id, 0u);
  EXPECT_TRUE(PeerGrantHolds(first, 0, grant));
  EXPECT_TRUE(PeerGrantHolds(static_cast<uint8_t*>(first) + 4096, 0, grant));  // Inside it.
  EXPECT_FALSE(PeerGrantHolds(first, 1, grant));  // Not memory of GPU 1.
  ASSERT_EQ(cudaFree(first), cudaSuccess);
  EXPECT_FALSE(PeerGrantHolds(first, 0, grant));  // Freed.
  void* again = nullptr;
  ASSERT_EQ(cudaMalloc(&again, kBytes), cudaSuccess);
  if (again == first) {
    EXPECT_FALSE(PeerGrantHolds(again, 0, grant)) << "a new allocation at the same address";
  } else {
    std::cout << "cudaMalloc gave another address; the same-address case did not arise\n";
  }
  EXPECT_TRUE(PeerGrantHolds(again, 0, GrantOf(again)));
  EXPECT_EQ(cudaFree(again), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(PeerGrantGpuTest, PoolGrantHoldsWhileItsPoolLives) {
  if (VisibleGpuCount() == 0) LTX_SKIP_GPU_TEST("needs a GPU, none is visible");
  const void* address = nullptr;
  PeerGrant grant;
  {
    absl::StatusOr<std::unique_ptr<MemoryKindBuffer>> buffer =
        MemoryKindBuffer::Allocate(MemoryKind::kOwnPool, 0, kBytes);
    ASSERT_TRUE(buffer.ok()) << buffer.status();
    address = (*buffer)->data();
    grant = GrantOf(address);
    EXPECT_EQ(grant.scope, PeerGrant::Scope::kPool);
    EXPECT_TRUE(PeerGrantHolds(address, 0, grant));
  }  // The allocation is freed and its pool destroyed.
  EXPECT_FALSE(PeerGrantHolds(address, 0, grant));
  absl::StatusOr<std::unique_ptr<MemoryKindBuffer>> other =
      MemoryKindBuffer::Allocate(MemoryKind::kOwnPool, 0, kBytes);
  ASSERT_TRUE(other.ok()) << other.status();
  if ((*other)->data() == address) {
    EXPECT_FALSE(PeerGrantHolds(address, 0, grant)) << "another pool's memory at the address";
  } else {
    std::cout << "the new pool gave another address; the same-address case did not arise\n";
  }
  EXPECT_EQ(GrantOf((*other)->data()).scope, PeerGrant::Scope::kPool);
}

TEST(PeerGrantGpuTest, MappingGrantNeverHolds) {
  if (VisibleGpuCount() == 0) LTX_SKIP_GPU_TEST("needs a GPU, none is visible");
  for (MemoryKind kind : {MemoryKind::kMapped, MemoryKind::kTwoMappings}) {
    absl::StatusOr<std::unique_ptr<MemoryKindBuffer>> buffer =
        MemoryKindBuffer::Allocate(kind, 0, kBytes);
    ASSERT_TRUE(buffer.ok()) << buffer.status();
    const PeerGrant grant = GrantOf((*buffer)->data());
    EXPECT_EQ(grant.scope, PeerGrant::Scope::kMapping) << MemoryKindName(kind);
    EXPECT_FALSE(PeerGrantHolds((*buffer)->data(), 0, grant)) << MemoryKindName(kind);
  }
}

// The median host time of `check` over 2001 calls, in microseconds.
template <typename Check>
double MedianMicros(Check check) {
  std::vector<double> micros;
  for (int i = 0; i < 2001; ++i) {
    const auto begin = std::chrono::steady_clock::now();
    check();
    micros.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - begin)
            .count());
  }
  std::nth_element(micros.begin(), micros.begin() + micros.size() / 2, micros.end());
  return micros[micros.size() / 2];
}

// What a call pays the host for each output, per kind: one driver query where a grant holds
// (cudaMalloc, pools), the whole check for a mapping. Bounded loosely (a check is meant to cost
// microseconds, not a launch's worth); the figures are printed for the guides.
TEST(PeerGrantGpuTest, HostCostOfTheCheckPerCall) {
  if (VisibleGpuCount() == 0) LTX_SKIP_GPU_TEST("needs a GPU, none is visible");
  for (MemoryKind kind : kAllMemoryKinds) {
    absl::StatusOr<std::unique_ptr<MemoryKindBuffer>> buffer =
        MemoryKindBuffer::Allocate(kind, 0, kBytes);
    ASSERT_TRUE(buffer.ok()) << buffer.status();
    const void* data = (*buffer)->data();
    const PeerGrant grant = GrantOf(data);
    bool holds = false;
    const double micros = MedianMicros([&] {
      holds = PeerGrantHolds(data, 0, grant);
      if (!holds) {
        EXPECT_TRUE(EnsurePeerWritable(data, kBytes, 0, {}).ok());
      }
    });
    std::cout << "check per call, " << MemoryKindName(kind) << ": " << micros << " us ("
              << (holds ? "the grant holds" : "checked in full") << ")\n";
    EXPECT_LT(micros, 200.0) << MemoryKindName(kind);
  }
}

}  // namespace
}  // namespace ltx
