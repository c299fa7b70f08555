// The memory through which the copy-engine transport's copies tell each rank that its op is
// done: per rank, one flag per peer that the copy streams set after each copy into the rank's
// output, and the fields of the waits' error handling. It lives in host-mapped pinned memory,
// which every GPU can reach with or without peer access. Protocol: kernels/PROTOCOL.md (the
// copy-engine protocol).
#ifndef LTX_KERNELS_COPY_ENGINE_SIGNALS_H_
#define LTX_KERNELS_COPY_ENGINE_SIGNALS_H_

#include <cstdint>

#include "kernels/error_record.h"
#include "kernels/signal_layout.h"

namespace ltx {

// One per rank, in one host-mapped array indexed by rank.
struct CopyEngineSignals {
  // received[s] >= n once rank s's shard of op n has landed in this rank's output. Written only
  // by the stream that copied it (a stream memory write after the copy, with the write's
  // default memory barrier); never reset between ops.
  alignas(64) uint64_t received[kMaxWorldSize];
  // The waits' error handling (barrier.cuh): only `error_claimed` and `abort` are used.
  SignalRegion control;
  // This rank's error record.
  DeviceErrorRecord record;
};

}  // namespace ltx

#endif  // LTX_KERNELS_COPY_ENGINE_SIGNALS_H_
