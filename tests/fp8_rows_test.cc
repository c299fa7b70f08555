// The FP8 wire format of rows (kernels/wire/fp8_rows.h) on the host: every e4m3 code's value
// against the format's definition, encoding as round to nearest even with saturation, the
// row's scale, and rows of bf16, fp16 and fp32 coming back within the bound e4m3 implies.
#include "kernels/wire/fp8_rows.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/reduce/reduce_math.h"

namespace ltx {
namespace {

// The value of e4m3 `code` from the format's definition, in double.
double Defined(uint8_t code) {
  const int sign = (code & 0x80) != 0 ? -1 : 1;
  const int exponent = (code >> 3) & 0xf;
  const int mantissa = code & 0x7;
  if (exponent == 0) return sign * mantissa * std::ldexp(1.0, -9);
  return sign * (1.0 + mantissa / 8.0) * std::ldexp(1.0, exponent - 7);
}

TEST(Fp8RowsTest, EveryCodeDecodesToItsValueAndEncodesBack) {
  for (int code = 0; code < 256; ++code) {
    const uint8_t c = static_cast<uint8_t>(code);
    if ((c & 0x7f) == 0x7f) {
      EXPECT_TRUE(std::isnan(E4M3ToFloat(c))) << code;
      continue;
    }
    EXPECT_EQ(static_cast<double>(E4M3ToFloat(c)), Defined(c)) << code;
    EXPECT_EQ(E4M3FromFloat(E4M3ToFloat(c)), c) << code;
  }
  EXPECT_EQ(E4M3ToFloat(0x7e), 448.0f);
  EXPECT_EQ(E4M3ToFloat(0x01), std::ldexp(1.0f, -9));
}

TEST(Fp8RowsTest, EncodingRoundsToNearestEvenAndSaturates) {
  // Between 1 (0x38) and 1.125 (0x39): below, at and above the midpoint; 1.0625 ties to even.
  EXPECT_EQ(E4M3FromFloat(1.06f), 0x38);
  EXPECT_EQ(E4M3FromFloat(1.0625f), 0x38);
  EXPECT_EQ(E4M3FromFloat(1.07f), 0x39);
  EXPECT_EQ(E4M3FromFloat(1.1875f), 0x3a);  // Between 1.125 (odd) and 1.25: up to even.
  // Subnormals: 1.5 and 2.5 units of 2^-9 tie to 2; 7.5 units to the least normal, 2^-6.
  EXPECT_EQ(E4M3FromFloat(1.5f * std::ldexp(1.0f, -9)), 0x02);
  EXPECT_EQ(E4M3FromFloat(2.5f * std::ldexp(1.0f, -9)), 0x02);
  EXPECT_EQ(E4M3FromFloat(7.5f * std::ldexp(1.0f, -9)), 0x08);
  EXPECT_EQ(E4M3FromFloat(std::ldexp(1.0f, -12)), 0x00);
  EXPECT_EQ(E4M3FromFloat(-0.0f), 0x80);
  // The largest normals round up into the next binade: 15.5 (between 15 and 16) to 16.
  EXPECT_EQ(E4M3FromFloat(15.5f), E4M3FromFloat(16.0f));
  for (float big : {448.0f, 449.0f, 1e6f, INFINITY}) {
    EXPECT_EQ(E4M3FromFloat(big), 0x7e) << big;
    EXPECT_EQ(E4M3FromFloat(-big), 0xfe) << big;
  }
  EXPECT_EQ(E4M3FromFloat(447.0f), 0x7e);
  EXPECT_EQ(E4M3FromFloat(NAN), kE4M3NaN);
}

TEST(Fp8RowsTest, TheRowScaleIgnoresWhatIsNotFinite) {
  float largest = 0;
  for (float value : {1.5f, -3.0f, NAN, INFINITY, 2.0f}) largest = Fp8RowLargest(largest, value);
  EXPECT_EQ(largest, 3.0f);
  EXPECT_EQ(Fp8RowScale(largest), 3.0f / 448.0f);
  EXPECT_EQ(Fp8RowScale(0.0f), 1.0f);
  // The largest value travels as 448 exactly and comes back as itself up to the scale's
  // rounding.
  EXPECT_EQ(Fp8Encode(-3.0f, Fp8RowInverse(Fp8RowScale(3.0f))), 0xfe);
}

// The codes come from a product by the scale's inverse, not a quotient per value: within about
// 2^-23 of the quotient, relative, for scales over the whole range and values over many
// binades below the row's largest.
TEST(Fp8RowsTest, TheProductIsWithinTwoToTheMinus23OfTheQuotient) {
  std::mt19937_64 random(11);
  std::uniform_real_distribution<float> binade(-126.0f, 126.0f);
  std::uniform_real_distribution<float> below(-40.0f, 0.0f);
  for (int row = 0; row < 2000; ++row) {
    const float largest = std::exp2(binade(random));
    const float scale = Fp8RowScale(largest);
    const float inverse = Fp8RowInverse(scale);
    for (int i = 0; i < 50; ++i) {
      const float x = largest * std::exp2(below(random)) * ((random() & 1) != 0 ? 1.0f : -1.0f);
      const double quotient = static_cast<double>(x) / static_cast<double>(scale);
      if (std::fabs(quotient) < std::ldexp(1.0, -126)) continue;  // Codes 0 either way.
      const double product = MulRn(x, inverse);
      EXPECT_LE(std::fabs(product - quotient), std::fabs(quotient) * std::ldexp(1.0, -23) * 1.01)
          << "x " << x << " scale " << scale;
    }
  }
}

TEST(Fp8RowsTest, RowsOfSubnormalsKeepAUsableScale) {
  const float least = std::ldexp(1.0f, -149);  // The least fp32 subnormal.
  for (const float largest : {least, 1000 * least, std::ldexp(1.0f, -120)}) {
    const float scale = Fp8RowScale(largest);
    const float inverse = Fp8RowInverse(scale);
    EXPECT_GE(scale, std::ldexp(1.0f, -126)) << largest;
    for (const float x : {largest, -largest, 0.0f, largest / 3}) {
      const float back =
          Float32Element::ToFloat(Fp8Decode<Float32Element>(Fp8Encode(x, inverse), scale));
      EXPECT_FALSE(std::isnan(back)) << x;
      EXPECT_LE(std::fabs(back - x), std::fabs(x) / 16 + scale * std::ldexp(1.0f, -10) * 1.01f)
          << "x " << x << " scale " << scale;
    }
  }
}

// Rows of `Element` with magnitudes spread over many binades come back within 2^-4 relative
// plus 2^-10 scale absolute, plus the dtype's rounding of the result; the same bits on every
// call.
template <typename Element>
void ExpectRowsWithinTheBound(double dtype_unit) {
  using Bits = typename Element::Bits;
  std::mt19937_64 random(3);
  std::uniform_real_distribution<float> exponent(-12.0f, 8.0f);
  for (int row = 0; row < 200; ++row) {
    std::vector<Bits> values(128);
    float largest = 0;
    for (Bits& v : values) {
      const float x = ((random() & 1) != 0 ? 1.0f : -1.0f) * std::exp2(exponent(random));
      v = Element::FromFloat(x);
      largest = Fp8RowLargest(largest, Element::ToFloat(v));
    }
    const float scale = Fp8RowScale(largest);
    const float inverse = Fp8RowInverse(scale);
    for (const Bits v : values) {
      const double x = Element::ToFloat(v);
      const uint8_t code = Fp8Encode(Element::ToFloat(v), inverse);
      const Bits back = Fp8Decode<Element>(code, scale);
      EXPECT_EQ(back, Fp8Decode<Element>(Fp8Encode(Element::ToFloat(v), inverse), scale));
      const double error = std::fabs(Element::ToFloat(back) - x);
      const double bound =
          std::fabs(x) * (1.0 / 16 + dtype_unit) + scale * std::ldexp(1.0, -10) * 1.01;
      EXPECT_LE(error, bound) << "value " << x << " scale " << scale;
    }
  }
}

TEST(Fp8RowsTest, RowsComeBackWithinTheBoundOfE4M3) {
  ExpectRowsWithinTheBound<BFloat16Element>(1.0 / 256);
  ExpectRowsWithinTheBound<Float16Element>(1.0 / 2048);
  ExpectRowsWithinTheBound<Float32Element>(1e-7);
}

}  // namespace
}  // namespace ltx
