// The resolution of a collective call: protocol, block count and timeout.
#include "ltx/runtime/resolved_call.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kernels/protocols/copy_plan.h"
#include "kernels/wire/one_trip_layout.h"

namespace ltx {
namespace {

// The protocol of a call, and why (a static string, for the debug log).
Protocol ChooseProtocol(const RuntimeOptions& options, const CallContext& context,
                        Protocol requested, const char** reason) {
  if (context.transport == Transport::kCopyEngine) {
    *reason = "the copy-engine transport";
    return Protocol::kCopyEngine;
  }
  if (IsReduction(context.collective)) {
    *reason = "a reduction: the pull protocol's kernel";
    return Protocol::kDirect;
  }
  if (context.tensors > 1) {
    *reason = "several tensors in one op: the direct kernel";
    return Protocol::kDirect;
  }
  if (context.wire == WireFormat::kFp8E4M3) {
    *reason = "FP8 on the wire: its own kernels";
    return Protocol::kDirect;
  }
  if (requested != Protocol::kAuto) {
    *reason = "CallOptions::protocol";
    return requested;
  }
  // For both collectives by what one rank sends one target (an AllGather shard, the largest
  // all-to-all piece): on 2 x H200 the all-to-all's kernels and copy engines tie at 30 MiB
  // pieces and the copy engines lead by 3 % at 64 MiB, as for the AllGather.
  if (!context.capturing && !context.ranks_share_gpus &&
      options.copy_engine_min_bytes > 0 &&
      context.max_shard_bytes >= options.copy_engine_min_bytes) {
    *reason = "auto: an eager call whose largest shard reaches copy_engine_min_bytes";
    return Protocol::kCopyEngine;
  }
  if (context.max_shard_bytes <= OneTripLimit(options.one_trip_max_bytes, context.world_size)) {
    *reason = "auto: the largest shard is within the one-trip limit";
    return Protocol::kOneTrip;
  }
  *reason = context.capturing          ? "auto: a captured call above the one-trip limit"
            : context.ranks_share_gpus ? "auto: above the one-trip limit, ranks share GPUs"
                                       : "auto: above the one-trip limit, below copy_engine_min_bytes";
  return Protocol::kDirect;
}

// Whether an AllReduce runs two-shot, and why (a static string, for the debug log).
bool ChooseTwoShot(const RuntimeOptions& options, const CallContext& context,
                   const CallOptions& call, const char** reason) {
  if (context.max_shard_bytes == 0) {
    *reason = "an empty AllReduce: the pull protocol's one-shot, which reads nothing";
    return false;
  }
  if (context.in_place) {
    *reason = "an in-place AllReduce: the pull protocol's two-shot, whose ops read no chunk "
              "they store";
    return true;
  }
  const bool per_call = call.two_shot_min_bytes.has_value();
  if (context.max_shard_bytes >= call.two_shot_min_bytes.value_or(options.two_shot_min_bytes)) {
    *reason = per_call ? "an AllReduce of at least CallOptions::two_shot_min_bytes per rank: the "
                         "pull protocol's two-shot"
                       : "auto: an AllReduce of at least two_shot_min_bytes per rank: the pull "
                         "protocol's two-shot";
    return true;
  }
  *reason = per_call ? "an AllReduce below CallOptions::two_shot_min_bytes per rank: the pull "
                       "protocol's one-shot"
                     : "auto: an AllReduce below two_shot_min_bytes per rank: the pull "
                       "protocol's one-shot";
  return false;
}

int ChooseBlocks(const CallContext& context, Protocol protocol, int requested) {
  if (requested > 0) return std::min(requested, context.max_blocks);
  if (context.work_blocks > 0) {
    return static_cast<int>(std::min<int64_t>(context.work_blocks, context.max_blocks));
  }
  if (protocol == Protocol::kOneTrip) {
    return OneTripBlockCount(OneTripLines(context.max_shard_bytes), context.world_size,
                             context.max_blocks);
  }
  return AutoBlockCount(context.shard_bytes, context.world_size, context.max_blocks);
}


}  // namespace

absl::Status CheckGeneration(int rank, const absl::optional<uint64_t>& requested,
                             uint64_t current) {
  if (!requested.has_value() || *requested == current) return absl::OkStatus();
  if (*requested < current) {
    return absl::AbortedError(absl::StrFormat(
        "rank %d: call issued for reset generation %d, but the Runtime was Reset since (now %d); "
        "dropped, nothing was launched",
        rank, *requested, current));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "rank %d: call issued for reset generation %d, but the Runtime is at generation %d "
      "(pass a value read from Runtime::generation())",
      rank, *requested, current));
}

int64_t OneTripLimit(int64_t one_trip_max_bytes, int world_size) {
  if (one_trip_max_bytes != kOneTripLimitByWorldSize) return one_trip_max_bytes;
  const int peers = std::max(world_size - 1, 1);
  return std::min(kOneTripMaxShardBytes, kOneTripIncomingBytes / peers);
}

