// The resolution of a call: explicit protocols, the automatic size thresholds, graph capture,
// the copy-engine transport, block counts, timeouts and the errors of bad call options.
#include "ltx/runtime/resolved_call.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "kernels/protocols/copy_plan.h"
#include "kernels/wire/one_trip_layout.h"
#include "kernels/wire/phase_timestamps.h"

namespace ltx {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// A call on `world` ranks whose largest shard is `bytes`, resolved.
ResolvedCall ResolvedOf(Transport transport, const RuntimeOptions& options, int world,
                        Protocol protocol, int64_t bytes, bool capturing) {
  CallContext context;
  context.transport = transport;
  context.world_size = world;
  context.max_shard_bytes = bytes;
  context.shard_bytes = bytes;
  context.max_blocks = 132;
  context.capturing = capturing;
  CallOptions call;
  call.protocol = protocol;
  absl::StatusOr<ResolvedCall> resolved = ResolveCall(options, context, call);
  EXPECT_TRUE(resolved.ok()) << resolved.status();
  return resolved.ok() ? *resolved : ResolvedCall();
}

// The protocol of that call.
Protocol ProtocolOf(Transport transport, const RuntimeOptions& options, int world,
                    Protocol protocol, int64_t bytes, bool capturing) {
  return ResolvedOf(transport, options, world, protocol, bytes, capturing).protocol;
}

TEST(ResolvedCallTest, AnUnknownProtocolIsInvalidArgument) {
  CallContext context;
  context.world_size = 2;
  context.max_shard_bytes = kMiB;
  context.shard_bytes = kMiB;
  context.max_blocks = 132;
  CallOptions call;
  call.protocol = static_cast<Protocol>(4);
  const absl::StatusOr<ResolvedCall> resolved = ResolveCall(RuntimeOptions(), context, call);
  EXPECT_EQ(resolved.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(resolved.status().message()).find("protocol: unknown value 4"),
            std::string::npos)
      << resolved.status();
}

TEST(ResolvedCallTest, AutoPicksByTheLargestShard) {
  RuntimeOptions options;
  options.one_trip_max_bytes = 256 * 1024;
  options.copy_engine_min_bytes = 16 * kMiB;
  auto path = [&](int64_t bytes) {
    return ProtocolOf(Transport::kPeerStores, options, 4, Protocol::kAuto, bytes,
                      /*capturing=*/false);
  };
  EXPECT_EQ(path(0), Protocol::kOneTrip);
  EXPECT_EQ(path(256 * 1024), Protocol::kOneTrip);
  EXPECT_EQ(path(256 * 1024 + 1), Protocol::kDirect);
  EXPECT_EQ(path(16 * kMiB - 1), Protocol::kDirect);
  EXPECT_EQ(path(16 * kMiB), Protocol::kCopyEngine);
  EXPECT_EQ(path(int64_t{1} << 40), Protocol::kCopyEngine);
}

// Every choice says why, for the debug log.
TEST(ResolvedCallTest, EveryChoiceSaysWhy) {
  RuntimeOptions options;
  options.one_trip_max_bytes = 256 * 1024;
  options.copy_engine_min_bytes = 16 * kMiB;
  auto why = [&](Transport transport, Protocol protocol, int64_t bytes, bool capturing) {
    return std::string(
        ResolvedOf(transport, options, 4, protocol, bytes, capturing).protocol_reason);
  };
  EXPECT_EQ(why(Transport::kPeerStores, Protocol::kAuto, 1024, false),
            "auto: the largest shard is within the one-trip limit");
  EXPECT_EQ(why(Transport::kPeerStores, Protocol::kAuto, kMiB, false),
            "auto: above the one-trip limit, below copy_engine_min_bytes");
  EXPECT_EQ(why(Transport::kPeerStores, Protocol::kAuto, 64 * kMiB, true),
            "auto: a captured call above the one-trip limit");
  EXPECT_EQ(why(Transport::kPeerStores, Protocol::kAuto, 64 * kMiB, false),
            "auto: an eager call whose largest shard reaches copy_engine_min_bytes");
  EXPECT_EQ(why(Transport::kPeerStores, Protocol::kDirect, 1024, false), "CallOptions::protocol");
  EXPECT_EQ(why(Transport::kCopyEngine, Protocol::kDirect, 1024, false),
            "the copy-engine transport");
}

// The all-to-all follows the same rule by its largest piece: the copy engines for large eager
// calls (what ltx/c_api.h and the Python docstring say), the kernels otherwise.
TEST(ResolvedCallTest, AllToAllAutoTakesTheCopyEnginesForLargeEagerPieces) {
  RuntimeOptions options;
  CallContext context;
  context.collective = Collective::kAllToAll;
  context.transport = Transport::kPeerStores;
  context.world_size = 8;
  context.max_blocks = 132;
  context.max_shard_bytes = options.copy_engine_min_bytes;
  context.shard_bytes = context.max_shard_bytes;
  EXPECT_EQ(ResolveCall(options, context, CallOptions())->protocol, Protocol::kCopyEngine);
  context.capturing = true;
  EXPECT_EQ(ResolveCall(options, context, CallOptions())->protocol, Protocol::kDirect);
  context.capturing = false;
  context.max_shard_bytes = options.copy_engine_min_bytes - 1;
  EXPECT_EQ(ResolveCall(options, context, CallOptions())->protocol, Protocol::kDirect);
  // The copy-engine transport pairs its calls on the host at call time: no capture, refused
  // alike on every rank (Unimplemented; the per-rank call stops the Runtime).
  context.transport = Transport::kCopyEngine;
  context.capturing = true;
  EXPECT_EQ(ResolveCall(options, context, CallOptions()).status().code(),
            absl::StatusCode::kUnimplemented);
}

TEST(ResolvedCallTest, AnOpWithWorkBlocksGetsThemWithinTheBudget) {
  const RuntimeOptions options;
  CallContext context;
  context.collective = Collective::kAllReduceRmsNorm;
  context.world_size = 2;
  context.max_blocks = 132;
  context.max_shard_bytes = context.shard_bytes = 64 << 10;
  context.work_blocks = 17;  // Rows.
  EXPECT_EQ(ResolveCall(options, context, CallOptions())->blocks, 17);
  context.work_blocks = 1000;
  EXPECT_EQ(ResolveCall(options, context, CallOptions())->blocks, 132);
  CallOptions call;
  call.blocks = 3;
  EXPECT_EQ(ResolveCall(options, context, call)->blocks, 3);
}

TEST(ResolvedCallTest, OneTripLimitFollowsTheWorldSizeByDefault) {
  EXPECT_EQ(OneTripLimit(kOneTripLimitByWorldSize, 1), kOneTripMaxShardBytes);
  EXPECT_EQ(OneTripLimit(kOneTripLimitByWorldSize, 2), kOneTripMaxShardBytes);
  EXPECT_EQ(OneTripLimit(kOneTripLimitByWorldSize, 4), 256 * 1024);
  EXPECT_EQ(OneTripLimit(kOneTripLimitByWorldSize, 8), 768 * 1024 / 7);
  EXPECT_EQ(OneTripLimit(0, 4), 0);
  EXPECT_EQ(OneTripLimit(100000, 2), 100000);

  const RuntimeOptions options;  // The defaults.
  auto path = [&](int world, int64_t bytes) {
    return ProtocolOf(Transport::kPeerStores, options, world, Protocol::kAuto, bytes,
                      /*capturing=*/false);
  };
  EXPECT_EQ(path(2, 512 * 1024), Protocol::kOneTrip);
  EXPECT_EQ(path(2, 512 * 1024 + 1), Protocol::kDirect);
  EXPECT_EQ(path(4, 256 * 1024), Protocol::kOneTrip);
  EXPECT_EQ(path(4, 256 * 1024 + 1), Protocol::kDirect);
}

TEST(ResolvedCallTest, CapturedCallsStayOnKernels) {
  RuntimeOptions options;
  options.copy_engine_min_bytes = 16 * kMiB;
  EXPECT_EQ(ProtocolOf(Transport::kPeerStores, options, 4, Protocol::kAuto, 64 * kMiB,
                       /*capturing=*/true),
            Protocol::kDirect);
  EXPECT_EQ(ProtocolOf(Transport::kPeerStores, options, 4, Protocol::kAuto, 1024,
                       /*capturing=*/true),
            Protocol::kOneTrip);
}

TEST(ResolvedCallTest, ZeroThresholdsTurnPathsOff) {
  RuntimeOptions options;
  options.one_trip_max_bytes = 0;
  options.copy_engine_min_bytes = 0;
  for (int64_t bytes : {int64_t{1}, int64_t{4096}, 64 * kMiB}) {
    EXPECT_EQ(ProtocolOf(Transport::kPeerStores, options, 4, Protocol::kAuto, bytes, false),
              Protocol::kDirect)
        << bytes;
  }
  // An empty op is one-trip even then: nothing exceeds a limit of 0.
  EXPECT_EQ(ProtocolOf(Transport::kPeerStores, options, 4, Protocol::kAuto, 0, false),
            Protocol::kOneTrip);
}

TEST(ResolvedCallTest, ExplicitProtocolsAreObeyed) {
  const RuntimeOptions options;
  for (bool capturing : {false, true}) {
    auto path = [&](Protocol protocol, int64_t bytes) {
      return ProtocolOf(Transport::kPeerStores, options, 4, protocol, bytes, capturing);
    };
    EXPECT_EQ(path(Protocol::kDirect, 1), Protocol::kDirect);
    EXPECT_EQ(path(Protocol::kOneTrip, kOneTripMaxShardBytes), Protocol::kOneTrip);
    EXPECT_EQ(path(Protocol::kCopyEngine, 1), Protocol::kCopyEngine);
  }
}

TEST(ResolvedCallTest, CopyEngineTransportTakesEveryCall) {
  const RuntimeOptions options;
  for (Protocol protocol :
       {Protocol::kAuto, Protocol::kDirect, Protocol::kOneTrip, Protocol::kCopyEngine}) {
    EXPECT_EQ(ProtocolOf(Transport::kCopyEngine, options, 4, protocol, 1024, false),
              Protocol::kCopyEngine);
  }
}

TEST(ResolvedCallTest, BlocksFollowTheProtocolAndTheCallsRequest) {
  RuntimeOptions options;
  options.copy_engine_min_bytes = 0;
  CallContext context;
  context.world_size = 4;
  context.max_blocks = 132;
  context.max_shard_bytes = 4 * kMiB;
  context.shard_bytes = 2 * kMiB;
  absl::StatusOr<ResolvedCall> direct = ResolveCall(options, context, CallOptions{});
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_EQ(direct->protocol, Protocol::kDirect);
  EXPECT_EQ(direct->blocks, AutoBlockCount(2 * kMiB, 4, 132));

  context.max_shard_bytes = 8192;
  context.shard_bytes = 4096;
  absl::StatusOr<ResolvedCall> one_trip = ResolveCall(options, context, CallOptions{});
  ASSERT_TRUE(one_trip.ok()) << one_trip.status();
  EXPECT_EQ(one_trip->protocol, Protocol::kOneTrip);
  // Every rank of a one-trip op launches the same grid: it follows the largest shard.
  EXPECT_EQ(one_trip->blocks, OneTripBlockCount(OneTripLines(8192), 4, 132));

  CallOptions call;
  call.blocks = 1000;
  absl::StatusOr<ResolvedCall> capped = ResolveCall(options, context, call);
  ASSERT_TRUE(capped.ok()) << capped.status();
  EXPECT_EQ(capped->blocks, 132);
  call.blocks = 3;
  EXPECT_EQ(ResolveCall(options, context, call)->blocks, 3);
}

// Phase timestamps go to the kernels (direct and one-trip), early start to one-trip calls only.
TEST(ResolvedCallTest, PhaseTimestampsGoToKernelsAndEarlyStartToOneTripCalls) {
  RuntimeOptions options;
  options.copy_engine_min_bytes = 0;
  CallContext context;
  context.world_size = 2;
  context.max_blocks = 132;
  context.max_shard_bytes = 8192;
  context.shard_bytes = 8192;
  PhaseTimestamps timestamps;
  CallOptions call;
  call.phase_timestamps = &timestamps;
  absl::StatusOr<ResolvedCall> one_trip = ResolveCall(options, context, call);
  ASSERT_TRUE(one_trip.ok()) << one_trip.status();
  EXPECT_EQ(one_trip->protocol, Protocol::kOneTrip);
  EXPECT_EQ(one_trip->phase_timestamps, &timestamps);
  EXPECT_FALSE(one_trip->early_start);
  call.early_start = true;
  EXPECT_TRUE(ResolveCall(options, context, call)->early_start);
  // A rank that shares its GPU never starts early (kernels/PROTOCOL.md).
  CallContext shared = context;
  shared.shares_gpu = true;
  EXPECT_FALSE(ResolveCall(options, shared, call)->early_start);
  EXPECT_EQ(ResolveCall(options, shared, call)->protocol, Protocol::kOneTrip);
  call.protocol = Protocol::kDirect;
  absl::StatusOr<ResolvedCall> direct = ResolveCall(options, context, call);
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_EQ(direct->phase_timestamps, &timestamps);
  EXPECT_FALSE(direct->early_start);
  call.protocol = Protocol::kCopyEngine;
  absl::StatusOr<ResolvedCall> copies = ResolveCall(options, context, call);
  ASSERT_TRUE(copies.ok()) << copies.status();
  EXPECT_EQ(copies->phase_timestamps, nullptr);
  EXPECT_FALSE(copies->early_start);
  EXPECT_EQ(ResolveCall(options, context, CallOptions{})->phase_timestamps, nullptr);
}

TEST(ResolvedCallTest, TimeoutIsTheCallsOrTheRuntimes) {
  RuntimeOptions options;
  options.timeout = absl::Seconds(7);
  CallContext context;
  context.capturing = true;
  absl::StatusOr<ResolvedCall> resolved = ResolveCall(options, context, CallOptions{});
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->timeout, absl::Seconds(7));
  EXPECT_TRUE(resolved->capturing);
  CallOptions call;
  call.timeout = absl::Milliseconds(250);
  EXPECT_EQ(ResolveCall(options, context, call)->timeout, absl::Milliseconds(250));
}

