// Host checks of one rank's buffers.
#include "ltx/runtime/buffer_checks.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"

namespace ltx {
namespace {

// The checks of one tensor's buffers (`tensor`): nulls, and its input against its output.
absl::Status CheckTensorBuffers(int rank, int tensor, int64_t input_bytes, int64_t output_bytes,
                                int64_t in_place_offset, const RankBuffers& buffers,
                                const TensorNames& names) {
  const char* input_name = names.inputs[tensor];
  const char* output_name = names.outputs[tensor];
  if (buffers.input == nullptr && input_bytes > 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "rank %d: %s is null but the input holds %d bytes", rank, input_name, input_bytes));
  }
  if (buffers.output == nullptr && output_bytes > 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "rank %d: %s is null but the output holds %d bytes", rank, output_name, output_bytes));
  }
  if (IsInPlace(buffers, in_place_offset) ||
      !Overlap(buffers.input, input_bytes, buffers.output, output_bytes)) {
    return absl::OkStatus();
  }
  const std::string in_place =
      in_place_offset == kNotInPlace
          ? "this op has no in-place form"
          : absl::StrFormat("an in-place input starts exactly %d bytes into the output",
                            in_place_offset);
  return absl::InvalidArgumentError(absl::StrFormat(
      "rank %d: the %s (%d bytes) overlaps the %s (%d bytes) at offset %d; the op would "
      "overwrite what it reads (%s)",
      rank, input_name, input_bytes, output_name, output_bytes,
      static_cast<int64_t>(reinterpret_cast<uintptr_t>(buffers.input) -
                           reinterpret_cast<uintptr_t>(buffers.output)),
      in_place));
}

// The checks across tensors `first` and `second` (first < second): neither one's input
// overlaps the other's output, and their outputs do not overlap.
absl::Status CheckTensorPair(int rank, int first, int second, int64_t input_bytes,
                             int64_t output_bytes, const RankBuffers& buffers,
                             const TensorNames& names) {
  const RankBuffers a = TensorBuffers(buffers, first);
  const RankBuffers b = TensorBuffers(buffers, second);
  struct Pair {
    const void* one;
    int64_t one_bytes;
    const char* one_name;
    const void* other;
    const char* other_name;
  };
  const Pair pairs[] = {
      {a.input, input_bytes, names.inputs[first], b.output, names.outputs[second]},
      {b.input, input_bytes, names.inputs[second], a.output, names.outputs[first]},
      {a.output, output_bytes, names.outputs[first], b.output, names.outputs[second]},
  };
  for (const Pair& pair : pairs) {
    if (Overlap(pair.one, pair.one_bytes, pair.other, output_bytes)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "rank %d: the %s overlaps the %s of another tensor of the call; each tensor needs an "
          "output of its own that no input of the call overlaps",
          rank, pair.one_name, pair.other_name));
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool Overlap(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes) {
  const auto a_begin = reinterpret_cast<uintptr_t>(a);
  const auto b_begin = reinterpret_cast<uintptr_t>(b);
  return a_bytes > 0 && b_bytes > 0 && a_begin < b_begin + static_cast<uint64_t>(b_bytes) &&
         b_begin < a_begin + static_cast<uint64_t>(a_bytes);
}

RankBuffers TensorBuffers(const RankBuffers& buffers, int tensor) {
  if (tensor == 0) return RankBuffers{buffers.input, buffers.output, buffers.stream};
  return RankBuffers{buffers.more_inputs[tensor - 1], buffers.more_outputs[tensor - 1],
                     buffers.stream};
}


bool IsInPlace(const RankBuffers& buffers, int64_t in_place_offset) {
  return in_place_offset != kNotInPlace && buffers.output != nullptr &&
         reinterpret_cast<uintptr_t>(buffers.input) ==
             reinterpret_cast<uintptr_t>(buffers.output) + static_cast<uint64_t>(in_place_offset);
}

absl::Status CheckRankBuffers(int world_size, int rank, int tensors, int64_t input_bytes,
                              int64_t output_bytes, int64_t in_place_offset,
                              const RankBuffers& buffers, const TensorNames& names) {
  if (rank < 0 || rank >= world_size) {
    return absl::InvalidArgumentError(
        absl::StrFormat("rank %d is outside [0, %d)", rank, world_size));
  }
  if (tensors < 1 || tensors > kMaxTensors) {
    return absl::InvalidArgumentError(
        absl::StrFormat("tensors must be in [1, %d], got %d", kMaxTensors, tensors));
  }
  for (int tensor = tensors; tensor < kMaxTensors; ++tensor) {
    const RankBuffers unused = TensorBuffers(buffers, tensor);
    if (unused.input != nullptr || unused.output != nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "rank %d: %s or %s is set, but the call moves %d tensor(s) (set the shape's tensors)",
          rank, names.inputs[tensor], names.outputs[tensor], tensors));
    }
  }
  for (int tensor = 0; tensor < tensors; ++tensor) {
    const absl::Status checked =
        CheckTensorBuffers(rank, tensor, input_bytes, output_bytes, in_place_offset,
                           TensorBuffers(buffers, tensor), names);
    if (!checked.ok()) return checked;
  }
  for (int first = 0; first < tensors; ++first) {
    for (int second = first + 1; second < tensors; ++second) {
      const absl::Status checked =
          CheckTensorPair(rank, first, second, input_bytes, output_bytes, buffers, names);
      if (!checked.ok()) return checked;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckBufferAlignment(int rank, int tensors, const RankBuffers& buffers,
                                  int alignment, const TensorNames& names) {
  for (int tensor = 0; tensor < tensors; ++tensor) {
    const RankBuffers one = TensorBuffers(buffers, tensor);
    const void* pointers[] = {one.input, one.output};
    const char* fields[] = {names.inputs[tensor], names.outputs[tensor]};
    for (int k = 0; k < 2; ++k) {
      if (reinterpret_cast<uintptr_t>(pointers[k]) % static_cast<uintptr_t>(alignment) != 0) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "rank %d: %s %p is not aligned to its %d-byte elements", rank, fields[k], pointers[k],
            alignment));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace ltx
