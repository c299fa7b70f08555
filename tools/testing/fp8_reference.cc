// The host reference of FP8 on the wire, one row at a time.
#include "tools/testing/fp8_reference.h"

#include <cstring>
#include <vector>

#include "kernels/reduce/reduce_math.h"
#include "kernels/wire/fp8_rows.h"

namespace ltx {
namespace {

template <typename Element>
void WireRow(const void* row, int64_t hidden, void* out) {
  using Bits = typename Element::Bits;
  std::vector<Bits> values(hidden);
  std::memcpy(values.data(), row, hidden * sizeof(Bits));
  float largest = 0.0f;
  for (const Bits bits : values) largest = Fp8RowLargest(largest, Element::ToFloat(bits));
  const float scale = Fp8RowScale(largest);
  const float inverse = Fp8RowInverse(scale);
  for (Bits& bits : values)
    bits = Fp8Decode<Element>(Fp8Encode(Element::ToFloat(bits), inverse), scale);
  std::memcpy(out, values.data(), hidden * sizeof(Bits));
}

}  // namespace

void Fp8WireRow(DataType dtype, const void* row, int64_t hidden, void* out) {
  switch (dtype) {
    case DataType::kBFloat16:
      WireRow<BFloat16Element>(row, hidden, out);
      return;
    case DataType::kFloat16:
      WireRow<Float16Element>(row, hidden, out);
      return;
    default:
      std::memmove(out, row, hidden * ElementSize(dtype));
  }
}

}  // namespace ltx