TEST(ResolvedCallTest, BadCallOptionsAreInvalidArguments) {
  const RuntimeOptions options;
  CallContext context;
  context.world_size = 2;
  CallOptions call;
  for (absl::Duration timeout :
       {absl::ZeroDuration(), absl::Seconds(-1), absl::InfiniteDuration()}) {
    call.timeout = timeout;
    absl::StatusOr<ResolvedCall> resolved = ResolveCall(options, context, call);
    EXPECT_TRUE(absl::IsInvalidArgument(resolved.status())) << timeout;
    EXPECT_NE(resolved.status().message().find("timeout"), absl::string_view::npos);
  }
  call = CallOptions{};
  call.blocks = -1;
  EXPECT_TRUE(absl::IsInvalidArgument(ResolveCall(options, context, call).status()));

  call = CallOptions{};
  call.protocol = Protocol::kOneTrip;
  context.max_shard_bytes = kOneTripMaxShardBytes + 1;
  absl::StatusOr<ResolvedCall> too_big = ResolveCall(options, context, call);
  EXPECT_TRUE(absl::IsInvalidArgument(too_big.status()));
  EXPECT_NE(too_big.status().message().find("kOneTrip"), absl::string_view::npos);
  context.max_shard_bytes = kOneTripMaxShardBytes;
  EXPECT_TRUE(ResolveCall(options, context, call).ok());
}

