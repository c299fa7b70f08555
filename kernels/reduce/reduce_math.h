// The arithmetic of the reductions, one definition for the kernels and for the host reference
// of the tests: the element types (bf16, fp16, fp32) as their bits, their exact conversions to
// and from fp32 (round to nearest even, subnormals kept, no flush to zero), the reductions
// (sum, max, min) on fp32, and the fixed order in which a rank combines the ranks' elements.
// Plain integer and fp32 arithmetic, compiled for host and device alike, so that the host
// reference computes the very bits every GPU does.
#ifndef KERNELS_REDUCE_REDUCE_MATH_H_
#define KERNELS_REDUCE_REDUCE_MATH_H_

#include <cstdint>
#include <cstring>

#include "kernels/wire/host_device.h"

namespace ltx {

// Values of ltx::DataType (ltx/data_type.h) that the reductions take; they travel as int32.
inline constexpr int32_t kReduceBFloat16 = 1;
inline constexpr int32_t kReduceFloat16 = 2;
inline constexpr int32_t kReduceFloat32 = 3;

// Values of ltx::Reduction (ltx/reduction.h); they travel as int32.
inline constexpr int32_t kReduceSum = 1;
inline constexpr int32_t kReduceMax = 2;
inline constexpr int32_t kReduceMin = 3;

LTX_HOST_DEVICE inline float FloatOfBits(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

LTX_HOST_DEVICE inline uint32_t BitsOfFloat(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// bfloat16: the top half of an fp32.
struct BFloat16Element {
  using Bits = uint16_t;
  LTX_HOST_DEVICE static float ToFloat(uint16_t bits) { return FloatOfBits(uint32_t{bits} << 16); }
  LTX_HOST_DEVICE static uint16_t FromFloat(float value) {
    const uint32_t bits = BitsOfFloat(value);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
    const uint32_t rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
    return static_cast<uint16_t>(rounded >> 16);
  }
};

// IEEE binary16.
struct Float16Element {
  using Bits = uint16_t;
  LTX_HOST_DEVICE static float ToFloat(uint16_t bits) {
    const uint32_t sign = uint32_t{bits & 0x8000u} << 16;
    const uint32_t exponent = (bits >> 10) & 0x1fu;
    uint32_t mantissa = bits & 0x3ffu;
    if (exponent == 0x1fu) return FloatOfBits(sign | 0x7f800000u | (mantissa << 13));
    if (exponent != 0) return FloatOfBits(sign | ((exponent + 112u) << 23) | (mantissa << 13));
    if (mantissa == 0) return FloatOfBits(sign);
    // Subnormal: mantissa * 2^-24, normalised.
    uint32_t shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    return FloatOfBits(sign | ((113u - shift) << 23) | ((mantissa & 0x3ffu) << 13));
  }
  LTX_HOST_DEVICE static uint16_t FromFloat(float value) {
    const uint32_t bits = BitsOfFloat(value);
    const uint32_t sign = (bits >> 16) & 0x8000u;
    const uint32_t magnitude = bits & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
    if (magnitude >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 2^16: inf
    if (magnitude <= 0x33000000u) return static_cast<uint16_t>(sign);  // <= 2^-25: zero (even)
    const uint32_t exponent = magnitude >> 23;
    if (exponent < 113u) {
      // A subnormal result: the mantissa (with its hidden bit) in units of 2^-24.
      const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
      const uint32_t shift = 126u - exponent;
      const uint32_t half = 1u << (shift - 1);
      const uint32_t remainder = mantissa & ((1u << shift) - 1);
      uint32_t result = mantissa >> shift;
      if (remainder > half || (remainder == half && (result & 1u) != 0)) ++result;
      return static_cast<uint16_t>(sign | result);
    }
    // A normal result; a carry out of the mantissa rounds up into the exponent (or to inf).
    uint32_t result = ((exponent - 112u) << 10) | ((magnitude >> 13) & 0x3ffu);
    const uint32_t remainder = magnitude & 0x1fffu;
    if (remainder > 0x1000u || (remainder == 0x1000u && (result & 1u) != 0)) ++result;
    return static_cast<uint16_t>(sign | result);
  }
};

// fp32 itself.
struct Float32Element {
  using Bits = uint32_t;
  LTX_HOST_DEVICE static float ToFloat(uint32_t bits) { return FloatOfBits(bits); }
  LTX_HOST_DEVICE static uint32_t FromFloat(float value) { return BitsOfFloat(value); }
};

// `reduction` (kReduceSum, kReduceMax, kReduceMin) of the accumulated `acc` and the next rank's
// `value`. Max and min keep `acc` unless `value` is strictly larger (smaller).
LTX_HOST_DEVICE inline float CombineReduce(int32_t reduction, float acc, float value) {
  if (reduction == kReduceMax) return value > acc ? value : acc;
  if (reduction == kReduceMin) return value < acc ? value : acc;
  return acc + value;
}

// The reduction of one element over `world` ranks, `element(s)` being rank s's bits: rank 0's
// value, combined with rank 1's, then rank 2's, ..., in fp32, rounded once at the end. The one
// order of every rank, every block count and every run.
template <typename Element, typename ElementOf>
LTX_HOST_DEVICE inline typename Element::Bits ReduceInRankOrder(int32_t reduction, int world,
                                                                const ElementOf& element) {
  float acc = Element::ToFloat(element(0));
  for (int s = 1; s < world; ++s) acc = CombineReduce(reduction, acc, Element::ToFloat(element(s)));
  return Element::FromFloat(acc);
}

}  // namespace ltx

#endif  // KERNELS_REDUCE_REDUCE_MATH_H_
