// The plan of the reductions' kernel: which input elements each output element of a rank is
// reduced from, and which thread of the grid reduces which output elements, in 16-byte vectors
// where every input and the output are co-aligned and element by element elsewhere.
//
// Plain integer arithmetic, compiled for host and device alike, so the CPU tests check the very
// functions the kernel runs (every output element produced exactly once, from the right input
// elements, for any shape, alignment and grid).
//
// Model. Every rank's input is [batch, rows, row_elements]. Rank r reduces the rows
// [first_row_r, first_row_r + rows_r) of each batch slice over every rank's input, and its
// output is those rows, contiguous: [batch, rows_r, row_elements]. The AllReduce is one row of
// `count` elements that every rank reduces; the ReduceScatter gives rank r its token rows. So a
// batch slice of the output is one contiguous run of `slice_elements` elements, read from one
// contiguous run of every input (ReduceGeometry).
#ifndef KERNELS_REDUCE_REDUCE_PLAN_H_
#define KERNELS_REDUCE_REDUCE_PLAN_H_

#include <cstdint>

#include "kernels/protocols/copy_plan.h"
#include "kernels/wire/host_device.h"

namespace ltx {

// Where one rank's output comes from, in elements.
struct ReduceGeometry {
  int64_t batch = 0;
  int64_t slice_elements = 0;      // rows_r * row_elements: one batch slice of the output.
  int64_t input_batch_stride = 0;  // rows * row_elements: one batch slice of every input.
  int64_t input_offset = 0;        // first_row_r * row_elements.
  int32_t element_size = 0;        // 2 or 4 bytes.
};

// The input element of every rank that output element `index` of batch slice `slice` is reduced
// from, and where that output element lies.
LTX_HOST_DEVICE inline int64_t ReduceInputIndex(const ReduceGeometry& g, int64_t slice,
                                                int64_t index) {
  return slice * g.input_batch_stride + g.input_offset + index;
}
LTX_HOST_DEVICE inline int64_t ReduceOutputIndex(const ReduceGeometry& g, int64_t slice,
                                                 int64_t index) {
  return slice * g.slice_elements + index;
}

// How one batch slice is reduced: `head` single elements up to the first 16-byte-aligned output
// address, `body_units` vectors of `vector_elements` elements, then `tail` single elements.
// Where an input is not co-aligned with the output, vector_elements is 1 and every element is
// part of the head.
struct ReduceSplit {
  int vector_elements = 1;
  int64_t head = 0;
  int64_t body_units = 0;
  int64_t tail = 0;
};

// The split of a run of `elements` elements of `element_size` bytes (2 or 4) written at byte
// address `output` and read from byte addresses `inputs[s] + input_offset` for s in
// [0, world), every address a multiple of the element size.
LTX_HOST_DEVICE inline ReduceSplit SplitForReduce(uint64_t output, const uint64_t* inputs,
                                                  int64_t input_offset, int world,
                                                  int64_t elements, int element_size) {
  uint64_t misalignment = 0;
  for (int s = 0; s < world; ++s) {
    misalignment |= (inputs[s] + static_cast<uint64_t>(input_offset)) ^ output;
  }
  ReduceSplit split;
  constexpr uint64_t kMask = kVectorBytes - 1;
  if ((misalignment & kMask) != 0) {
    split.head = elements;
    return split;
  }
  split.vector_elements = kVectorBytes / element_size;
  const int64_t head =
      static_cast<int64_t>((kVectorBytes - (output & kMask)) & kMask) / element_size;
  split.head = head < elements ? head : elements;
  split.body_units = (elements - split.head) / split.vector_elements;
  split.tail = elements - split.head - split.body_units * split.vector_elements;
  return split;
}

// The work items of a split: head elements, body vectors, tail elements, in that order. Thread
// `t` of the `T` threads of a grid takes items t, t + T, t + 2T, ... of every batch slice.
LTX_HOST_DEVICE inline int64_t ReduceItemCount(const ReduceSplit& split) {
  return split.head + split.body_units + split.tail;
}

// One work item: `elements` consecutive output elements from `first` (a vector when
// elements > 1).
struct ReduceItem {
  int64_t first = 0;
  int elements = 1;
};

// Item `item` (< ReduceItemCount) of `split`.
LTX_HOST_DEVICE inline ReduceItem ReduceItemOf(const ReduceSplit& split, int64_t item) {
  ReduceItem result;
  if (item < split.head) {
    result.first = item;
    return result;
  }
  const int64_t body_item = item - split.head;
  if (body_item < split.body_units) {
    result.first = split.head + body_item * split.vector_elements;
    result.elements = split.vector_elements;
    return result;
  }
  result.first =
      split.head + split.body_units * split.vector_elements + (body_item - split.body_units);
  return result;
}

}  // namespace ltx

#endif  // KERNELS_REDUCE_REDUCE_PLAN_H_
