// Tests of ltx/cuda/peer_memory.h that need no GPU: the walk over the mappings a buffer spans, the
// argument checks, and the clear error (never a fault) for memory that is not a GPU's.
#include "ltx/cuda/peer_memory.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/testing/visible_gpus.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;

// Mappings of 0x1000 bytes each from 0x10000 to 0x14000, none elsewhere.
absl::StatusOr<AddressRange> FourMappings(uint64_t address) {
  if (address < 0x10000 || address >= 0x14000) return absl::NotFoundError("not mapped");
  return AddressRange{address & ~uint64_t{0xfff}, 0x1000};
}

std::vector<uint64_t> Bases(const std::vector<AddressRange>& mappings) {
  std::vector<uint64_t> bases;
  for (const AddressRange& mapping : mappings) bases.push_back(mapping.base);
  return bases;
}

TEST(CoveringMappingsTest, BufferInsideOneMapping) {
  absl::StatusOr<std::vector<AddressRange>> mappings =
      CoveringMappings(0x11100, 0x200, FourMappings);
  ASSERT_TRUE(mappings.ok()) << mappings.status();
  EXPECT_THAT(Bases(*mappings), ::testing::ElementsAre(0x11000));
  EXPECT_EQ((*mappings)[0].size, 0x1000);
}

TEST(CoveringMappingsTest, BufferSpanningMappingsFindsEachOnce) {
  absl::StatusOr<std::vector<AddressRange>> mappings =
      CoveringMappings(0x10ff0, 0x2020, FourMappings);
  ASSERT_TRUE(mappings.ok()) << mappings.status();
  EXPECT_THAT(Bases(*mappings), ::testing::ElementsAre(0x10000, 0x11000, 0x12000, 0x13000));
}

TEST(CoveringMappingsTest, BufferEndingOnAMappingEndTakesNoMore) {
  absl::StatusOr<std::vector<AddressRange>> mappings =
      CoveringMappings(0x10000, 0x2000, FourMappings);
  ASSERT_TRUE(mappings.ok()) << mappings.status();
  EXPECT_THAT(Bases(*mappings), ::testing::ElementsAre(0x10000, 0x11000));
}

TEST(CoveringMappingsTest, EmptyBufferNeedsNoLookup) {
  absl::StatusOr<std::vector<AddressRange>> mappings = CoveringMappings(0x99999, 0, FourMappings);
  ASSERT_TRUE(mappings.ok()) << mappings.status();
  EXPECT_TRUE(mappings->empty());
}

TEST(CoveringMappingsTest, UnmappedTailIsAnErrorAtItsOffset) {
  absl::StatusOr<std::vector<AddressRange>> mappings =
      CoveringMappings(0x13800, 0x1000, FourMappings);
  ASSERT_FALSE(mappings.ok());
  EXPECT_EQ(mappings.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(mappings.status().message(), HasSubstr("at byte 2048 of 4096"));
  EXPECT_THAT(mappings.status().message(), HasSubstr("not mapped"));
}

TEST(CoveringMappingsTest, RangeNotHoldingTheAddressIsInternal) {
  // An empty range would otherwise loop forever; a range behind the address would too.
  for (const AddressRange wrong : {AddressRange{0x10000, 0}, AddressRange{0x8000, 0x1000}}) {
    absl::StatusOr<std::vector<AddressRange>> mappings = CoveringMappings(
        0x10000, 0x100, [wrong](uint64_t) -> absl::StatusOr<AddressRange> { return wrong; });
    ASSERT_FALSE(mappings.ok());
    EXPECT_EQ(mappings.status().code(), absl::StatusCode::kInternal);
    EXPECT_THAT(mappings.status().message(), HasSubstr("does not hold it"));
  }
}

TEST(EnsurePeerWritableTest, NullPointerAndNegativeSizeAreInvalid) {
  int byte = 0;
  EXPECT_EQ(EnsurePeerWritable(nullptr, 64, 0, {1}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EnsurePeerWritable(&byte, -1, 0, {1}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(EnsurePeerWritableTest, NothingToWriteIsOk) {
  int byte = 0;
  const absl::StatusOr<PeerGrant> grant = EnsurePeerWritable(&byte, 0, 0, {1});
  ASSERT_TRUE(grant.ok()) << grant.status();
  // Nothing granted: a grant that holds for nothing, checked again on every use.
  EXPECT_EQ(grant->scope, PeerGrant::Scope::kMapping);
  EXPECT_FALSE(PeerGrantHolds(&byte, 0, *grant));
}

// Host memory is never writable by peers' stores: without a GPU or a driver the answer is
// FailedPrecondition, with one InvalidArgument; either way a status, and no CUDA error left.
TEST(EnsurePeerWritableTest, HostMemoryIsRefusedWithAReason) {
  std::vector<uint8_t> host(4096);
  const absl::Status status = EnsurePeerWritable(host.data(), host.size(), 0, {0, 1}).status();
  ASSERT_FALSE(status.ok());
  if (VisibleGpuCount() == 0) {
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
    EXPECT_THAT(status.message(), HasSubstr("CUDA driver")) << status;
  } else {
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(status.message(), HasSubstr("not CUDA memory")) << status;
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  }
}

// A grant holds only for the allocation it was made for, as device memory of its GPU: never for
// host memory (nor without a driver to ask), and never for a mapping, whose access is checked in
// full on every use.
TEST(PeerGrantHoldsTest, HostMemoryAndMappingsNeverHold) {
  std::vector<uint8_t> host(4096);
  for (PeerGrant::Scope scope :
       {PeerGrant::Scope::kProcess, PeerGrant::Scope::kPool, PeerGrant::Scope::kMapping}) {
    EXPECT_FALSE(PeerGrantHolds(host.data(), 0, PeerGrant{scope, 1}));
  }
  if (VisibleGpuCount() > 0) {
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  }
}

}  // namespace
}  // namespace ltx
