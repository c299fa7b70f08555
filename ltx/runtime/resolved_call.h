// How one collective call will run, decided once per call on the host: the protocol (direct
// kernel, one-trip kernel or copy engines), for the AllReduce one-shot or two-shot, the
// kernel's block count and the timeout. A pure function of the call's shape and options, so
// every rank of an op decides alike, and the CPU tests check the rule.
#ifndef LTX_RUNTIME_RESOLVED_CALL_H_
#define LTX_RUNTIME_RESOLVED_CALL_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "kernels/protocols/one_trip_launch.h"
#include "kernels/wire/collective.h"
#include "ltx/runtime_options.h"
#include "ltx/wire_format.h"

namespace ltx {

// What the one-trip protocol is worth: the incoming bytes per receiver up to which it beats the
// direct kernel (measured on H200s: 256 KiB shards from 3 peers win, 512 KiB ones lose; 512 KiB
// shards from 1 peer win).
inline constexpr int64_t kOneTripIncomingBytes = 768 * 1024;

// The largest shard that Protocol::kAuto sends one-trip on `world_size` ranks:
// `one_trip_max_bytes` itself, or for kOneTripLimitByWorldSize
// min(kOneTripMaxShardBytes, kOneTripIncomingBytes / (world_size - 1)).
int64_t OneTripLimit(int64_t one_trip_max_bytes, int world_size);

// OK when rank `rank`'s call issued for reset generation `requested` (nullopt: whatever is
// current) may run in generation `current`; Aborted for an older one (a straggler from before a
// Reset: nothing may launch), InvalidArgument for a later one. Thread-safe (pure).
absl::Status CheckGeneration(int rank, const absl::optional<uint64_t>& requested,
                             uint64_t current);

// One call, resolved.
struct ResolvedCall {
  // kDirect, kOneTrip or kCopyEngine; never kAuto.
  Protocol protocol = Protocol::kDirect;
  // Why that protocol, for the debug log: a static string, e.g. "auto: the largest shard is
  // within the one-trip limit".
  const char* protocol_reason = "";
  // An AllReduce only: whether it runs two-shot (two ops: the ReduceScatter of the count's
  // chunks into their places in the output, then the in-place AllGather of the chunks) rather
  // than one-shot (one op: every rank reduces the whole count).
  bool two_shot = false;
  // Thread blocks of the kernel (kDirect and kOneTrip), >= 1.
  int blocks = 1;
  // How long each wait of the op may last.
  absl::Duration timeout;
  // Whether the call's stream is capturing a CUDA graph.
  bool capturing = false;
  // CallOptions::phase_timestamps for a direct or one-trip call of the AllGather or the
  // all-to-all, else null.
  const PhaseTimestamps* phase_timestamps = nullptr;
  // CallOptions::early_start for a one-trip call, else false.
  bool early_start = false;
  // The Runtime's reset generation the call runs in (what its kernel announces).
  uint64_t generation = 0;
};

// How the one-trip kernel of `call` (Protocol::kOneTrip) is launched: call.blocks blocks, early
// as call.early_start says, timed as call.phase_timestamps says. Thread-safe (pure).
inline OneTripLaunch OneTripLaunchOf(const ResolvedCall& call) {
  OneTripLaunch launch;
  launch.blocks = call.blocks;
  launch.early_start = call.early_start;
  launch.timestamps = call.phase_timestamps;
  return launch;
}

// What a call needs to be resolved, beside the Runtime's options.
struct CallContext {
  Collective collective = Collective::kAllGather;
  // Tensors the op moves (CollectiveOp::tensors), and how its rows travel (CollectiveOp::wire).
  int tensors = 1;
  WireFormat wire = WireFormat::kNative;
  // kPeerStores or kCopyEngine, as resolved by Runtime::Create.
  Transport transport = Transport::kPeerStores;
  int world_size = 1;
  // Largest shard of the op over all ranks, in bytes: what one rank sends to one target (for
  // the all-to-all, the largest piece, the own one included).
  int64_t max_shard_bytes = 0;
  // This rank's shard (the most it sends to one target), in bytes.
  int64_t shard_bytes = 0;
  // Most blocks a kernel of this rank may use (RuntimeOptions::max_blocks, or the SM count).
  int max_blocks = 1;
  // Blocks the op's kernel has work for, where it says (CollectiveOp::work_blocks: the RMSNorm
  // epilogue's rows, the FP8 AllGather's received rows, the FP8 all-to-all's runs); 0 where the
  // count follows the bytes.
  int64_t work_blocks = 0;
  // Whether the call's stream is capturing a CUDA graph.
  bool capturing = false;
  // An AllReduce only: whether this rank's input is its output.
  bool in_place = false;
  // Whether other ranks run on this rank's GPU (then no call starts early).
  bool shares_gpu = false;
  // Whether some GPU of the Runtime hosts several ranks (then kAuto keeps to the kernels), and
  // why the copy engines cannot serve its placement (CopyEnginesFitQueues; empty: they can).
  bool ranks_share_gpus = false;
  absl::string_view copy_engines_refused;
  // The rank the call is for (for messages), and the Runtime's current reset generation.
  int rank = 0;
  uint64_t generation = 0;
};

// Validates `call` and resolves it. The protocol:
//   - The reductions (AllReduce, ReduceScatter) take the direct kernel (the pull protocol):
//     Unimplemented on the copy-engine transport, InvalidArgument for Protocol::kOneTrip or
//     kCopyEngine. An AllReduce with bytes to reduce (context.max_shard_bytes > 0: each rank's
//     input) runs two-shot in place, or when those bytes reach two_shot_min_bytes
//     (call.two_shot_min_bytes if set, else the options'), one-shot otherwise: decided from the
//     shape and options alone, but for in place, where a rank that runs one-shot beside one in
//     place disagrees at entry on the device.
//   - A call of several tensors (context.tensors > 1), or with rows in FP8 on the wire
//     (context.wire), takes the direct kernel (for FP8: its own kernels): Unimplemented on the
//     copy-engine transport and for Protocol::kOneTrip or kCopyEngine (alike on every rank).
//   - On the copy-engine transport every other call (AllGather and all-to-all) takes the copy
//     engines.
//   - An explicit protocol is obeyed (a capturing stream on the copy engines records the
//     captured copy-engine call of ltx/transport/copy_engine/copy_engine_graph.h).
//   - kAuto takes the copy engines for eager calls whose largest shard (all-to-all: piece) is at
//     least copy_engine_min_bytes (when that is > 0; captured calls, and Runtimes whose ranks
//     share a GPU, keep to the kernels), the
//     one-trip kernel up to OneTripLimit, the direct kernel otherwise. For the all-to-all, whose
//     receivers unpack (world - 1) pieces as the AllGather's unpack (world - 1) shards, the same
//     limit applies to its largest piece.
// The blocks: call.blocks capped by max_blocks, else context.work_blocks (at least one) capped
// by max_blocks where it is set, else what the protocol's kernel wants for the shard. The phase timestamps: passed on for direct and one-trip calls; early start: for one-trip
// calls of a rank that has its GPU to itself only (kernels/PROTOCOL.md, "Ranks that share a
// GPU"). The generation: the context's. Errors: Aborted for a call.generation older than the
// context's (a straggler from before a Reset; the message says so and that nothing was launched);
// Unimplemented for Protocol::kCopyEngine where context.copy_engines_refused says why not (that
// text, alike on every rank), and for a capture on the copy-engine transport (which pairs its
// calls on the host at call time); InvalidArgument for a call.generation newer than the context's, a
// non-positive or infinite call timeout, negative blocks, a negative call.two_shot_min_bytes,
// or Protocol::kOneTrip with a shard (all-to-all: a piece) over kOneTripMaxShardBytes. The
// result depends on nothing but the arguments, so ranks that pass the same shape and options
// decide alike before any launch. Thread-safe.
absl::StatusOr<ResolvedCall> ResolveCall(const RuntimeOptions& options, const CallContext& context,
                                         const CallOptions& call);

}  // namespace ltx

#endif  // LTX_RUNTIME_RESOLVED_CALL_H_