TEST(ResolvedCallTest, CallsOfAnEarlierGenerationAreAborted) {
  const RuntimeOptions options;
  CallContext context;
  context.world_size = 2;
  context.rank = 1;
  context.generation = 4;
  CallOptions call;
  // Unset: the current generation, which the resolved call carries.
  absl::StatusOr<ResolvedCall> resolved = ResolveCall(options, context, call);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->generation, 4u);
  call.generation = 4;
  EXPECT_TRUE(ResolveCall(options, context, call).ok());
  call.generation = 3;
  resolved = ResolveCall(options, context, call);
  EXPECT_TRUE(absl::IsAborted(resolved.status())) << resolved.status();
  EXPECT_EQ(resolved.status().message(),
            "rank 1: call issued for reset generation 3, but the Runtime was Reset since (now 4); "
            "dropped, nothing was launched");
  // Before any other check: a stale call is dropped whatever its other options.
  call.blocks = -1;
  EXPECT_TRUE(absl::IsAborted(ResolveCall(options, context, call).status()));
  call = CallOptions{};
  call.generation = 5;
  resolved = ResolveCall(options, context, call);
  EXPECT_TRUE(absl::IsInvalidArgument(resolved.status())) << resolved.status();
  EXPECT_NE(resolved.status().message().find("generation 5"), absl::string_view::npos);
}

}  // namespace
}  // namespace ltx

