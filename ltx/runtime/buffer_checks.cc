// Host checks of one rank's buffers.
#include "ltx/runtime/buffer_checks.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"

namespace ltx {

bool IsInPlace(const RankBuffers& buffers, int64_t in_place_offset) {
  return in_place_offset != kNotInPlace && buffers.output != nullptr &&
         reinterpret_cast<uintptr_t>(buffers.input) ==
             reinterpret_cast<uintptr_t>(buffers.output) + static_cast<uint64_t>(in_place_offset);
}

absl::Status CheckRankBuffers(int world_size, int rank, int64_t input_bytes, int64_t output_bytes,
                              int64_t in_place_offset, const RankBuffers& buffers) {
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
  if (input_bytes == 0 || output_bytes == 0 || IsInPlace(buffers, in_place_offset)) {
    return absl::OkStatus();
  }
  const auto input = reinterpret_cast<uintptr_t>(buffers.input);
  const auto output = reinterpret_cast<uintptr_t>(buffers.output);
  if (input < output + static_cast<uint64_t>(output_bytes) &&
      output < input + static_cast<uint64_t>(input_bytes)) {
    const std::string in_place =
        in_place_offset == kNotInPlace
            ? "this op has no in-place form"
            : absl::StrFormat("an in-place input starts exactly %d bytes into the output",
                              in_place_offset);
    return absl::InvalidArgumentError(absl::StrFormat(
        "rank %d: the input (%d bytes) overlaps the output (%d bytes) at offset %d; the op "
        "would overwrite what it reads (%s)",
        rank, input_bytes, output_bytes, static_cast<int64_t>(input - output), in_place));
  }
  return absl::OkStatus();
}

absl::Status CheckBufferAlignment(int rank, const RankBuffers& buffers, int alignment) {
  const void* pointers[] = {buffers.input, buffers.output};
  const char* names[] = {"input", "output"};
  for (int k = 0; k < 2; ++k) {
    if (reinterpret_cast<uintptr_t>(pointers[k]) % static_cast<uintptr_t>(alignment) != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "rank %d: %s %p is not aligned to its %d-byte elements", rank, names[k], pointers[k],
          alignment));
    }
  }
  return absl::OkStatus();
}

}  // namespace ltx
