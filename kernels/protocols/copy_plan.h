// The copy plan of the AllGather: which thread block stores which bytes of this rank's shard
// into which rank's output, and how a contiguous piece is split into 16-byte vectors and the
// narrower head and tail around them.
//
// Plain integer arithmetic, compiled for host and device alike, so the CPU tests check the very
// functions the kernel runs (every output byte stored exactly once, for any shape).
//
// Model. Rank r's input is [batch, tokens_r, hidden]; one batch slice of it is one contiguous
// run of `shard_bytes = tokens_r * row_bytes` bytes, and it lands, contiguous, at byte
// `b * total_tokens * row_bytes + prefix_r * row_bytes` of every output. Rows play no part in
// the copy, so any row size works. The flat range [0, batch * shard_bytes) is copied once per
// target rank. Work is cut into lanes: lane `l` serves target (l + rank) % world and is part
// l / world of that target's lanes, which copies every parts-th tile of the flat range
// (LaneTilesOf, LaneTile). There are max(blocks, world) lanes and block `b` runs lanes b,
// b + blocks, ..., so every target has a sender whatever the block count.
#ifndef KERNELS_PROTOCOLS_COPY_PLAN_H_
#define KERNELS_PROTOCOLS_COPY_PLAN_H_

#include <cstdint>

#include "kernels/device/select_by_index.h"
#include "kernels/wire/host_device.h"
#include "kernels/wire/signal_layout.h"

namespace ltx {

// Widest store the copy uses, in bytes.
inline constexpr int kVectorBytes = 16;

// Where this rank's shard lies in its input and in every output, in bytes.
struct ShardGeometry {
  int64_t batch = 0;
  int64_t shard_bytes = 0;          // tokens_r * row_bytes: one batch slice of the input.
  int64_t output_batch_stride = 0;  // total_tokens * row_bytes.
  int64_t output_offset = 0;        // prefix_r * row_bytes.
};

// The geometry of the shard of a rank with `tokens` tokens at token offset `prefix_tokens`, for
// an op of `batch` slices of `total_tokens` rows of `row_bytes` bytes. The one definition, used
// by the host layout (ltx/collectives/allgather_layout.h) and by the one-trip receiver for every
// peer.
LTX_HOST_DEVICE inline ShardGeometry ShardGeometryOf(int64_t batch, int64_t row_bytes,
                                                     int64_t total_tokens, int64_t tokens,
                                                     int64_t prefix_tokens) {
  ShardGeometry geometry;
  geometry.batch = batch;
  geometry.shard_bytes = tokens * row_bytes;
  geometry.output_batch_stride = total_tokens * row_bytes;
  geometry.output_offset = prefix_tokens * row_bytes;
  return geometry;
}

// A half-open byte range [begin, end).
struct ByteRange {
  int64_t begin = 0;
  int64_t end = 0;
};

// A piece of a lane inside one batch slice: contiguous in the input and in the output.
struct Segment {
  int64_t src_offset = 0;
  int64_t dst_offset = 0;
  int64_t bytes = 0;
};

// How a segment is copied: `head_bytes` single bytes up to the first `width`-aligned output
// address, `body_units` stores of `width` bytes, then `tail_bytes` single bytes. `width` is
// the widest power of two (at most kVectorBytes) at which source and destination are
// co-aligned.
struct CopySplit {
  int width = 1;
  int64_t head_bytes = 0;
  int64_t body_units = 0;
  int64_t tail_bytes = 0;
};

// Shard bytes per target that justify one more thread block in the automatic block count.
inline constexpr int64_t kBytesPerBlock = 64 * 1024;

// The automatic block count for a rank whose flat shard is `flat_bytes`: enough blocks per
// target for kBytesPerBlock each, at least one per target, at most `max_blocks` (>= 1) in all.
LTX_HOST_DEVICE inline int AutoBlockCount(int64_t flat_bytes, int world, int max_blocks) {
  int64_t per_target = (flat_bytes + kBytesPerBlock - 1) / kBytesPerBlock;
  if (per_target < 1) per_target = 1;
  const int64_t blocks = per_target * world;
  return blocks < max_blocks ? static_cast<int>(blocks) : max_blocks;
}

// Bytes of this rank's shard over all batch slices: what it stores into each output.
LTX_HOST_DEVICE inline int64_t FlatShardBytes(const ShardGeometry& g) {
  return g.batch * g.shard_bytes;
}

// Where the buffers of an op's tensors lie for one (rank, target) pair: tensor j goes from the
// rank's input at Input(j) into the target's output at Output(j) (addresses). The kernels index
// the arrays only with constants (every loop over the tensors runs to kMaxOpTensors, unrolled,
// and Input and Output select by comparison, SelectByIndex), so that they stay in registers on
// the copy path of every op.
struct TensorAddresses {
  int tensors = 1;
  uint64_t inputs[kMaxOpTensors] = {};
  uint64_t outputs[kMaxOpTensors] = {};

