// Tests of the kernel parameters the launch files fill, on the host
// (ltx/collectives/allgather_launch.h, ltx/collectives/alltoall_launch.h,
// ltx/collectives/kernel_params.h): what both collectives share comes from the view, the buffers
// and the call alike, and a captured copy-engine call's kernels take the view's part of it; each
// collective's own fields and its copy-engine announcement come from its layout. The view's
// pointers are made up and never dereferenced.
#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "kernels/allgather/allgather_kernel.h"
#include "kernels/alltoall/alltoall_kernel.h"
#include "kernels/copy_engine/copy_engine_graph_kernel.h"
#include "kernels/wire/collective.h"
#include "ltx/collectives/allgather_launch.h"
#include "ltx/collectives/allgather_layout.h"
#include "ltx/collectives/alltoall_launch.h"
#include "ltx/collectives/alltoall_layout.h"
#include "ltx/collectives/kernel_params.h"
#include "ltx/rank_buffers.h"
#include "ltx/runtime/resolved_call.h"
#include "ltx/transport/peer_store/peer_store_transport.h"

namespace ltx {
namespace {

constexpr int kWorld = 3;
constexpr int kRank = 1;

PeerStoreView FakeView() {
  PeerStoreView view;
  view.rank = kRank;
  view.world_size = kWorld;
  view.max_blocks = 8;
  for (int r = 0; r < kWorld; ++r) {
    view.signals[r] = reinterpret_cast<SignalRegion*>(uintptr_t{0x1000} * (r + 1));
    view.staging[r] = reinterpret_cast<OneTripLine*>(uintptr_t{0x100000} * (r + 1));
  }
  view.error_record = reinterpret_cast<DeviceErrorRecord*>(uintptr_t{0xe000});
  return view;
}

RankBuffers FakeBuffers() {
  RankBuffers buffers;
  buffers.input = reinterpret_cast<const void*>(uintptr_t{0xa000});
  buffers.output = reinterpret_cast<void*>(uintptr_t{0xb000});
  return buffers;
}

ResolvedCall FakeCall() {
  ResolvedCall call;
  call.protocol = Protocol::kDirect;
  call.blocks = 4;
  call.timeout = absl::Milliseconds(1500);
  call.generation = 7;
  return call;
}

// What SetViewParams fills.
template <typename KernelParams>
void ExpectViewFields(const KernelParams& params) {
  const PeerStoreView view = FakeView();
  for (int r = 0; r < kMaxWorldSize; ++r) {
    EXPECT_EQ(params.signals[r], r < kWorld ? view.signals[r] : nullptr) << r;
  }
  EXPECT_EQ(params.error_record, view.error_record);
  EXPECT_EQ(params.rank, kRank);
  EXPECT_EQ(params.world_size, kWorld);
  EXPECT_EQ(params.timeout_ns, uint64_t{1500000000});
}

// What SetSharedKernelParams fills.
template <typename KernelParams>
void ExpectSharedFields(const KernelParams& params) {
  ExpectViewFields(params);
  const PeerStoreView view = FakeView();
  const RankBuffers buffers = FakeBuffers();
  EXPECT_EQ(params.input, buffers.input);
  EXPECT_EQ(params.output, buffers.output);
  for (int r = 0; r < kMaxWorldSize; ++r) {
    EXPECT_EQ(params.staging[r], r < kWorld ? view.staging[r] : nullptr) << r;
  }
  EXPECT_EQ(params.generation, 7u);
}

AllGatherLayout GatherLayout(int tensors = 1) {
  const std::vector<int64_t> counts = {5, 0, 9};
  AllGatherShape shape;
  shape.dtype = DataType::kFloat16;
  shape.batch = 2;
  shape.hidden = 64;
  shape.token_counts = counts;
  shape.tensors = tensors;
  absl::StatusOr<AllGatherLayout> layout = ComputeAllGatherLayout(shape, kWorld);
  EXPECT_TRUE(layout.ok()) << layout.status();
  return layout.value_or(AllGatherLayout());
}

AllToAllLayout ToAllLayout(int tensors = 1) {
  const std::vector<int64_t> counts = {4, 6, 2};
  AllToAllShape shape;
  shape.dtype = DataType::kBFloat16;
  shape.batch = 1;
  shape.heads = 6;
  shape.head_dim = 32;
  shape.token_counts = counts;
  shape.direction = AllToAllDirection::kHeadsToSeq;
  shape.tensors = tensors;
  absl::StatusOr<AllToAllLayout> layout = ComputeAllToAllLayout(shape, kWorld);
  EXPECT_TRUE(layout.ok()) << layout.status();
  return layout.value_or(AllToAllLayout());
}

TEST(LaunchParamsTest, AllGatherParamsCarryTheSharedFieldsAndTheLayout) {
  const AllGatherLayout layout = GatherLayout();
  const AllGatherKernelParams params =
      AllGatherParamsOf(FakeView(), layout, FakeBuffers(), FakeCall());
  ExpectSharedFields(params);
  for (int r = 0; r < kWorld; ++r) {
    EXPECT_EQ(params.token_counts[r], layout.token_counts[r]) << r;
    EXPECT_EQ(params.prefix_tokens[r], layout.prefix_tokens[r]) << r;
  }
  const ShardGeometry geometry = layout.GeometryOf(kRank);
  EXPECT_EQ(params.geometry.batch, geometry.batch);
  EXPECT_EQ(params.geometry.shard_bytes, geometry.shard_bytes);
  EXPECT_EQ(params.geometry.output_batch_stride, geometry.output_batch_stride);
  EXPECT_EQ(params.geometry.output_offset, geometry.output_offset);
  EXPECT_EQ(params.counts_digest, layout.digest);
  EXPECT_EQ(params.total_tokens, layout.total_tokens);
  EXPECT_EQ(params.row_bytes, layout.row_bytes);
  EXPECT_EQ(params.dtype, static_cast<int32_t>(DataType::kFloat16));
  EXPECT_EQ(AllGatherKernelParams::kCollective, Collective::kAllGather);
}

TEST(LaunchParamsTest, AllToAllParamsCarryTheSharedFieldsAndTheLayout) {
  const AllToAllLayout layout = ToAllLayout();
  const AllToAllKernelParams params =
      AllToAllParamsOf(FakeView(), layout, FakeBuffers(), FakeCall());
  ExpectSharedFields(params);
  EXPECT_EQ(params.geometry.heads_to_seq, layout.geometry.heads_to_seq);
  EXPECT_EQ(params.geometry.total_tokens, layout.geometry.total_tokens);
  EXPECT_EQ(params.geometry.token_bytes, layout.geometry.token_bytes);
  EXPECT_EQ(params.digest, layout.digest);
  EXPECT_EQ(params.dtype, static_cast<int32_t>(DataType::kBFloat16));
  EXPECT_EQ(AllToAllKernelParams::kCollective, Collective::kAllToAll);
}

// Three tensors' buffers (FakeBuffers, then made-up others; the fourth left null).
RankBuffers ThreeTensorBuffers() {
  RankBuffers buffers = FakeBuffers();
  for (int j = 0; j < 2; ++j) {
    buffers.more_inputs[j] = reinterpret_cast<const void*>(uintptr_t{0xc000} + 0x100 * j);
    buffers.more_outputs[j] = reinterpret_cast<void*>(uintptr_t{0xd000} + 0x100 * j);
  }
  return buffers;
}

// What SetSharedKernelParams fills for a call of three tensors: the count and the other
// tensors' buffers, past them nothing.
template <typename KernelParams>
void ExpectThreeTensors(const KernelParams& params) {
  const RankBuffers buffers = ThreeTensorBuffers();
  EXPECT_EQ(params.tensors, 3);
  EXPECT_EQ(params.input, buffers.input);
  EXPECT_EQ(params.output, buffers.output);
  for (int j = 0; j < kMaxTensors - 1; ++j) {
    EXPECT_EQ(params.more_inputs[j], buffers.more_inputs[j]) << j;
    EXPECT_EQ(params.more_outputs.address[j], reinterpret_cast<uint64_t>(buffers.more_outputs[j]))
        << j;
  }
}

TEST(LaunchParamsTest, ParamsOfSeveralTensorsCarryEveryTensorsBuffers) {
  ExpectThreeTensors(
      AllGatherParamsOf(FakeView(), GatherLayout(3), ThreeTensorBuffers(), FakeCall()));
  ExpectThreeTensors(
      AllToAllParamsOf(FakeView(), ToAllLayout(3), ThreeTensorBuffers(), FakeCall()));
  // One tensor: the count is 1 and the other tensors' fields stay null.
  const AllGatherKernelParams one =
      AllGatherParamsOf(FakeView(), GatherLayout(), FakeBuffers(), FakeCall());
  EXPECT_EQ(one.tensors, 1);
  EXPECT_EQ(one.more_inputs[0], nullptr);
  EXPECT_EQ(one.more_outputs.address[0], 0u);
}

// The tensor count is in what an AllGather announces, so ranks that disagree on it are told
// apart.
TEST(LaunchParamsTest, AllGatherAnnouncementsOfDifferentTensorCountsDisagree) {
  const EntryAnnouncement one =
      AnnouncementOf(AllGatherParamsOf(FakeView(), GatherLayout(1), FakeBuffers(), FakeCall()),
                     AnnouncedProtocol::kDirect);
  const EntryAnnouncement three = AnnouncementOf(
      AllGatherParamsOf(FakeView(), GatherLayout(3), ThreeTensorBuffers(), FakeCall()),
      AnnouncedProtocol::kDirect);
  DeviceErrorRecord mismatch;
  ASSERT_TRUE(MismatchRecord(one, three, 0, 1, 1, &mismatch));
  EXPECT_EQ(mismatch.field, static_cast<uint32_t>(MismatchField::kCounts));
}

// A copy-engine call announces what the kernel would, on the copy-engine path, so that ranks
// on different paths or with different shapes are told apart.
TEST(LaunchParamsTest, CopyEngineAnnouncementsAreTheKernelsButForTheProtocol) {
  const AllGatherLayout gather = GatherLayout();
  const EntryAnnouncement gather_kernel = AnnouncementOf(
      AllGatherParamsOf(FakeView(), gather, FakeBuffers(), FakeCall()), AnnouncedProtocol::kDirect);
  EntryAnnouncement gather_copies =
      AllGatherCopyEngineAnnouncement(gather, FakeBuffers(), FakeCall());
  EXPECT_EQ(gather_copies.protocol, static_cast<uint32_t>(AnnouncedProtocol::kCopyEngine));
  EXPECT_EQ(gather_copies.output_address, uint64_t{0xb000});
  EXPECT_EQ(gather_copies.generation, 7u);
  gather_copies.protocol = gather_kernel.protocol;
  DeviceErrorRecord mismatch;
  EXPECT_FALSE(MismatchRecord(gather_kernel, gather_copies, 0, 1, 1, &mismatch));

  const AllToAllLayout to_all = ToAllLayout();
  const EntryAnnouncement to_all_kernel = AnnouncementOf(
      AllToAllParamsOf(FakeView(), to_all, FakeBuffers(), FakeCall()), AnnouncedProtocol::kDirect);
  EntryAnnouncement to_all_copies =
      AllToAllCopyEngineAnnouncement(to_all, FakeBuffers(), FakeCall());
  EXPECT_EQ(to_all_copies.protocol, static_cast<uint32_t>(AnnouncedProtocol::kCopyEngine));
  to_all_copies.protocol = to_all_kernel.protocol;
  EXPECT_FALSE(MismatchRecord(to_all_kernel, to_all_copies, 0, 1, 1, &mismatch));
  // The two collectives never agree with each other.
  EXPECT_TRUE(MismatchRecord(gather_copies, to_all_copies, 0, 1, 1, &mismatch));
}

TEST(LaunchParamsTest, CapturedCopyEngineParamsCarryTheViewFields) {
  CopyEngineGraphParams params;
  SetViewParams(FakeView(), FakeCall(), &params);
  ExpectViewFields(params);
}

}  // namespace
}  // namespace ltx
