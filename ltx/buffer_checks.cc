// Host checks of one rank's buffers.
#include "ltx/buffer_checks.h"

#include "absl/strings/str_format.h"

namespace ltx {

absl::Status CheckRankBuffers(int world_size, int rank, int64_t input_bytes, int64_t output_bytes,
                              const RankBuffers& buffers) {
  if (rank < 0 || rank >= world_size) {
    return absl::InvalidArgumentError(
        absl::StrFormat("rank %d is outside [0, %d)", rank, world_size));
  }
  if (buffers.input == nullptr && input_bytes > 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("rank %d: input is null but the rank sends %d bytes", rank, input_bytes));
  }
  if (buffers.output == nullptr && output_bytes > 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "rank %d: output is null but the output holds %d bytes", rank, output_bytes));
  }
  return absl::OkStatus();
}

}  // namespace ltx