namespace ltx {
namespace {

CallContext AllToAllContext(Transport transport, int64_t bytes, bool capturing) {
  CallContext context;
  context.collective = Collective::kAllToAll;
  context.transport = transport;
  context.world_size = 4;
  context.max_shard_bytes = bytes;
  context.shard_bytes = bytes;
  context.max_blocks = 132;
  context.capturing = capturing;
  return context;
}

TEST(ResolvedCallTest, AllToAllTakesOneTripForSmallPiecesAndTheDirectKernelOtherwise) {
  RuntimeOptions options;  // The default limits: 256 KiB pieces on 4 ranks.
  options.copy_engine_min_bytes = 16 * kMiB;
  const int64_t limit = OneTripLimit(kOneTripLimitByWorldSize, 4);
  for (bool capturing : {false, true}) {
    for (int64_t bytes : {int64_t{0}, int64_t{1024}, limit, limit + 1, 16 * kMiB - 1}) {
      for (Protocol protocol : {Protocol::kAuto, Protocol::kDirect}) {
        CallOptions call;
        call.protocol = protocol;
        const absl::StatusOr<ResolvedCall> resolved =
            ResolveCall(options, AllToAllContext(Transport::kPeerStores, bytes, capturing), call);
        ASSERT_TRUE(resolved.ok()) << resolved.status();
        // Below copy_engine_min_bytes: the kernels.
        if (protocol == Protocol::kAuto && bytes <= limit) {
          EXPECT_EQ(resolved->protocol, Protocol::kOneTrip) << bytes;
          EXPECT_EQ(resolved->blocks, OneTripBlockCount(OneTripLines(bytes), 4, 132));
        } else {
          EXPECT_EQ(resolved->protocol, Protocol::kDirect) << bytes;
          EXPECT_EQ(resolved->blocks, AutoBlockCount(bytes, 4, 132));
        }
      }
    }
  }
  options.one_trip_max_bytes = 0;
  const absl::StatusOr<ResolvedCall> off =
      ResolveCall(options, AllToAllContext(Transport::kPeerStores, 1024, false), CallOptions());
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->protocol, Protocol::kDirect);
}

// As for the AllGather: eager calls whose largest piece reaches copy_engine_min_bytes take the
// copy engines, captured ones and calls with the threshold at 0 keep to the direct kernel.
TEST(ResolvedCallTest, AllToAllTakesTheCopyEnginesForLargeEagerPieces) {
  RuntimeOptions options;
  options.copy_engine_min_bytes = 16 * kMiB;
  for (int64_t bytes : {16 * kMiB, 64 * kMiB}) {
    for (bool capturing : {false, true}) {
      const absl::StatusOr<ResolvedCall> resolved = ResolveCall(
          options, AllToAllContext(Transport::kPeerStores, bytes, capturing), CallOptions());
      ASSERT_TRUE(resolved.ok()) << resolved.status();
      EXPECT_EQ(resolved->protocol, capturing ? Protocol::kDirect : Protocol::kCopyEngine)
          << bytes;
    }
  }
  options.copy_engine_min_bytes = 0;
  const absl::StatusOr<ResolvedCall> never = ResolveCall(
      options, AllToAllContext(Transport::kPeerStores, 64 * kMiB, false), CallOptions());
  ASSERT_TRUE(never.ok()) << never.status();
  EXPECT_EQ(never->protocol, Protocol::kDirect);
}

TEST(ResolvedCallTest, AllToAllOnOneTripNeedsEveryPieceToFitTheStaging) {
  const RuntimeOptions options;
  CallOptions call;
  call.protocol = Protocol::kOneTrip;
  // Above the automatic limit on 4 ranks, but within the staging: obeyed.
  absl::StatusOr<ResolvedCall> resolved = ResolveCall(
      options, AllToAllContext(Transport::kPeerStores, kOneTripMaxShardBytes, false), call);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->protocol, Protocol::kOneTrip);
  resolved = ResolveCall(
      options, AllToAllContext(Transport::kPeerStores, kOneTripMaxShardBytes + 1, true), call);
  EXPECT_EQ(resolved.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(resolved.status().message().find("all-to-all"), absl::string_view::npos)
      << resolved.status();
}

TEST(ResolvedCallTest, AllToAllTakesTheCopyEnginesWhenAskedAndOnTheirTransport) {
  const RuntimeOptions options;
  for (bool capturing : {false, true}) {
    for (int64_t bytes : {int64_t{0}, int64_t{1024}, 64 * kMiB}) {
      CallOptions call;
      call.protocol = Protocol::kCopyEngine;
      absl::StatusOr<ResolvedCall> resolved =
          ResolveCall(options, AllToAllContext(Transport::kPeerStores, bytes, capturing), call);
      ASSERT_TRUE(resolved.ok()) << resolved.status();
      EXPECT_EQ(resolved->protocol, Protocol::kCopyEngine) << bytes;
      EXPECT_EQ(resolved->capturing, capturing);
      for (Protocol protocol : {Protocol::kAuto, Protocol::kDirect, Protocol::kOneTrip}) {
        if (protocol == Protocol::kOneTrip && bytes > kOneTripMaxShardBytes) continue;
        call.protocol = protocol;
        resolved =
            ResolveCall(options, AllToAllContext(Transport::kCopyEngine, bytes, capturing), call);
        if (capturing) {  // The copy-engine transport pairs its calls on the host: no capture.
          EXPECT_EQ(resolved.status().code(), absl::StatusCode::kUnimplemented);
          continue;
        }
        ASSERT_TRUE(resolved.ok()) << resolved.status();
        EXPECT_EQ(resolved->protocol, Protocol::kCopyEngine) << bytes;
      }
    }
  }
}

// Where ranks share a GPU, kAuto keeps to the kernels on every rank (alone on its GPU or not),
// and explicit copy-engine calls are refused where the copy streams outnumber the queues.
TEST(ResolvedCallTest, SharedGpusTakeTheCopyEnginesOnlyWhenAskedAndWhereTheyFit) {
  RuntimeOptions options;
  CallContext context;
  context.world_size = 8;
  context.max_shard_bytes = int64_t{1} << 30;
  context.shard_bytes = context.max_shard_bytes;
  context.max_blocks = 16;
  context.ranks_share_gpus = true;
  for (bool shares_gpu : {false, true}) {
    context.shares_gpu = shares_gpu;
    absl::StatusOr<ResolvedCall> automatic = ResolveCall(options, context, CallOptions());
    ASSERT_TRUE(automatic.ok()) << automatic.status();
    EXPECT_EQ(automatic->protocol, Protocol::kDirect);
    EXPECT_NE(std::string(automatic->protocol_reason).find("ranks share GPUs"), std::string::npos);
  }
  CallOptions copies;
  copies.protocol = Protocol::kCopyEngine;
  absl::StatusOr<ResolvedCall> fitting = ResolveCall(options, context, copies);
  ASSERT_TRUE(fitting.ok()) << fitting.status();
  EXPECT_EQ(fitting->protocol, Protocol::kCopyEngine);
  context.copy_engines_refused = "the copy engines cannot serve 8 ranks on GPU 0";
  const absl::StatusOr<ResolvedCall> refused = ResolveCall(options, context, copies);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(refused.status().message(), context.copy_engines_refused);
  EXPECT_TRUE(ResolveCall(options, context, CallOptions()).ok());
}

// The reductions run the pull protocol's kernel whatever their size, captured or not; the other
// paths are refused.
TEST(ResolvedCallTest, ReductionsTakeTheDirectKernelOnly) {
  RuntimeOptions options;
  for (Collective collective : {Collective::kAllReduce, Collective::kReduceScatter}) {
    for (int64_t bytes : {int64_t{0}, int64_t{4096}, 64 * kMiB}) {
      for (Protocol protocol : {Protocol::kAuto, Protocol::kDirect}) {
        CallContext context;
        context.collective = collective;
        context.world_size = 4;
        context.max_shard_bytes = bytes;
        context.shard_bytes = bytes;
        context.max_blocks = 132;
        PhaseTimestamps timestamps;
        CallOptions call;
        call.protocol = protocol;
        call.phase_timestamps = &timestamps;
        const absl::StatusOr<ResolvedCall> resolved = ResolveCall(options, context, call);
        ASSERT_TRUE(resolved.ok()) << resolved.status();
        EXPECT_EQ(resolved->protocol, Protocol::kDirect);
        EXPECT_EQ(resolved->blocks, AutoBlockCount(bytes, 4, 132));
        // The reductions' kernel records no phases.
        EXPECT_EQ(resolved->phase_timestamps, nullptr);
      }
    }
    CallContext context;
    context.collective = collective;
    context.world_size = 2;
    context.max_blocks = 8;
    for (Protocol protocol : {Protocol::kOneTrip, Protocol::kCopyEngine}) {
      CallOptions call;
      call.protocol = protocol;
      const absl::Status refused = ResolveCall(options, context, call).status();
      EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << refused;
      EXPECT_NE(std::string(refused.message()).find("kernels only"), std::string::npos);
    }
    context.transport = Transport::kCopyEngine;
    const absl::Status refused = ResolveCall(options, context, CallOptions()).status();
    EXPECT_EQ(refused.code(), absl::StatusCode::kUnimplemented) << refused;
    EXPECT_NE(std::string(refused.message()).find("peer-store transport"), std::string::npos);
  }
}

// An AllReduce call on 4 ranks whose input holds `bytes` per rank, in place or not, resolved
// with `options` and `call`.
absl::StatusOr<ResolvedCall> ResolveAllReduce(const RuntimeOptions& options, int64_t bytes,
                                              bool in_place, const CallOptions& call = {}) {
  CallContext context;
  context.collective = Collective::kAllReduce;
  context.world_size = 4;
  context.max_shard_bytes = bytes;
  context.shard_bytes = bytes;
  context.max_blocks = 132;
  context.in_place = in_place;
  return ResolveCall(options, context, call);
}

// The AllReduce runs two-shot from two_shot_min_bytes per rank up and in place (but empty),
// one-shot otherwise, and says why; the call's threshold overrides the Runtime's; the
// ReduceScatter never runs two-shot.
TEST(ResolvedCallTest, AllReduceTakesTheTwoShotAboveItsThresholdAndInPlace) {
  RuntimeOptions options;
  EXPECT_EQ(options.two_shot_min_bytes, kMiB);
  options.two_shot_min_bytes = 256 * 1024;
  auto two_shot = [&](int64_t bytes, bool in_place, const CallOptions& call) {
    const absl::StatusOr<ResolvedCall> resolved =
        ResolveAllReduce(options, bytes, in_place, call);
    EXPECT_TRUE(resolved.ok()) << resolved.status();
    if (!resolved.ok()) return false;
    EXPECT_EQ(resolved->protocol, Protocol::kDirect);
    return resolved->two_shot;
  };
  for (bool in_place : {false, true}) {
    EXPECT_FALSE(two_shot(0, in_place, {}));
    EXPECT_EQ(two_shot(2, in_place, {}), in_place);
    EXPECT_EQ(two_shot(256 * 1024 - 1, in_place, {}), in_place);
    EXPECT_TRUE(two_shot(256 * 1024, in_place, {}));
    EXPECT_TRUE(two_shot(64 * kMiB, in_place, {}));
    CallOptions always;
    always.two_shot_min_bytes = 0;
    CallOptions never;
    never.two_shot_min_bytes = kNeverTwoShot;
    for (int64_t bytes : {int64_t{0}, int64_t{2}, 64 * kMiB}) {
      EXPECT_EQ(two_shot(bytes, in_place, always), bytes > 0);
      EXPECT_EQ(two_shot(bytes, in_place, never), bytes > 0 && in_place);
    }
  }
  auto why = [&](int64_t bytes, bool in_place) {
    const absl::StatusOr<ResolvedCall> resolved = ResolveAllReduce(options, bytes, in_place);
    return resolved.ok() ? std::string(resolved->protocol_reason) : resolved.status().ToString();
  };
  EXPECT_EQ(why(0, true), "an empty AllReduce: the pull protocol's one-shot, which reads nothing");
  EXPECT_EQ(why(2, true),
            "an in-place AllReduce: the pull protocol's two-shot, whose ops read no chunk they "
            "store");
  EXPECT_EQ(why(kMiB, false),
            "auto: an AllReduce of at least two_shot_min_bytes per rank: the pull protocol's "
            "two-shot");
  EXPECT_EQ(why(2, false),
            "auto: an AllReduce below two_shot_min_bytes per rank: the pull protocol's one-shot");
  CallOptions always;
  always.two_shot_min_bytes = 0;
  const absl::StatusOr<ResolvedCall> forced = ResolveAllReduce(options, 2, false, always);
  ASSERT_TRUE(forced.ok()) << forced.status();
  EXPECT_EQ(std::string(forced->protocol_reason),
            "an AllReduce of at least CallOptions::two_shot_min_bytes per rank: the pull "
            "protocol's two-shot");
  CallOptions never;
  never.two_shot_min_bytes = kNeverTwoShot;
  const absl::StatusOr<ResolvedCall> kept = ResolveAllReduce(options, kMiB, false, never);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(std::string(kept->protocol_reason),
            "an AllReduce below CallOptions::two_shot_min_bytes per rank: the pull protocol's "
            "one-shot");
  CallOptions negative;
  negative.two_shot_min_bytes = -1;
  const absl::Status refused = ResolveAllReduce(options, kMiB, false, negative).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << refused;
  EXPECT_NE(std::string(refused.message()).find("two_shot_min_bytes"), std::string::npos);
  CallContext scatter;
  scatter.collective = Collective::kReduceScatter;
  scatter.world_size = 4;
  scatter.max_shard_bytes = 64 * kMiB;
  scatter.max_blocks = 132;
  const absl::StatusOr<ResolvedCall> resolved = ResolveCall(options, scatter, CallOptions());
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_FALSE(resolved->two_shot);
  EXPECT_EQ(std::string(resolved->protocol_reason), "a reduction: the pull protocol's kernel");
  // The collectives other than the AllReduce ignore it, a negative value too.
  EXPECT_TRUE(ResolveCall(options, scatter, negative).ok());
}

// Checks that `context` (on the peer-store transport) runs on the direct kernel: kAuto and kDirect
// take it, for every shard size, captured or not; the one-trip and copy-engine paths and the
// copy-engine transport are Unimplemented, naming `why` (alike on every rank).
void ExpectDirectKernelOnly(CallContext context, const std::string& why) {
  RuntimeOptions options;
  options.copy_engine_min_bytes = 16 * kMiB;
  for (bool capturing : {false, true}) {
    for (int64_t bytes : {int64_t{0}, int64_t{4096}, 64 * kMiB}) {
      context.transport = Transport::kPeerStores;
      context.capturing = capturing;
      context.shard_bytes = bytes;
      context.max_shard_bytes = bytes;
      for (Protocol protocol : {Protocol::kAuto, Protocol::kDirect}) {
        CallOptions call;
        call.protocol = protocol;
        const absl::StatusOr<ResolvedCall> resolved = ResolveCall(options, context, call);
        ASSERT_TRUE(resolved.ok()) << resolved.status();
        EXPECT_EQ(resolved->protocol, Protocol::kDirect) << bytes;
      }
      for (Protocol protocol : {Protocol::kOneTrip, Protocol::kCopyEngine}) {
        CallOptions call;
        call.protocol = protocol;
        const absl::Status refused = ResolveCall(options, context, call).status();
        EXPECT_EQ(refused.code(), absl::StatusCode::kUnimplemented) << refused;
        EXPECT_NE(std::string(refused.message()).find(why), std::string::npos) << refused;
      }
      context.transport = Transport::kCopyEngine;
      const absl::Status refused = ResolveCall(options, context, CallOptions()).status();
      EXPECT_EQ(refused.code(), absl::StatusCode::kUnimplemented) << refused;
      EXPECT_NE(std::string(refused.message()).find("copy-engine transport"), std::string::npos);
    }
  }
}

// A call of several tensors (an all-to-all or an AllGather) runs on the direct kernel, with the
// automatic block count.
TEST(ResolvedCallTest, CallsOfSeveralTensorsTakeTheDirectKernelOnly) {
  for (Collective collective : {Collective::kAllToAll, Collective::kAllGather}) {
    CallContext context = AllToAllContext(Transport::kPeerStores, 4096, false);
    context.collective = collective;
    context.tensors = 3;
    ExpectDirectKernelOnly(context, "3 tensors");
    const absl::StatusOr<ResolvedCall> resolved =
        ResolveCall(RuntimeOptions(), context, CallOptions());
    ASSERT_TRUE(resolved.ok()) << resolved.status();
    EXPECT_EQ(resolved->blocks, AutoBlockCount(4096, 4, 132));
  }
}

// An AllGather with FP8 on the wire runs on its own kernels (Protocol::kDirect).
TEST(ResolvedCallTest, FP8OnTheWireTakesThePullKernelsOnly) {
  CallContext context = AllToAllContext(Transport::kPeerStores, 4096, false);
  context.collective = Collective::kAllGather;
  context.wire = WireFormat::kFp8E4M3;
  ExpectDirectKernelOnly(context, "FP8 on the wire");
  const absl::StatusOr<ResolvedCall> resolved =
      ResolveCall(RuntimeOptions(), context, CallOptions());
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(std::string(resolved->protocol_reason), "FP8 on the wire: its own kernels");
}

// An FP8 AllGather moves one tensor per op: several are refused alike on every rank
// (UNIMPLEMENTED: a coordinated call leaves the Runtime usable, a per-rank call stops it); an
// FP8 all-to-all takes several.
TEST(ResolvedCallTest, FP8AllGatherOfSeveralTensorsIsRefusedAndAnAllToAllIsNot) {
  CallContext context = AllToAllContext(Transport::kPeerStores, 4096, false);
  context.wire = WireFormat::kFp8E4M3;
  context.tensors = 3;
  context.collective = Collective::kAllGather;
  const absl::Status refused = ResolveCall(RuntimeOptions(), context, CallOptions()).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnimplemented) << refused;
  EXPECT_NE(std::string(refused.message()).find("one tensor per op, not 3"), std::string::npos)
      << refused;
  context.collective = Collective::kAllToAll;
  EXPECT_TRUE(ResolveCall(RuntimeOptions(), context, CallOptions()).ok());
}

// The generation check alone, as a per-rank call whose shape is refused also applies it: an
// older generation's call is Aborted (it stops nothing), a later one InvalidArgument.
TEST(ResolvedCallTest, CheckGenerationAbortsStragglersAndRefusesFutureGenerations) {
  EXPECT_TRUE(CheckGeneration(1, absl::nullopt, 4).ok());
  EXPECT_TRUE(CheckGeneration(1, 4, 4).ok());
  const absl::Status straggler = CheckGeneration(1, 3, 4);
  EXPECT_EQ(straggler.code(), absl::StatusCode::kAborted) << straggler;
  EXPECT_NE(std::string(straggler.message()).find("rank 1"), std::string::npos) << straggler;
  EXPECT_EQ(CheckGeneration(1, 5, 4).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ltx
