// Options of an ltx::Runtime and of one collective call.
#ifndef LTX_RUNTIME_OPTIONS_H_
#define LTX_RUNTIME_OPTIONS_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"

namespace ltx {

struct PhaseTimestamps;  // kernels/wire/phase_timestamps.h

// How a call moves its data.
enum class Protocol {
  // One-trip for small messages (see RuntimeOptions::one_trip_max_bytes), copy engines for
  // large eager AllGathers and all-to-alls (RuntimeOptions::copy_engine_min_bytes; not where a
  // GPU hosts two ranks), direct otherwise. Every rank decides alike, from the shape.
  kAuto,
  // Entry barrier, stores straight into every peer's output, exit barrier. Any size.
  kDirect,
  // Data and flags in the same stores into staging memory on each peer, unpacked there: one
  // NVLink trip. Shards up to 512 KiB.
  kOneTrip,
  // The copy engines (cudaMemcpy3DPeerAsync) copy each shard (all-to-all: each piece) into
  // every output, ordered by CUDA events, with a one-thread exit kernel per rank that waits for
  // the copies with the timeout (see ltx/transport/copy_engine/copy_engine_transport.h): the
  // fastest way to move large
  // AllGathers over NVLink, and it leaves the SMs to compute. Per-rank calls do not wait for
  // each other. On the peer-store transport, a per-rank call captured into a CUDA graph runs
  // the direct protocol with the stores done by the copy engines
  // (ltx/transport/copy_engine/copy_engine_graph.h);
  // the ranks' captures exchange output addresses on the host, so each rank must capture from
  // its own thread, concurrently (a rank that does not capture in time: DEADLINE_EXCEEDED, the
  // capture must be discarded and the Runtime Reset). On the copy-engine transport captures
  // are UNIMPLEMENTED.
  kCopyEngine,
};

// How data moves between GPUs.
enum class Transport {
  // Peer stores when every pair of GPUs has peer access (with the copy engines for large eager
  // calls, see RuntimeOptions::copy_engine_min_bytes), else the copy engines.
  kAuto,
  // Kernels store straight into peers' memory over NVLink (needs peer access for every pair).
  kPeerStores,
  // Copy-engine copies ordered by events (Protocol::kCopyEngine for every call); works without
  // peer access (the driver stages the copies through host memory). Not capturable in CUDA graphs
  // (UNIMPLEMENTED).
  kCopyEngine,
};

// RuntimeOptions::one_trip_max_bytes: let the world size set the limit.
inline constexpr int64_t kOneTripLimitByWorldSize = -1;

// RuntimeOptions::two_shot_min_bytes and CallOptions::two_shot_min_bytes: never the two-shot
// (but in place).
inline constexpr int64_t kNeverTwoShot = std::numeric_limits<int64_t>::max();

// What a Runtime is created with; Runtime::Create checks the fields (its contract lists the
// errors), and they stay fixed for the Runtime's life (Runtime::options).
struct RuntimeOptions {
  // CUDA device ordinals in rank order, e.g. {3, 1}: rank 0 is GPU 3, rank 1 is GPU 1. Empty
  // means every visible GPU in ordinal order. At most kMaxWorldSize ranks. A GPU named more
  // than once hosts several ranks ({0, 0, 0, 0}: four ranks on GPU 0; {0, 1, 0, 1}: four on
  // two), each with everything a rank has (its thread, signal memory, staging, error record):
  // a correctness and development mode, which runs every rank count on any machine, not a fast
  // one. Ranks of one GPU need streams of their own (not the legacy default stream, not one
  // stream for two ranks in the same op: InvalidArgument), split the GPU's blocks (max_blocks)
  // and never start early (CallOptions::early_start). They wait for each other inside the GPU,
  // so the process should set CUDA_MODULE_LOADING=EAGER and CUDA_DEVICE_MAX_CONNECTIONS=32
  // before CUDA starts, and keep the streams that carry work on a GPU few (one per rank, not
  // one per buffer or per step; idle ones that carried work count); see kernels/PROTOCOL.md,
  // "Ranks that share a GPU".
  std::vector<int> devices;
  // How long a GPU waits for its peers at a barrier before it gives up on the op and records
  // DeadlineExceeded. Must be positive and finite.
  absl::Duration timeout = absl::Seconds(10);
  // Most thread blocks one rank's kernel may use, so that compute can run beside the
  // collective (a block occupies part of one SM). 0 means one block per SM;
  // more than one per SM is allowed. Ranks that share a GPU split it: each gets at most its
  // share of the blocks the GPU keeps resident (by the occupancy API), by default
  // SMs / (2 (ranks on the GPU - 1)), so that the other ranks' kernels waiting for a rank leave
  // half the SMs free for the compute it queued before its collective (kernels/PROTOCOL.md,
  // "Ranks that share a GPU"); every rank then gets the smallest rank's budget.
  int max_blocks = 0;
  // How long each GPU's host thread keeps polling for the next coordinated call before it
  // sleeps. Polling makes the hand-off fast at the price of CPU time; zero never polls.
  // Per-rank calls do not use the GPU threads.
  absl::Duration worker_spin = absl::Microseconds(100);
  // Protocol::kAuto takes the one-trip path when no rank sends more than this many bytes
  // (0 to 512 KiB), or, with kOneTripLimitByWorldSize (the default), more than
  // min(512 KiB, 768 KiB / (world size - 1)): each receiver unpacks every peer's shard, so the
  // one-trip path pays off up to a fixed number of incoming bytes (256 KiB per rank on 4 GPUs,
  // 512 KiB on 2).
  int64_t one_trip_max_bytes = kOneTripLimitByWorldSize;
  // Protocol::kAuto on the peer-store transport moves a call by the copy engines
  // (Protocol::kCopyEngine) when some rank sends at least this many bytes to one rank (an
  // AllGather shard, an all-to-all piece), the call is not being captured into a CUDA graph and
  // no GPU hosts two ranks (there the copy engines serve explicit Protocol::kCopyEngine calls
  // only: kernels/PROTOCOL.md, "Ranks that share a GPU"). 0 never picks the copy engines; must
  // be >= 0.
  int64_t copy_engine_min_bytes = int64_t{32} << 20;
  // The AllReduce runs two-shot (a ReduceScatter of the count's chunks into their places in the
  // output, then the in-place AllGather of the chunks: each rank reads count elements instead
  // of world_size * count) when each rank's input holds at least this many bytes (count *
  // element size > 0), one-shot below; in place it always runs two-shot. Both give the same
  // bits. 0 takes the two-shot for every non-empty AllReduce, kNeverTwoShot never (but in
  // place); must be >= 0. The default, 1 MiB, is where the two-shot's halved reads are expected
  // to pay for its second op; to be measured on H200s.
  int64_t two_shot_min_bytes = int64_t{1} << 20;
  // How data moves between GPUs (Transport); kAuto takes the peer stores where every pair of
  // distinct GPUs has peer access, else the copy engines.
  Transport transport = Transport::kAuto;
};

// Per-call settings of a collective (every field's default defers to RuntimeOptions or to the
// automatic choice), checked by the call before anything is launched (each collective's
// contract lists the errors).
struct CallOptions {
  // Overrides RuntimeOptions::timeout for this call.
  absl::optional<absl::Duration> timeout;
  // Overrides the automatic block count of this call (still capped by max_blocks); 0 = auto.
  int blocks = 0;
  // Every rank of a call must pass the same protocol, and with Protocol::kAuto every rank must
  // either capture its call into a CUDA graph or not (the choice of path depends on it).
  Protocol protocol = Protocol::kAuto;
  // A diagnostic: when set, a per-rank call that takes the direct or the one-trip kernel
  // (AllGather and all-to-all) runs the kernel's timed instantiation, which records the
  // %globaltimer time of each phase of each block there (kernels/wire/phase_timestamps.h:
  // DirectPhase or OneTripPhase; device memory of the rank's GPU, outliving the call and any graph
  // that captures it). Other paths ignore it; Runtime::AllGather and AllToAll refuse it.
  const PhaseTimestamps* phase_timestamps = nullptr;
  // Launches a one-trip kernel with programmatic dependent launch (needs sm_90): its blocks may
  // be scheduled while the previous kernel on the stream finishes, and wait for it on the GPU
  // before touching memory; it also lets a kernel launched after it the same way be scheduled
  // early. Other paths ignore it, and so does a rank that shares its GPU with other ranks (its
  // next kernel, scheduled early, could hold the SMs that a co-located rank's kernel of the
  // current op needs).
  bool early_start = false;
  // The Runtime's reset generation (Runtime::generation()) the caller issued this call for,
  // read when its step began. A call for an earlier generation (a rank thread that was late for
  // an op that failed, calling after Runtime::Reset) is refused with Aborted before anything is
  // launched, and the Runtime stays usable; one for a later generation is InvalidArgument.
  // Unset: the call belongs to whatever generation is current.
  absl::optional<uint64_t> generation;
  // Overrides RuntimeOptions::two_shot_min_bytes for this call (an AllReduce; other collectives
  // ignore it): 0 forces the two-shot, kNeverTwoShot the one-shot (but in place). Must be >= 0,
  // and every rank of a call must pass the same value (ranks that take different paths get
  // InvalidArgument from the device).
  absl::optional<int64_t> two_shot_min_bytes;
};

// Names of the protocols and transports, as tools and logs print them and as flags take them.

// Every Protocol and every Transport, in enum order.
inline constexpr Protocol kAllProtocols[] = {Protocol::kAuto, Protocol::kDirect, Protocol::kOneTrip,
                                             Protocol::kCopyEngine};
inline constexpr Transport kAllTransports[] = {Transport::kAuto, Transport::kPeerStores,
                                               Transport::kCopyEngine};

// "auto", "direct", "one_trip" or "copy_engine"; "unknown(N)" for a value outside the enum.
std::string ProtocolName(Protocol protocol);

// "auto", "peer_stores" or "copy_engine"; "unknown(N)" for a value outside the enum.
std::string TransportName(Transport transport);

// Parse a name as ProtocolName / TransportName print it, ignoring case. An unknown name is
// InvalidArgument, quoting it and listing the valid names.
absl::StatusOr<Protocol> ParseProtocol(absl::string_view name);
absl::StatusOr<Transport> ParseTransport(absl::string_view name);

}  // namespace ltx

#endif  // LTX_RUNTIME_OPTIONS_H_
