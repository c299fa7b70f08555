// The arithmetic of the reductions, one definition for the kernels and for the host reference
// of the tests: the element types (bf16, fp16, fp32) as their bits, their exact conversions to
// and from fp32 (round to nearest even, subnormals kept, no flush to zero), the reductions
// (sum, max, min) on fp32, and the fixed order in which a rank combines the ranks' elements.
// Plain integer and fp32 arithmetic, compiled for host and device alike, so that the host
// reference computes the very bits every GPU does. NaN and signed zeros are defined so that
// the bits do not depend on the hardware either: a NaN result is always kCanonicalNaN (GPUs and
// CPUs propagate different NaN payloads), max and min propagate NaN, and max(-0, +0) = +0,
// min(-0, +0) = -0 whatever their order (IEEE 754-2019 maximum and minimum).
#ifndef KERNELS_REDUCE_REDUCE_MATH_H_
#define KERNELS_REDUCE_REDUCE_MATH_H_

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/wire/host_device.h"
#include "kernels/wire/signal_layout.h"

namespace ltx {

// Values of ltx::DataType (ltx/data_type.h) that the reductions take; they travel as int32.
inline constexpr int32_t kReduceBFloat16 = 1;
inline constexpr int32_t kReduceFloat16 = 2;
inline constexpr int32_t kReduceFloat32 = 3;

// Values of ltx::Reduction (ltx/reduction.h); they travel as int32.
inline constexpr int32_t kReduceSum = 1;
inline constexpr int32_t kReduceMax = 2;
inline constexpr int32_t kReduceMin = 3;

// The fp32 bits of every NaN that a reduction produces (a quiet NaN, positive); converted to
// bf16 0x7fff, to fp16 0x7e00.
inline constexpr uint32_t kCanonicalNaN = 0x7fffffffu;

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

// One correctly rounded IEEE fp32 operation each: the device's _rn intrinsics (which the
// compiler never contracts into a fused multiply-add), the host's plain fp32 arithmetic (no
// contraction on the targets ltx builds for) and std::fma and std::sqrt.
LTX_HOST_DEVICE inline float AddRn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

LTX_HOST_DEVICE inline float MulRn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

LTX_HOST_DEVICE inline float DivRn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

LTX_HOST_DEVICE inline float FmaRn(float a, float b, float c) {
#ifdef __CUDA_ARCH__
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

LTX_HOST_DEVICE inline float SqrtRn(float a) {
#ifdef __CUDA_ARCH__
  return __fsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}

// `value`, with every NaN made kCanonicalNaN, rounded to `Element`.
template <typename Element>
LTX_HOST_DEVICE inline typename Element::Bits RoundCanonical(float value) {
  return Element::FromFloat(value != value ? FloatOfBits(kCanonicalNaN) : value);
}

// `reduction` (kReduceSum, kReduceMax, kReduceMin) of the accumulated `acc` and the next rank's
// `value`. Max and min: a NaN on either side gives a NaN (its payload is made canonical at the
// end, ReduceInRankOrder); equal values differ in their bits only as -0 and +0, of which max
// takes +0 (the AND of the bits) and min -0 (the OR); otherwise the larger (smaller) value.
LTX_HOST_DEVICE inline float CombineReduce(int32_t reduction, float acc, float value) {
  if (reduction == kReduceSum) return AddRn(acc, value);
  if (value != value) return value;
  if (acc == value) {
    const uint32_t a = BitsOfFloat(acc);
    const uint32_t v = BitsOfFloat(value);
    return FloatOfBits(reduction == kReduceMax ? (a & v) : (a | v));
  }
  // With acc NaN both comparisons are false: acc stays.
  if (reduction == kReduceMax) return value > acc ? value : acc;
  return value < acc ? value : acc;
}

// The reduction of one element over `world` ranks (1 .. kMaxWorldSize), `element(s)` being
// rank s's bits: rank 0's value, combined with rank 1's, then rank 2's, ..., in fp32, a NaN
// made kCanonicalNaN, rounded once at the end. The one order of every rank, every block count
// and every run. The rank loop runs to the constant kMaxWorldSize, so that the compiler unrolls
// it and a kernel's per-rank values stay in registers (element(s) is called with constants).
template <typename Element, typename ElementOf>
LTX_HOST_DEVICE inline typename Element::Bits ReduceInRankOrder(int32_t reduction, int world,
                                                                const ElementOf& element) {
  float acc = Element::ToFloat(element(0));
  for (int s = 1; s < kMaxWorldSize; ++s) {
    if (s < world) acc = CombineReduce(reduction, acc, Element::ToFloat(element(s)));
  }
  if (acc != acc) acc = FloatOfBits(kCanonicalNaN);
  return Element::FromFloat(acc);
}

}  // namespace ltx

#endif  // KERNELS_REDUCE_REDUCE_MATH_H_
