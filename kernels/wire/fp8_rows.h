// FP8 on the wire: how a row of bf16, fp16 or fp32 values travels as fp8 e4m3 with one fp32
// scale, and how the receiver turns it back into the output's dtype. One definition for the
// senders and receivers of the kernels and for the host reference of the tests, so that every
// rank and every run gets the same bits.
//
// A row x[0 .. n) (each value as fp32) travels as:
//   m = the largest |x[i]| over the finite values (0 when there is none)
//   scale = m / 448 (fp32, correctly rounded) but at least 2^-126 (the least normal fp32, so
//     that rows of tiny values keep a usable scale), or 1 when m is 0
//   inverse = 1 / scale (fp32, correctly rounded), once per row
//   q[i] = e4m3(x[i] * inverse): the product correctly rounded to fp32, then rounded to the
//     nearest e4m3 value, ties to even; magnitudes from 448 up (infinities too) saturate to 448;
//     a NaN becomes the e4m3 NaN 0x7f. A product, not a quotient per value: a division's slow
//     path (taken for quotients below the normal range, as in rows that span many binades)
//     would make the cost depend on the data; the product differs from the exact quotient by at
//     most 2^-23 of it (two roundings of 2^-24 each), which the bound below absorbs
// and the receiver writes round(value(q[i]) * scale) in its dtype (the product correctly rounded
// to fp32, then to the dtype, a NaN made canonical). e4m3 ("fn": no infinities) has 4 exponent
// bits (bias 7) and 3 mantissa bits: normal values (1 + k/8) 2^(e - 7) for e in 1..15 up to 448
// (e = 15, k = 6), subnormals k 2^-9; so a finite value comes back within 2^-4 of itself
// relative, plus 2^-10 scale absolute below the normal range, plus the dtype's own rounding.
#ifndef KERNELS_WIRE_FP8_ROWS_H_
#define KERNELS_WIRE_FP8_ROWS_H_

#include <cstdint>

#include "kernels/reduce/reduce_math.h"
#include "kernels/wire/host_device.h"

namespace ltx {

// The largest finite e4m3 magnitude, and the NaN code.
inline constexpr float kE4M3Max = 448.0f;
inline constexpr uint8_t kE4M3NaN = 0x7f;

// `value` as e4m3: round to nearest, ties to even; saturating at ±448; NaN as kE4M3NaN.
LTX_HOST_DEVICE inline uint8_t E4M3FromFloat(float value) {
  const uint32_t bits = BitsOfFloat(value);
  const uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return kE4M3NaN;
  const float a = FloatOfBits(magnitude);
  if (a >= kE4M3Max) return static_cast<uint8_t>(sign | 0x7eu);
  if (a < 0.015625f) {  // Below 2^-6: a subnormal, k 2^-9 with k in 0..8 (8: the least normal).
    const float units = a * 512.0f;  // Exact: a power of two.
    uint32_t k = static_cast<uint32_t>(units);
    const float rest = units - static_cast<float>(k);  // Exact.
    if (rest > 0.5f || (rest == 0.5f && (k & 1u) != 0)) ++k;
    return static_cast<uint8_t>(sign | k);
  }
  // Normal: keep 3 of fp32's 23 mantissa bits, rounding the other 20 to nearest even (a carry
  // moves into the exponent, which stays in range below 448).
  const uint32_t rounded = magnitude + 0x7ffffu + ((magnitude >> 20) & 1u);
  const uint32_t exponent = ((rounded >> 23) & 0xffu) - 127u + 7u;
  const uint32_t mantissa = (rounded >> 20) & 0x7u;
  return static_cast<uint8_t>(sign | (exponent << 3) | mantissa);
}

// The value of e4m3 `code` as fp32 (exact); NaN for 0x7f and 0xff.
LTX_HOST_DEVICE inline float E4M3ToFloat(uint8_t code) {
  const uint32_t sign = static_cast<uint32_t>(code & 0x80u) << 24;
  const uint32_t exponent = (code >> 3) & 0xfu;
  const uint32_t mantissa = code & 0x7u;
  if (exponent == 0xfu && mantissa == 0x7u) return FloatOfBits(kCanonicalNaN);
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) * 0.001953125f;  // k 2^-9, exact.
    return FloatOfBits(sign | BitsOfFloat(magnitude));
  }
  return FloatOfBits(sign | ((exponent - 7u + 127u) << 23) | (mantissa << 20));
}

// The least scale: the least normal fp32, 2^-126.
inline constexpr float kFp8MinScale = 1.17549435e-38f;

