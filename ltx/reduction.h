// Reduction: how the AllReduce and the ReduceScatter combine the ranks' elements.
#ifndef LTX_REDUCTION_H_
#define LTX_REDUCTION_H_

#include <cstdint>
#include <string>

namespace ltx {

// The element-wise reduction of a collective. Values are stable: they travel between GPUs.
// Every rank combines the ranks' elements in rank order 0, 1, ..., world - 1, in fp32 for the
// 16-bit types, and rounds once to the element type at the end, so that every rank and every
// run gets the same bits. A NaN on any rank gives one canonical quiet NaN (max and min
// propagate it too); max(-0, +0) is +0 and min(-0, +0) is -0, in either order.
enum class Reduction : int32_t {
  kSum = 1,
  kMax = 2,
  kMin = 3,
};

// "sum", "max" or "min"; "unknown(N)" for a value outside the enum.
std::string ReductionName(Reduction reduction);

}  // namespace ltx

#endif  // LTX_REDUCTION_H_
