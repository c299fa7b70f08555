// Tests of the own-shard copy's block count (kernels/shard_copy_kernel.h: ShardCopyBlocks) and
// of its lanes (one target, world 1): every byte of the flat shard lies in exactly one tile of
// exactly one block, and every block has a tile.
#include "kernels/shard_copy_kernel.h"

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/copy_plan.h"

namespace ltx {
namespace {

TEST(ShardCopyBlocksTest, OneBlockPerTileUpToTheCap) {
  EXPECT_EQ(ShardCopyBlocks(0), 1);
  EXPECT_EQ(ShardCopyBlocks(1), 1);
  EXPECT_EQ(ShardCopyBlocks(kLaneTileBytes), 1);
  EXPECT_EQ(ShardCopyBlocks(kLaneTileBytes + 1), 2);
  EXPECT_EQ(ShardCopyBlocks(5 * kLaneTileBytes), 5);
  EXPECT_EQ(ShardCopyBlocks(kShardCopyMaxBlocks * kLaneTileBytes), kShardCopyMaxBlocks);
  EXPECT_EQ(ShardCopyBlocks(int64_t{256} << 20), kShardCopyMaxBlocks);
  EXPECT_EQ(ShardCopyBlocks(int64_t{1} << 40), kShardCopyMaxBlocks);
}

// The tiles of `blocks` lanes of one target cover [0, batch * shard_bytes) exactly once, and
// each lane has at least one non-empty tile.
void ExpectLanesCoverShard(int64_t batch, int64_t shard_bytes) {
  SCOPED_TRACE(absl::StrCat("batch=", batch, " shard_bytes=", shard_bytes));
  ShardGeometry geometry;
  geometry.batch = batch;
  geometry.shard_bytes = shard_bytes;
  geometry.output_batch_stride = shard_bytes;
  const int64_t total = FlatShardBytes(geometry);
  const int blocks = ShardCopyBlocks(total);
  std::vector<int> stores(static_cast<size_t>(total), 0);
  for (int lane = 0; lane < blocks; ++lane) {
    int64_t tiles = 0;
    for (int64_t k = 0;; ++k) {
      const ByteRange tile = LaneTile(geometry, lane, blocks, /*world=*/1, k);
      if (tile.begin >= tile.end) break;
      ++tiles;
      for (int64_t byte = tile.begin; byte < tile.end; ++byte) ++stores[byte];
    }
    EXPECT_GT(tiles, 0) << "lane " << lane << " of " << blocks;
  }
  for (int64_t byte = 0; byte < total; ++byte) {
    ASSERT_EQ(stores[byte], 1) << "byte " << byte;
  }
}

TEST(ShardCopyBlocksTest, LanesCoverTheShardOnce) {
  for (int64_t batch : {1, 3}) {
    for (int64_t shard_bytes :
         {int64_t{1}, int64_t{17}, kLaneTileBytes - 1, kLaneTileBytes, 3 * kLaneTileBytes + 5,
          int64_t{kShardCopyMaxBlocks} * kLaneTileBytes + 16, int64_t{3} << 20}) {
      ExpectLanesCoverShard(batch, shard_bytes);
    }
  }
}

}  // namespace
}  // namespace ltx
