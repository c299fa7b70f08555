// The host reference of the reductions.
#include "tools/testing/reduce_reference.h"

#include <cstring>

#include "kernels/reduce/reduce_math.h"
#include "kernels/reduce/rmsnorm_math.h"

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

template <typename Element>
void FillRandom(std::mt19937_64& random, std::vector<uint8_t>* bytes) {
  using Bits = typename Element::Bits;
  std::uniform_real_distribution<float> magnitude(0.5f, 4.0f);
  for (size_t at = 0; at + sizeof(Bits) <= bytes->size(); at += sizeof(Bits)) {
    const float value = (random() & 1) != 0 ? magnitude(random) : -magnitude(random);
    const Bits bits = Element::FromFloat(value);
    std::memcpy(bytes->data() + at, &bits, sizeof(Bits));
  }
}

template <typename Bits>
Bits BitsAt(const std::vector<uint8_t>& bytes, int64_t index) {
  Bits bits;
  std::memcpy(&bits, bytes.data() + index * sizeof(Bits), sizeof(Bits));
  return bits;
}

template <typename Bits>
void StoreAt(std::vector<uint8_t>* bytes, int64_t index, Bits bits) {
  std::memcpy(bytes->data() + index * sizeof(Bits), &bits, sizeof(Bits));
}

template <typename Element>
void RmsNormInto(const ReduceLayout& layout, const std::vector<uint8_t>& sums,
                 const std::vector<uint8_t>& residual, const std::vector<uint8_t>& weight,
                 RmsNormOutputs* outputs) {
  using Bits = typename Element::Bits;
  const int64_t hidden = layout.hidden;
  for (int64_t row = 0; row < layout.total_rows; ++row) {
    const int64_t base = row * hidden;
    float partials[kRmsNormThreads] = {};
    for (int64_t i = 0; i < hidden; ++i) {
      const Bits stored =
          AddResidual<Element>(BitsAt<Bits>(sums, base + i), BitsAt<Bits>(residual, base + i));
      StoreAt(&outputs->residual_out, base + i, stored);
      float& partial = partials[RmsNormThreadOf<Element>(i)];
      partial = AccumulateSquare(partial, Element::ToFloat(stored));
    }
    float sum = 0.0f;
    for (int warp = 0; warp < kRmsNormWarps; ++warp) {
      float* lanes = partials + warp * kRmsNormLanes;
      for (int offset = kRmsNormLanes / 2; offset > 0; offset /= 2) {
        float combined[kRmsNormLanes];
        for (int lane = 0; lane < kRmsNormLanes; ++lane) {
          combined[lane] = CombineLanes(lanes[lane], lanes[lane ^ offset]);
        }
        std::memcpy(lanes, combined, sizeof(combined));
      }
      sum = warp == 0 ? lanes[0] : CombineWarps(sum, lanes[0]);
    }
    const float scale = RmsNormScale(sum, hidden, layout.eps);
    for (int64_t i = 0; i < hidden; ++i) {
      StoreAt(&outputs->output, base + i,
              NormedElement<Element>(BitsAt<Bits>(outputs->residual_out, base + i), scale,
                                     BitsAt<Bits>(weight, i)));
    }
  }
}

}  // namespace

std::vector<uint8_t> RandomReduceValues(DataType dtype, int64_t count, std::mt19937_64& random) {
  std::vector<uint8_t> bytes(static_cast<size_t>(count * ElementSize(dtype)));
  switch (dtype) {
    case DataType::kBFloat16:
      FillRandom<BFloat16Element>(random, &bytes);
      break;
    case DataType::kFloat16:
      FillRandom<Float16Element>(random, &bytes);
      break;
    default:
      FillRandom<Float32Element>(random, &bytes);
      break;
  }
  return bytes;
}

RmsNormOutputs RmsNormReference(const ReduceLayout& layout,
                                const std::vector<std::vector<uint8_t>>& inputs,
                                const std::vector<uint8_t>& residual,
                                const std::vector<uint8_t>& weight) {
  const std::vector<uint8_t> sums = ReduceReference(layout, /*rank=*/0, inputs);
  RmsNormOutputs outputs;
  outputs.residual_out.resize(sums.size());
  outputs.output.resize(sums.size());
  switch (layout.dtype) {
    case DataType::kBFloat16:
      RmsNormInto<BFloat16Element>(layout, sums, residual, weight, &outputs);
      break;
    case DataType::kFloat16:
      RmsNormInto<Float16Element>(layout, sums, residual, weight, &outputs);
      break;
    default:
      RmsNormInto<Float32Element>(layout, sums, residual, weight, &outputs);
      break;
  }
  return outputs;
}

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