// The scale of a row whose largest finite magnitude is `largest` (>= 0).
LTX_HOST_DEVICE inline float Fp8RowScale(float largest) {
  if (!(largest > 0.0f)) return 1.0f;
  const float scale = DivRn(largest, kE4M3Max);
  return scale > kFp8MinScale ? scale : kFp8MinScale;
}

// The larger of `largest` and |value| when `value` is finite (the row's m, value by value).
LTX_HOST_DEVICE inline float Fp8RowLargest(float largest, float value) {
  const float magnitude = FloatOfBits(BitsOfFloat(value) & 0x7fffffffu);
  return magnitude < FloatOfBits(0x7f800000u) && magnitude > largest ? magnitude : largest;
}

// The codes of `low` and `high` (E4M3FromFloat of each), `low`'s in bits 0-7 and `high`'s in
// bits 8-15. Code built for compute capability 8.9 and up (this build: sm_90 and the compute_90
// PTX that newer GPUs compile; an 8.x GPU runs the sm_80 code) converts both in one instruction
// (cvt.rn.satfinite: the same rounding and saturation), whose NaN may keep the input's sign:
// made kE4M3NaN, so that every GPU and the host give the same codes.
LTX_HOST_DEVICE inline uint32_t E4M3PairFromFloats(float low, float high) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  uint32_t codes;
  asm("{\n .reg .b16 pair;\n cvt.rn.satfinite.e4m3x2.f32 pair, %1, %2;\n"
      " cvt.u32.u16 %0, pair;\n}" : "=r"(codes) : "f"(high), "f"(low));
  if ((codes & 0x7fu) == 0x7fu) codes = (codes & 0xff00u) | kE4M3NaN;
  if ((codes & 0x7f00u) == 0x7f00u) codes = (codes & 0x00ffu) | (uint32_t{kE4M3NaN} << 8);
  return codes;
#else
  return uint32_t{E4M3FromFloat(low)} | (uint32_t{E4M3FromFloat(high)} << 8);
#endif
}

// The values of the codes in bits 0-7 (*low) and 8-15 (*high) of `codes`, E4M3ToFloat of each.
// Code built for compute capability 8.9 and up converts both through fp16, exactly, in three
// instructions; its NaN may have another payload than the host's (Fp8DecodeValue makes every
// NaN canonical).
LTX_HOST_DEVICE inline void E4M3PairToFloats(uint32_t codes, float* low, float* high) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  asm("{\n .reg .b16 pair, l, h;\n .reg .b32 halves;\n cvt.u16.u32 pair, %2;\n"
      " cvt.rn.f16x2.e4m3x2 halves, pair;\n mov.b32 {l, h}, halves;\n"
      " cvt.f32.f16 %0, l;\n cvt.f32.f16 %1, h;\n}" : "=f"(*low), "=f"(*high) : "r"(codes));
#else
  *low = E4M3ToFloat(static_cast<uint8_t>(codes));
  *high = E4M3ToFloat(static_cast<uint8_t>(codes >> 8));
#endif
}

// What a row's values are multiplied by before they become codes: 1 / scale, correctly
// rounded (finite: a scale lies in [2^-126, 2^127]).
LTX_HOST_DEVICE inline float Fp8RowInverse(float scale) {
#ifdef __CUDA_ARCH__
  return __frcp_rn(scale);
#else
  return 1.0f / scale;
#endif
}

// The code that carries `value` of a row whose scale's inverse is `inverse` (Fp8RowInverse).
LTX_HOST_DEVICE inline uint8_t Fp8Encode(float value, float inverse) {
  return E4M3FromFloat(MulRn(value, inverse));
}

// Fp8Encode of `low` and `high`, `low`'s code in bits 0-7 and `high`'s in bits 8-15.
LTX_HOST_DEVICE inline uint32_t Fp8EncodePair(float low, float high, float inverse) {
  return E4M3PairFromFloats(MulRn(low, inverse), MulRn(high, inverse));
}

// The `Element` bits the receiver writes for a code of value `value` (E4M3ToFloat, any NaN) of a
// row with `scale`.
template <typename Element>
LTX_HOST_DEVICE inline typename Element::Bits Fp8DecodeValue(float value, float scale) {
  return RoundCanonical<Element>(MulRn(value, scale));
}

// The `Element` bits the receiver writes for `code` of a row with `scale`.
template <typename Element>
LTX_HOST_DEVICE inline typename Element::Bits Fp8Decode(uint8_t code, float scale) {
  return Fp8DecodeValue<Element>(E4M3ToFloat(code), scale);
}

}  // namespace ltx

#endif  // KERNELS_WIRE_FP8_ROWS_H_
