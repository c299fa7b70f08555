// The memory through which the copy-engine transport's copies tell each rank that its op is
// done, and the fields of the exit kernel's error handling. The exit kernel touches host-mapped
// memory only to record an error: a kernel that reads host-mapped memory ends about 5 µs later
// (2 × H200), on every op. Protocol: kernels/PROTOCOL.md (the copy-engine protocol).
#ifndef KERNELS_WIRE_COPY_ENGINE_SIGNALS_H_
#define KERNELS_WIRE_COPY_ENGINE_SIGNALS_H_

#include <cstdint>

#include "kernels/wire/error_record.h"
#include "kernels/wire/signal_layout.h"

namespace ltx {

// One rank's completion flags, each written by a stream memory write after a copy (the write's
// default memory barrier orders the copy first) on the source GPU's copy stream, and read by
// the rank's exit kernel only. They only grow: nothing resets them between ops.
struct CopyEngineFlags {
  // received[s] >= n once rank s's part of op n is in this rank's output. Written by the copy
  // stream (s -> this rank).
  alignas(64) uint64_t received[kMaxWorldSize];
  // sent[t] >= n once this rank's part of op n is in rank t's output, so that nothing reads its
  // input any more. Written by the copy stream (this rank -> t).
  alignas(64) uint64_t sent[kMaxWorldSize];
};

// One per rank, in its GPU's memory.
struct CopyEngineDeviceSignals {
  // The completion flags when the GPUs have peer access (peers' copy streams write `received`
  // over NVLink).
  CopyEngineFlags flags;
  // The waits' error handling (barrier.cuh): only `error_claimed` and `abort` are used. The
  // host sets `abort` with a stream memory write.
  SignalRegion control;
  // Bit s: an exit kernel of this rank gave up waiting for queued copies with rank s (after its
  // op was given up); later ones, whose copies with s queue behind those, do not wait for them
  // again. Read and written only by this rank's exit kernels (stream order); zeroed by Reset.
  uint32_t stuck_peers;
};

// One per rank, in one host-mapped array indexed by rank (every GPU reaches it, with or without
// peer access).
struct CopyEngineHostSignals {
  // The completion flags when the GPUs have no peer access.
  CopyEngineFlags flags;
  // Which copies are queued: queued.received[s] >= n once the copy of op n from rank s into
  // this rank's output, and its flag writes, are on their stream; queued.sent[t] likewise for
  // the copy from this rank into rank t's output. Stored by the host (release) right after it
  // queues them; read by the exit kernel only once its op was given up, to wait for the copies
  // that will still land before its stream goes on.
  CopyEngineFlags queued;
  // This rank's error record.
  DeviceErrorRecord record;
};

}  // namespace ltx

#endif  // KERNELS_WIRE_COPY_ENGINE_SIGNALS_H_