  LTX_HOST_DEVICE uint64_t Input(int tensor) const { return SelectByIndex(inputs, tensor); }
  LTX_HOST_DEVICE uint64_t Output(int tensor) const { return SelectByIndex(outputs, tensor); }
};

// The addresses of the tensors of the op of `p` (kernel parameters with `tensors`, `input` and
// `more_inputs`: tensor 0's input, then the others') for a target whose outputs are `outputs`
// (one per tensor, tensor 0's first; entries past p.tensors are not read).
template <typename Params>
LTX_HOST_DEVICE TensorAddresses TensorAddressesOf(const Params& p, const uint64_t* outputs) {
  TensorAddresses at;
  at.tensors = p.tensors;
  at.inputs[0] = reinterpret_cast<uint64_t>(p.input);
  at.outputs[0] = outputs[0];
  LTX_UNROLL
  for (int tensor = 1; tensor < kMaxOpTensors; ++tensor) {
    if (tensor < p.tensors) {
      at.inputs[tensor] = reinterpret_cast<uint64_t>(p.more_inputs[tensor - 1]);
      at.outputs[tensor] = outputs[tensor];
    }
  }
  return at;
}

// Number of lanes for a grid of `blocks` blocks over `world` ranks.
LTX_HOST_DEVICE inline int LaneCount(int blocks, int world) {
  return blocks > world ? blocks : world;
}

// The target rank lane `lane` stores into. Rotated by rank so that, when lanes do not divide
// evenly, the extra lanes of different ranks go to different targets.
LTX_HOST_DEVICE inline int LaneTarget(int lane, int rank, int world) {
  return (lane + rank) % world;
}

// Which part of its target's flat range lane `lane` copies, and how many parts there are.
LTX_HOST_DEVICE inline int LanePart(int lane, int world) { return lane / world; }
LTX_HOST_DEVICE inline int LanePartCount(int lane, int lanes, int world) {
  return lanes / world + ((lane % world) < (lanes % world) ? 1 : 0);
}

// The smallest tile of a lane: one unrolled pass of a 512-thread block storing 16-byte vectors.
// The lanes of one target take the tiles of its flat range round robin, so that they sweep the
// target's output together, front to back: on 2 x H200, pushes over NVLink ran at 353-365 GB/s
// that way against 332-344 GB/s with one contiguous range per lane (32 and 256 MiB per GPU).
inline constexpr int64_t kLaneTileBytes = 32 * 1024;

// Lanes per target from which tiles are kLaneTileBytes. With fewer, a lane's tiles grow in
// proportion (kLaneTileBytes * ceil(kSmallTileLanes / parts)), so that a block's work between
// tiles is spread over more bytes. On 2 x H200, 16 blocks (8 lanes per target) moved 64 MiB per
// rank in 574 us with 32 KiB tiles and in 415 us with these, both with the copy's loads in
// volatile assembly; 209 us with its loads as intrinsics (kernels/device/memory_order.cuh).
inline constexpr int kSmallTileLanes = 64;

// The tile size for a flat range of `total` bytes shared by `parts` lanes (>= 1): kLaneTileBytes
// scaled up for fewer than kSmallTileLanes parts, or the range split evenly (in whole vectors)
// when that gives each lane less than one full tile.
LTX_HOST_DEVICE inline int64_t LaneTileBytes(int64_t total, int parts) {
  const int64_t units = (total + kVectorBytes - 1) / kVectorBytes;
  const int64_t even = (units + parts - 1) / parts * kVectorBytes;
  if (even < kVectorBytes) return kVectorBytes;
  const int64_t tile = kLaneTileBytes * ((kSmallTileLanes + parts - 1) / parts);
  return even < tile ? even : tile;
}

// The tiles one lane copies of a flat shard of `total` bytes: tile k starts at
// first + k * stride and is `tile_bytes` long, cut at `total` (LaneTile). What depends on the
// lane alone, computed once per lane (LaneTilesOf), so that a tile costs no division.
struct LaneTiles {
  int64_t total = 0;       // FlatShardBytes of the shard.
  int64_t tile_bytes = 0;  // LaneTileBytes(total, parts).
  int64_t first = 0;       // part * tile_bytes.
  int64_t stride = 0;      // parts * tile_bytes.
};

// The tiles of lane `lane` (of `lanes`, over `world` targets) of the flat shards of `g` of an op
// of `tensors` tensors, swept as one range of tensors * FlatShardBytes(g) bytes: tiles part,
// part + parts, ... with the lane's part and part count (LanePart and LanePartCount).
LTX_HOST_DEVICE inline LaneTiles LaneTilesOf(const ShardGeometry& g, int lane, int lanes, int world,
                                             int tensors) {
  const int parts = LanePartCount(lane, lanes, world);
  LaneTiles tiles;
  tiles.total = tensors * FlatShardBytes(g);
  tiles.tile_bytes = LaneTileBytes(tiles.total, parts);
  tiles.first = LanePart(lane, world) * tiles.tile_bytes;
  tiles.stride = parts * tiles.tile_bytes;
  return tiles;
}

// The `k`-th tile of `tiles`; an empty range at the end of the shard past its last tile.
LTX_HOST_DEVICE inline ByteRange LaneTile(const LaneTiles& tiles, int64_t k) {
  const int64_t begin = tiles.first + k * tiles.stride;
  const int64_t end = begin + tiles.tile_bytes;
  ByteRange range;
  range.begin = begin < tiles.total ? begin : tiles.total;
  range.end = end < tiles.total ? end : tiles.total;
  return range;
}

// First and one-past-last batch slice that `range` touches (empty range: first == last); over
// the sweep of several tensors, slices of the sweep (TensorSliceSegment).
LTX_HOST_DEVICE inline int64_t FirstSlice(const ShardGeometry& g, const ByteRange& range) {
  return range.begin < range.end ? range.begin / g.shard_bytes : 0;
}
LTX_HOST_DEVICE inline int64_t EndSlice(const ShardGeometry& g, const ByteRange& range) {
  return range.begin < range.end ? (range.end - 1) / g.shard_bytes + 1 : 0;
}

// The part of `range` that lies in batch slice `slice`, as offsets into input and output.
LTX_HOST_DEVICE inline Segment SliceSegment(const ShardGeometry& g, const ByteRange& range,
                                            int64_t slice) {
  const int64_t slice_begin = slice * g.shard_bytes;
  const int64_t lo = range.begin > slice_begin ? range.begin : slice_begin;
  const int64_t slice_end = slice_begin + g.shard_bytes;
  const int64_t hi = range.end < slice_end ? range.end : slice_end;
  Segment segment;
  segment.src_offset = lo;
  segment.dst_offset = slice * g.output_batch_stride + g.output_offset + (lo - slice_begin);
  segment.bytes = hi > lo ? hi - lo : 0;
  return segment;
}

// The part of `range` (of the sweep of an op's tensors) that lies in slice `slice` of the
// sweep, slice slice % batch of tensor slice / batch (`g`.batch slices per tensor): the
// tensor, and the part as offsets into that tensor's input and output.
struct TensorSegment {
  int tensor = 0;
  Segment segment;
};
LTX_HOST_DEVICE inline TensorSegment TensorSliceSegment(const ShardGeometry& g,
                                                        const ByteRange& range, int64_t slice) {
  if (slice < g.batch) return TensorSegment{0, SliceSegment(g, range, slice)};  // No division.
  const int64_t tensor = slice / g.batch;
  const int64_t shift = tensor * FlatShardBytes(g);
  ByteRange own;
  own.begin = range.begin - shift;
  own.end = range.end - shift;
  return TensorSegment{static_cast<int>(tensor), SliceSegment(g, own, slice - tensor * g.batch)};
}

// Splits a copy of `bytes` bytes from address `src` to address `dst` into head, body, tail.
LTX_HOST_DEVICE inline CopySplit SplitForCopy(uint64_t dst, uint64_t src, int64_t bytes) {
  const uint64_t misalignment = dst ^ src;
  CopySplit split;
  split.width = kVectorBytes;
  while (split.width > 1 && (misalignment & static_cast<uint64_t>(split.width - 1)) != 0) {
    split.width >>= 1;
  }
  const uint64_t mask = static_cast<uint64_t>(split.width - 1);
  int64_t head = static_cast<int64_t>((split.width - (dst & mask)) & mask);
  if (head > bytes) head = bytes;
  split.head_bytes = head;
  split.body_units = (bytes - head) / split.width;
  split.tail_bytes = bytes - head - split.body_units * split.width;
  return split;
}

}  // namespace ltx

#endif  // KERNELS_PROTOCOLS_COPY_PLAN_H_