absl::StatusOr<ResolvedCall> ResolveCall(const RuntimeOptions& options, const CallContext& context,
                                         const CallOptions& call) {
  const absl::Status generation =
      CheckGeneration(context.rank, call.generation, context.generation);
  if (!generation.ok()) return generation;
  if (std::find(std::begin(kAllProtocols), std::end(kAllProtocols), call.protocol) ==
      std::end(kAllProtocols)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("protocol: unknown value %d", static_cast<int>(call.protocol)));
  }
  if (IsReduction(context.collective)) {
    if (context.transport == Transport::kCopyEngine) {
      return absl::UnimplementedError(absl::StrCat(
          CollectiveName(context.collective),
          " needs the peer-store transport: its ranks read each other's inputs through peer "
          "pointers"));
    }
    if (call.protocol == Protocol::kOneTrip || call.protocol == Protocol::kCopyEngine) {
      return absl::InvalidArgumentError(absl::StrCat(
          CollectiveName(context.collective), " runs on kernels only (the pull protocol): pass "
          "Protocol::kAuto or kDirect, not ", ProtocolName(call.protocol)));
    }
  }
  if (context.transport == Transport::kCopyEngine && context.capturing) {
    return absl::UnimplementedError(
        "copy-engine calls can be captured into a CUDA graph only on the peer-store transport "
        "(the copy-engine transport pairs its calls on the host at call time)");
  }
  if (context.tensors > 1 &&
      (context.transport == Transport::kCopyEngine || call.protocol == Protocol::kOneTrip ||
       call.protocol == Protocol::kCopyEngine)) {
    return absl::UnimplementedError(absl::StrCat(
        CollectiveName(context.collective), " of ", context.tensors,
        " tensors in one op runs on the direct kernel only (the peer-store transport, "
        "Protocol::kAuto or kDirect), not on ",
        context.transport == Transport::kCopyEngine ? "the copy-engine transport"
                                                    : ProtocolName(call.protocol)));
  }
  if (context.wire == WireFormat::kFp8E4M3 &&
      (context.transport == Transport::kCopyEngine || call.protocol == Protocol::kOneTrip ||
       call.protocol == Protocol::kCopyEngine)) {
    return absl::UnimplementedError(absl::StrCat(
        CollectiveName(context.collective),
        " with FP8 on the wire runs on its own kernels only (the peer-store transport, "
        "Protocol::kAuto or kDirect), not on ",
        context.transport == Transport::kCopyEngine ? "the copy-engine transport"
                                                    : ProtocolName(call.protocol)));
  }
  if (context.wire == WireFormat::kFp8E4M3 && context.collective == Collective::kAllGather &&
      context.tensors > 1) {
    return absl::UnimplementedError(absl::StrCat(
        "all_gather with FP8 on the wire moves one tensor per op, not ", context.tensors));
  }
  if (call.protocol == Protocol::kOneTrip && context.max_shard_bytes > kOneTripMaxShardBytes) {
    if (context.collective == Collective::kAllToAll) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "protocol kOneTrip carries up to %d bytes from one rank to one rank; this all-to-all "
          "sends %d (use Protocol::kDirect or kAuto)",
          kOneTripMaxShardBytes, context.max_shard_bytes));
    }
    return absl::InvalidArgumentError(absl::StrFormat(
        "protocol kOneTrip carries shards up to %d bytes; this call sends %d",
        kOneTripMaxShardBytes, context.max_shard_bytes));
  }
  if (call.protocol == Protocol::kCopyEngine && !context.copy_engines_refused.empty()) {
    return absl::UnimplementedError(context.copy_engines_refused);
  }
  if (call.timeout.has_value() &&
      (*call.timeout <= absl::ZeroDuration() || *call.timeout == absl::InfiniteDuration())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "call timeout must be positive and finite, got ", absl::FormatDuration(*call.timeout)));
  }
  if (call.blocks < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("call blocks must be >= 0 (0 = automatic), got ", call.blocks));
  }
  if (context.collective == Collective::kAllReduce && call.two_shot_min_bytes.has_value() &&
      *call.two_shot_min_bytes < 0) {  // The other collectives ignore it.
    return absl::InvalidArgumentError(absl::StrCat(
        "call two_shot_min_bytes must be >= 0 (0 = always two-shot), got ",
        *call.two_shot_min_bytes));
  }
  ResolvedCall resolved;
  resolved.protocol =
      ChooseProtocol(options, context, call.protocol, &resolved.protocol_reason);
  if (context.collective == Collective::kAllReduce) {
    resolved.two_shot = ChooseTwoShot(options, context, call, &resolved.protocol_reason);
  }
  resolved.blocks = ChooseBlocks(context, resolved.protocol, call.blocks);
  resolved.timeout = call.timeout.value_or(options.timeout);
  resolved.capturing = context.capturing;
  // The reductions' kernel and the FP8 wire's kernels have no timed instantiation.
  if (resolved.protocol != Protocol::kCopyEngine && !IsReduction(context.collective) &&
      context.wire == WireFormat::kNative) {
    resolved.phase_timestamps = call.phase_timestamps;
  }
  resolved.early_start =
      resolved.protocol == Protocol::kOneTrip && call.early_start && !context.shares_gpu;
  resolved.generation = context.generation;
  return resolved;
}

}  // namespace ltx
