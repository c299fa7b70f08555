// The in-place layout of an FP8 run (kernels/wire/fp8_run.h), on the host: which runs fit, that
// every decode chunk writes only over codes already read, and a run encoded into its own bytes
// and decoded there chunk by chunk, in the kernel's order, against the reference of each vector.
#include "kernels/wire/fp8_run.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/reduce/reduce_math.h"
#include "kernels/wire/fp8_rows.h"
#include "ltx/data_type.h"
#include "tools/testing/fp8_reference.h"

namespace ltx {
namespace {

TEST(Fp8RunTest, FitsWholeVectorsOfAtLeastEightUpToTheMostVectors) {
  EXPECT_TRUE(Fp8RunFits(8, 8));
  EXPECT_TRUE(Fp8RunFits(128 * 256, 128));
  EXPECT_FALSE(Fp8RunFits(128 * 257, 128));  // More scales than a warp keeps.
  EXPECT_FALSE(Fp8RunFits(4, 4));            // Vectors below the least.
  EXPECT_FALSE(Fp8RunFits(100, 64));         // Not whole vectors.
  EXPECT_FALSE(Fp8RunFits(0, 8));
  for (int64_t d = kFp8MinVectorElements; d <= 300; ++d) {
    for (int64_t v = 1; v <= kFp8MaxRunVectors; v += 17) {
      ASSERT_TRUE(Fp8RunFits(v * d, d)) << v << " x " << d;
      // The scales lie inside the run's first half, after its start.
      ASSERT_GE(Fp8RunScalesOffset(v * d, d), 0);
      ASSERT_LE(Fp8RunScalesOffset(v * d, d) + 4 * v, Fp8RunCodesOffset(v * d));
    }
  }
}

TEST(Fp8RunTest, EveryDecodeChunkWritesOnlyOverCodesAlreadyRead) {
  for (int64_t elements = 1; elements <= 5000; ++elements) {
    for (int64_t chunk = 0; chunk * kFp8DecodeChunk < elements; ++chunk) {
      ASSERT_TRUE(Fp8RunChunkSafe(elements, chunk)) << elements << " elements, chunk " << chunk;
    }
  }
}

// Encodes `values` (a run of `d`-element vectors of 16-bit `Element`s) into `run` (2N bytes) as
// the sender does, then decodes it in place as the receiver's warp does: every scale first,
// then chunk by chunk, each chunk's codes read before its values are written.
template <typename Element>
void EncodeAndDecodeInPlace(const std::vector<uint16_t>& values, int64_t d,
                            std::vector<uint8_t>* run) {
  const int64_t n = static_cast<int64_t>(values.size());
  const int64_t vectors = n / d;
  run->assign(2 * n, 0xEE);
  for (int64_t v = 0; v < vectors; ++v) {
    float largest = 0.0f;
    for (int64_t e = 0; e < d; ++e) {
      largest = Fp8RowLargest(largest, Element::ToFloat(values[v * d + e]));
    }
    const float scale = Fp8RowScale(largest);
    const uint32_t bits = BitsOfFloat(scale);
    std::memcpy(run->data() + Fp8RunScalesOffset(n, d) + 4 * v, &bits, 4);
    for (int64_t e = 0; e < d; ++e) {
      (*run)[Fp8RunCodesOffset(n) + v * d + e] =
          Fp8Encode(Element::ToFloat(values[v * d + e]), Fp8RowInverse(scale));
    }
  }
  std::vector<float> scales(vectors);
  for (int64_t v = 0; v < vectors; ++v) {
    uint32_t bits = 0;
    std::memcpy(&bits, run->data() + Fp8RunScalesOffset(n, d) + 4 * v, 4);
    scales[v] = FloatOfBits(bits);
  }
  for (int64_t first = 0; first < n; first += kFp8DecodeChunk) {
    const int64_t count = n - first < kFp8DecodeChunk ? n - first : kFp8DecodeChunk;
    std::vector<uint8_t> codes(run->begin() + Fp8RunCodesOffset(n) + first,
                               run->begin() + Fp8RunCodesOffset(n) + first + count);
    for (int64_t k = 0; k < count; ++k) {
      const uint16_t decoded = Fp8Decode<Element>(codes[k], scales[(first + k) / d]);
      std::memcpy(run->data() + 2 * (first + k), &decoded, 2);
    }
  }
}

TEST(Fp8RunTest, ARunDecodedInPlaceEqualsEachVectorsReference) {
  std::mt19937_64 random(20261202);
  for (const DataType dtype : {DataType::kBFloat16, DataType::kFloat16}) {
    for (const int64_t d : {8, 12, 64, 128, 200}) {
      for (const int64_t vectors : {1, 3, 16, 40, 256}) {
        const int64_t n = d * vectors;
        std::vector<uint16_t> values(n);
        std::normal_distribution<float> normal(0.0f, 3.0f);
        for (uint16_t& value : values) {
          const float x = normal(random);
          value = dtype == DataType::kBFloat16 ? BFloat16Element::FromFloat(x)
                                               : Float16Element::FromFloat(x);
        }
        values[0] = 0;  // A zero, and a whole zero vector when there is more than one.
        if (vectors > 1) std::fill(values.begin() + d, values.begin() + 2 * d, uint16_t{0});
        std::vector<uint8_t> run;
        if (dtype == DataType::kBFloat16) {
          EncodeAndDecodeInPlace<BFloat16Element>(values, d, &run);
        } else {
          EncodeAndDecodeInPlace<Float16Element>(values, d, &run);
        }
        std::vector<uint16_t> expected(n);
        for (int64_t v = 0; v < vectors; ++v) {
          Fp8WireRow(dtype, values.data() + v * d, d, expected.data() + v * d);
        }
        std::vector<uint16_t> got(n);
        std::memcpy(got.data(), run.data(), 2 * n);
        ASSERT_EQ(got, expected) << DataTypeName(dtype) << " d " << d << " vectors " << vectors;
      }
    }
  }
}

}  // namespace
}  // namespace ltx
