// Block-wide copies used by the AllGather kernels: a contiguous segment is copied as a
// single-byte head, a body of the widest co-aligned unit (16-byte vectors with loads in flight
// when source and destination allow it), and a single-byte tail. The split comes from the copy
// plan (kernels/protocols/copy_plan.h), whose CPU tests simulate exactly these loops.
#ifndef KERNELS_DEVICE_BLOCK_COPY_CUH_
#define KERNELS_DEVICE_BLOCK_COPY_CUH_

#include <cstdint>

#include "kernels/device/memory_order.cuh"
#include "kernels/protocols/copy_plan.h"

namespace ltx {

// Vectors in flight per thread in the body of a copy.
inline constexpr int kCopyUnroll = 4;

template <typename Vector>
__device__ __forceinline__ Vector LoadUnit(const Vector* address) {
  return __ldg(address);
}
template <>
__device__ __forceinline__ int4 LoadUnit<int4>(const int4* address) {
  return LoadVectorStreaming(address);
}

template <typename Vector>
__device__ __forceinline__ void StoreUnit(Vector* address, const Vector& value) {
  *address = value;
}
template <>
__device__ __forceinline__ void StoreUnit<int4>(int4* address, const int4& value) {
  StoreVectorStreaming(address, value);
}

// The block copies `units` vectors; thread t takes units t, t + blockDim.x, ... (the same set
// the copy plan tests simulate), kCopyUnroll of them loaded before any is stored.
template <typename Vector>
__device__ inline void CopyBody(Vector* dst, const Vector* src, int64_t units) {
  const int64_t stride = blockDim.x;
  int64_t unit = threadIdx.x;
  for (; unit + (kCopyUnroll - 1) * stride < units; unit += kCopyUnroll * stride) {
    Vector values[kCopyUnroll];
#pragma unroll
    for (int k = 0; k < kCopyUnroll; ++k) values[k] = LoadUnit(src + unit + k * stride);
#pragma unroll
    for (int k = 0; k < kCopyUnroll; ++k) StoreUnit(dst + unit + k * stride, values[k]);
  }
  for (; unit < units; unit += stride) StoreUnit(dst + unit, LoadUnit(src + unit));
}

__device__ inline void CopyBytes(uint8_t* dst, const uint8_t* src, int64_t bytes) {
  for (int64_t i = threadIdx.x; i < bytes; i += blockDim.x) dst[i] = src[i];
}

// The block copies one contiguous segment: single-byte head, widest co-aligned body, tail.
__device__ inline void CopySegment(uint8_t* dst, const uint8_t* src, int64_t bytes) {
  const CopySplit split =
      SplitForCopy(reinterpret_cast<uint64_t>(dst), reinterpret_cast<uint64_t>(src), bytes);
  CopyBytes(dst, src, split.head_bytes);
  uint8_t* body_dst = dst + split.head_bytes;
  const uint8_t* body_src = src + split.head_bytes;
  switch (split.width) {
    case 16:
      CopyBody(reinterpret_cast<int4*>(body_dst), reinterpret_cast<const int4*>(body_src),
               split.body_units);
      break;
    case 8:
      CopyBody(reinterpret_cast<uint64_t*>(body_dst), reinterpret_cast<const uint64_t*>(body_src),
               split.body_units);
      break;
    case 4:
      CopyBody(reinterpret_cast<uint32_t*>(body_dst), reinterpret_cast<const uint32_t*>(body_src),
               split.body_units);
      break;
    case 2:
      CopyBody(reinterpret_cast<uint16_t*>(body_dst), reinterpret_cast<const uint16_t*>(body_src),
               split.body_units);
      break;
    default:
      CopyBytes(body_dst, body_src, split.body_units);
      break;
  }
  const int64_t body_bytes = split.body_units * split.width;
  CopyBytes(body_dst + body_bytes, body_src + body_bytes, split.tail_bytes);
}

// The block copies the byte range `range` of the sweep of a rank's flat shards (geometry
// `geometry`, one shard per tensor of `at`) from each tensor's input into its output, one
// contiguous segment per batch slice (TensorSliceSegment).
__device__ inline void CopyRange(const ShardGeometry& geometry, const ByteRange& range,
                                 const TensorAddresses& at) {
  const int64_t end_slice = EndSlice(geometry, range);
  for (int64_t slice = FirstSlice(geometry, range); slice < end_slice; ++slice) {
    const TensorSegment part = TensorSliceSegment(geometry, range, slice);
    CopySegment(reinterpret_cast<uint8_t*>(at.Output(part.tensor)) + part.segment.dst_offset,
                reinterpret_cast<const uint8_t*>(at.Input(part.tensor)) + part.segment.src_offset,
                part.segment.bytes);
  }
}

// The block copies every tile of lane `lane` (kernels/protocols/copy_plan.h: LaneTilesOf,
// LaneTile) of this rank's shards of every tensor of `at` into the target's outputs there.
__device__ inline void CopyLane(const ShardGeometry& geometry, int lane, int lanes, int world,
                                const TensorAddresses& at) {
  const LaneTiles tiles = LaneTilesOf(geometry, lane, lanes, world, at.tensors);
  for (int64_t k = 0;; ++k) {
    const ByteRange tile = LaneTile(tiles, k);
    if (tile.begin >= tile.end) return;
    CopyRange(geometry, tile, at);
  }
}

}  // namespace ltx

#endif  // KERNELS_DEVICE_BLOCK_COPY_CUH_
