// The host checks of a rank's buffers for one op, and of a coordinated call's buffers across
// its ranks (ltx/collectives/collective_op.h).
#include "ltx/collectives/collective_op.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_format.h"
#include "ltx/status_macros.h"

namespace ltx {

absl::Status CheckOpBuffers(const CollectiveOp& op, int world_size, int rank,
                            const RankBuffers& buffers) {
  const bool in_range = rank >= 0 && rank < world_size && rank < kMaxWorldSize;
  LTX_RETURN_IF_ERROR(CheckRankBuffers(world_size, rank, op.tensors,
                                       in_range ? op.input_bytes[rank] : 0,
                                       in_range ? op.output_bytes[rank] : 0,
                                       in_range ? op.in_place_offset[rank] : kNotInPlace, buffers,
                                       op.tensor_names));
  return CheckBufferAlignment(rank, op.tensors, buffers, op.element_alignment, op.tensor_names);
}

namespace {

// One buffer of one rank, as the cross-rank check sees it.
struct RankRange {
  const void* begin = nullptr;
  int64_t bytes = 0;
  const char* name = "";
  bool written = false;
};

std::vector<RankRange> RangesOf(const CollectiveOp& op, int rank, const RankBuffers& buffers) {
  std::vector<RankRange> ranges;
  for (int tensor = 0; tensor < op.tensors; ++tensor) {
    const RankBuffers one = TensorBuffers(buffers, tensor);
    ranges.push_back({one.input, op.input_bytes[rank], op.tensor_names.inputs[tensor], false});
    ranges.push_back({one.output, op.output_bytes[rank], op.tensor_names.outputs[tensor], true});
  }
  if (op.local_input_name != nullptr) {
    ranges.push_back({op.local_inputs[rank], op.local_input_bytes, op.local_input_name, false});
  }
  return ranges;
}

}  // namespace

absl::Status CheckOpBuffersAcrossRanks(const CollectiveOp& op,
                                       absl::Span<const RankBuffers> buffers) {
  const int world = static_cast<int>(std::min<size_t>(buffers.size(), kMaxWorldSize));
  std::vector<std::vector<RankRange>> ranges;
  for (int rank = 0; rank < world; ++rank) ranges.push_back(RangesOf(op, rank, buffers[rank]));
  for (int a = 0; a < world; ++a) {
    for (int b = a + 1; b < world; ++b) {
      for (const RankRange& x : ranges[a]) {
        for (const RankRange& y : ranges[b]) {
          if ((x.written || y.written) && Overlap(x.begin, x.bytes, y.begin, y.bytes)) {
            return absl::InvalidArgumentError(absl::StrFormat(
                "rank %d's %s and rank %d's %s share bytes: ranks must not write into each "
                "other's buffers (every rank needs its own %s)",
                a, x.name, b, y.name, x.written ? x.name : y.name));
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace ltx
