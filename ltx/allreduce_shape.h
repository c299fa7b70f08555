// AllReduceShape: the shape of one AllReduce, the same on every rank.
#ifndef LTX_ALLREDUCE_SHAPE_H_
#define LTX_ALLREDUCE_SHAPE_H_

#include <cstdint>

#include "ltx/data_type.h"
#include "ltx/reduction.h"

namespace ltx {

// Every rank's input and output are `count` contiguous elements of `dtype` (bf16, fp16 or fp32;
// aligned to the element size); afterwards every rank's output holds the element-wise
// `reduction` of all ranks' inputs, bitwise the same on every rank (ltx/reduction.h).
struct AllReduceShape {
  DataType dtype = DataType::kBFloat16;
  int64_t count = 0;  // Elements per rank, >= 0.
  Reduction reduction = Reduction::kSum;
};

}  // namespace ltx

#endif  // LTX_ALLREDUCE_SHAPE_H_
