// The host checks of one rank's buffers that every collective shares: the rank is in range and
// no pointer that the op reads or writes is null.
#ifndef LTX_BUFFER_CHECKS_H_
#define LTX_BUFFER_CHECKS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "ltx/rank_buffers.h"

namespace ltx {

// InvalidArgument for a rank outside [0, world_size), a null input when the rank reads
// `input_bytes` > 0 bytes, or a null output when it writes `output_bytes` > 0 bytes. Does not
// touch the GPU. Thread-safe.
absl::Status CheckRankBuffers(int world_size, int rank, int64_t input_bytes, int64_t output_bytes,
                              const RankBuffers& buffers);

}  // namespace ltx

#endif  // LTX_BUFFER_CHECKS_H_
