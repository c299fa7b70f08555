// The arithmetic of the AllReduce's fused residual-add + RMSNorm epilogue, one definition for
// the kernel and for the host reference of the tests, so both compute the very same bits.
//
// For each row of `hidden` elements, with s[i] the AllReduce's sum of element i (its bits, as
// ReduceInRankOrder rounds it to the dtype):
//   residual_out[i] = round(s[i] + residual[i])                          (in fp32, then rounded)
//   thread t of kRmsNormThreads: p[t] = 0, then p[t] = fma(x, x, p[t]) for x = residual_out[i]
//     (as fp32) over the elements i of its units in increasing order: unit u is the U = 16 bytes
//     of elements [u U, u U + U) (8 bf16 or fp16, 4 fp32), and thread t's units are t,
//     t + kRmsNormThreads, ... (RmsNormThreadOf), so that a thread can load each of its units as
//     one 16-byte vector
//   w[k] = the p of warp k (threads 32 k .. 32 k + 31) combined by the butterfly: for
//     o = 16, 8, 4, 2, 1 every lane l takes p[l] + p[l ^ o] (addition commutes, so every lane
//     ends with the same bits)
//   q = w[0] + w[1], then + w[2], ..., + w[kRmsNormWarps - 1], in that order
//   scale = 1 / sqrt(q / hidden + eps)
//   out[i] = round((residual_out[i] * scale) * weight[i])
// Every operation is one correctly rounded IEEE fp32 operation (the device's _rn intrinsics;
// on the host, plain fp32 arithmetic with no contraction into fused multiply-adds but the one
// fma named above), and a NaN result is made kCanonicalNaN before it is rounded, so the bits
// depend on neither the hardware nor the compiler.
#ifndef KERNELS_REDUCE_RMSNORM_MATH_H_
#define KERNELS_REDUCE_RMSNORM_MATH_H_

#include <cstdint>

#include "kernels/reduce/reduce_math.h"
#include "kernels/wire/host_device.h"

namespace ltx {

// The threads that share a row's sum of squares (one block of the kernel), in warps of
// kRmsNormLanes.
inline constexpr int kRmsNormThreads = 512;
inline constexpr int kRmsNormLanes = 32;
inline constexpr int kRmsNormWarps = kRmsNormThreads / kRmsNormLanes;

// Elements of one thread's unit: 16 bytes of `Element`.
template <typename Element>
LTX_HOST_DEVICE constexpr int RmsNormUnit() {
  return static_cast<int>(16 / sizeof(typename Element::Bits));
}

// The thread that accumulates element `i` of a row.
template <typename Element>
LTX_HOST_DEVICE inline int RmsNormThreadOf(int64_t i) {
  return static_cast<int>((i / RmsNormUnit<Element>()) % kRmsNormThreads);
}

// residual_out[i] from the AllReduce's sum and the residual, both as `Element` bits.
template <typename Element>
LTX_HOST_DEVICE inline typename Element::Bits AddResidual(typename Element::Bits sum,
                                                          typename Element::Bits residual) {
  return RoundCanonical<Element>(AddRn(Element::ToFloat(sum), Element::ToFloat(residual)));
}

// A thread's running sum of squares after one more element, `residual_out` as fp32.
LTX_HOST_DEVICE inline float AccumulateSquare(float partial, float residual_out) {
  return FmaRn(residual_out, residual_out, partial);
}

// One butterfly step: a lane's partial and its partner's; and one step of the warps' fold.
LTX_HOST_DEVICE inline float CombineLanes(float mine, float partner) {
  return AddRn(mine, partner);
}
LTX_HOST_DEVICE inline float CombineWarps(float sum, float next_warp) {
  return AddRn(sum, next_warp);
}

// The row's scale from its sum of squares over `hidden` elements (1 <= hidden <= 2^24, exact
// as an fp32) and `eps`.
LTX_HOST_DEVICE inline float RmsNormScale(float sum_of_squares, int64_t hidden, float eps) {
  const float mean = DivRn(sum_of_squares, static_cast<float>(hidden));
  return DivRn(1.0f, SqrtRn(AddRn(mean, eps)));
}

// out[i] from residual_out[i] and weight[i] (`Element` bits) and the row's scale.
template <typename Element>
LTX_HOST_DEVICE inline typename Element::Bits NormedElement(typename Element::Bits residual_out,
                                                            float scale,
                                                            typename Element::Bits weight) {
  return RoundCanonical<Element>(
      MulRn(MulRn(Element::ToFloat(residual_out), scale), Element::ToFloat(weight)));
}

}  // namespace ltx

#endif  // KERNELS_REDUCE_RMSNORM_MATH_H_
