// The host reference of the reductions.
#include "tools/testing/reduce_reference.h"

#include <cstring>

#include "kernels/reduce/reduce_math.h"

namespace ltx {
namespace {

template <typename Element>
void ReduceInto(const ReduceLayout& layout, int rank,
                const std::vector<std::vector<uint8_t>>& inputs, std::vector<uint8_t>* output) {
  using Bits = typename Element::Bits;
  const int64_t hidden = layout.row_elements;
  int64_t out = 0;
  for (int64_t b = 0; b < layout.batch; ++b) {
    for (int64_t row = layout.first_rows[rank]; row < layout.first_rows[rank] + layout.rows[rank];
         ++row) {
      for (int64_t h = 0; h < hidden; ++h, ++out) {
        const int64_t element = (b * layout.total_rows + row) * hidden + h;
        const Bits result =
            ReduceInRankOrder<Element>(static_cast<int32_t>(layout.reduction),
                                       layout.world_size, [&inputs, element](int s) {
                                         Bits bits;
                                         std::memcpy(&bits,
                                                     inputs[s].data() + element * sizeof(Bits),
                                                     sizeof(Bits));
                                         return bits;
                                       });
        std::memcpy(output->data() + out * sizeof(Bits), &result, sizeof(Bits));
      }
    }
  }
}

}  // namespace

std::vector<uint8_t> ReduceReference(const ReduceLayout& layout, int rank,
                                     const std::vector<std::vector<uint8_t>>& inputs) {
  std::vector<uint8_t> output(static_cast<size_t>(layout.OutputBytes(rank)));
  switch (layout.dtype) {
    case DataType::kBFloat16:
      ReduceInto<BFloat16Element>(layout, rank, inputs, &output);
      break;
    case DataType::kFloat16:
      ReduceInto<Float16Element>(layout, rank, inputs, &output);
      break;
    default:
      ReduceInto<Float32Element>(layout, rank, inputs, &output);
      break;
  }
  return output;
}

}  // namespace ltx
