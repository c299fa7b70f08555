// Tests of the all-to-all copy plan (kernels/alltoall/alltoall_plan.h): PieceWidth, the rows a
// rank receives as the FP8 decoder walks them (ReceivedRowOf), and a host simulation of the kernel's copy loop (lanes, the rows of each warp, runs, exactly as in
// kernels/alltoall/alltoall_kernel.cu and kernels/alltoall/alltoall_copy.cuh) over the shape grid
// of tests/alltoall_grid.h, checking that every output byte of every rank is stored exactly once,
// with the byte an independent reference puts there, and that every store is aligned to its width.
// The same for the one-trip packing (kernels/alltoall/alltoall_one_trip_plan.h): the work items of
// every thread of every rank's grid, the lines each sends and receives, the own payloads each
// stores beside its lines, and the payload bytes each line gathers and scatters, as in
// kernels/protocols/one_trip_protocol.cuh and kernels/alltoall/alltoall_one_trip_kernel.cu.
#include "kernels/alltoall/alltoall_plan.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "kernels/alltoall/alltoall_one_trip_plan.h"
#include "kernels/wire/one_trip_layout.h"
#include "ltx/collectives/alltoall_layout.h"
#include "ltx/data_type.h"
#include "tests/alltoall_grid.h"

namespace ltx {
namespace {

// A piece of 8 rows of 256 bytes, every offset and stride a multiple of 256.
Piece AlignedPiece() {
  Piece piece;
  piece.rows_per_slice = 4;
  piece.rows = 8;
  piece.run_bytes = 256;
  piece.src = {4 * 1024, 512, 1024};
  piece.dst = {8 * 256, 0, 256};
  return piece;
}

TEST(PieceWidthTest, AlignedPiecesTakeSixteenBytesAndMisalignedOnesNarrowDown) {
  Piece piece = AlignedPiece();
  EXPECT_EQ(PieceWidth(piece, 0x1000, 0x2000), 16);
  EXPECT_EQ(PieceWidth(piece, 0x1008, 0x2000), 8);
  EXPECT_EQ(PieceWidth(piece, 0x1000, 0x2001), 1);
  piece.run_bytes = 6;
  EXPECT_EQ(PieceWidth(piece, 0x1000, 0x2000), 2);
  piece.run_bytes = 256;
  piece.dst.row_stride = 260;
  EXPECT_EQ(PieceWidth(piece, 0x1000, 0x2000), 4);
}

// Where tensor `tensor`'s input and output of every rank lie in the simulation: each tensor
// 16 MiB after the one before; the inputs of the last tensor only are misaligned as the case
// says (the store width is the narrowest any tensor allows).
uint64_t InputAddress(const PlanCase& c, int tensor) {
  return 0x10000 + (static_cast<uint64_t>(tensor) << 24) +
         (tensor == c.tensors - 1 ? c.input_misalignment : 0);
}
uint64_t OutputAddress(const PlanCase& c, int tensor) {
  return (uint64_t{1} << 32) + (static_cast<uint64_t>(tensor) << 24) + c.output_misalignment;
}

// Runs the kernel's loop on the host: every block, lane, row (of every tensor's piece, swept as
// one) and store unit.
void SimulateAndCheck(const PlanCase& c) {
  SCOPED_TRACE(c.ToString());
  const int world = static_cast<int>(c.counts.size());
  const absl::StatusOr<AllToAllLayout> layout = LayoutOf(c);
  ASSERT_TRUE(layout.ok()) << layout.status();
  ASSERT_EQ(layout->tensors, c.tensors);
  const std::vector<std::vector<SourceByte>> expected = Reference(c, *layout);
  // writes[tensor][rank][byte].
  std::vector<std::vector<std::vector<int>>> writes(c.tensors);
  TensorAddresses at;
  at.tensors = c.tensors;
  for (int tensor = 0; tensor < c.tensors; ++tensor) {
    writes[tensor].resize(world);
    for (int r = 0; r < world; ++r) writes[tensor][r].assign(layout->OutputBytes(r), 0);
    at.inputs[tensor] = InputAddress(c, tensor);
    at.outputs[tensor] = OutputAddress(c, tensor);
  }
  for (int rank = 0; rank < world; ++rank) {
    const int lanes = LaneCount(c.blocks, world);
    for (int lane = 0; lane < lanes; ++lane) {
      const int target = LaneTarget(lane, rank, world);
      const Piece piece = PieceOf(layout->geometry, rank, target);
      const int width = PiecesWidth(piece, at);
      const RowSweep sweep = LaneRows(piece, lane, lanes, world, c.tensors);
      ASSERT_EQ(sweep.rows, c.tensors * piece.rows);
      const int64_t stride = SweepStride(sweep, c.warps);
      // Warp w copies its rows kRowsInFlight at a time (as the kernel).
      for (int warp = 0; warp < c.warps; ++warp) {
        for (int64_t first = SweepFirstRow(sweep, c.warps, warp); first < sweep.rows;
             first += stride * kRowsInFlight) {
          for (int k = 0; k < kRowsInFlight; ++k) {
            const int64_t swept = first + int64_t{k} * stride;
            if (swept >= sweep.rows) continue;
            const TensorRow tensor_row = TensorRowOf(piece, swept);
            const int tensor = tensor_row.tensor;
            ASSERT_GE(tensor, 0);
            ASSERT_LT(tensor, c.tensors);
            const int64_t row = tensor_row.row;
            const int64_t src = RowOffset(piece.src, piece.rows_per_slice, row);
            const int64_t dst = RowOffset(piece.dst, piece.rows_per_slice, row);
            ASSERT_EQ((at.inputs[tensor] + src) % width, 0u);
            ASSERT_EQ((at.outputs[tensor] + dst) % width, 0u);
            ASSERT_EQ(piece.run_bytes % width, 0);
            for (int64_t byte = 0; byte < piece.run_bytes; ++byte) {
              ASSERT_GE(src + byte, 0);
              ASSERT_LT(src + byte, layout->InputBytes(rank));
              ASSERT_GE(dst + byte, 0);
              ASSERT_LT(dst + byte, layout->OutputBytes(target));
              const SourceByte want = expected[target][dst + byte];
              ASSERT_EQ(want.rank, rank) << "output " << target << " byte " << dst + byte;
              ASSERT_EQ(want.offset, src + byte) << "output " << target << " byte " << dst + byte;
              ++writes[tensor][target][dst + byte];
            }
          }
        }
      }
    }
  }
  for (int tensor = 0; tensor < c.tensors; ++tensor) {
    for (int r = 0; r < world; ++r) {
      for (int64_t i = 0; i < layout->OutputBytes(r); ++i) {
        ASSERT_EQ(writes[tensor][r][i], 1)
            << "tensor " << tensor << " rank " << r << " output byte " << i;
      }
    }
  }
}

// Simulates every case of the shape grid with each block count of `blocks_for(world)`, random
// misalignments and `tensors_for(random)` tensors; returns the cases run.
template <typename BlocksFor, typename TensorsFor>
int SimulateGrid(uint32_t seed, const BlocksFor& blocks_for, const TensorsFor& tensors_for) {
  std::mt19937 random(seed);
  return ForEachGridCase(random, blocks_for, [&tensors_for](PlanCase* c, std::mt19937& random) {
    c->tensors = tensors_for(random);
    c->input_misalignment = random() % 3 == 0 ? random() % 16 : 0;
    c->output_misalignment = random() % 3 == 0 ? random() % 16 : 0;
    c->warps = c->blocks % 2 == 0 ? 16 : 3;
    SimulateAndCheck(*c);
  });
}

TEST(AllToAllPlanTest, EveryOutputByteIsStoredOnceFromTheRightInputByte) {
  const int cases = SimulateGrid(
      7, [](int world) { return std::vector<int>{1, world, 2 * world + 1, 37}; },
      [](std::mt19937&) { return 1; });
  if (HasFatalFailure()) return;
  EXPECT_GT(cases, 1000);
}

// The same over the grid for ops of several tensors: every output byte of every tensor is
// stored once, from the same rank's input of that tensor, at the right offset.
TEST(AllToAllPlanTest, EveryTensorsOutputByteIsStoredOnceFromItsOwnInput) {
  const int cases = SimulateGrid(
      13, [](int world) { return std::vector<int>{1, world + 1, 37}; },
      [](std::mt19937& random) { return 2 + static_cast<int>(random() % (kMaxOpTensors - 1)); });
  if (HasFatalFailure()) return;
  EXPECT_GT(cases, 1000);
}

// The rows a rank receives, as the FP8 wire's decoder walks them: every row of every peer's
// piece of every tensor once, the rank's own never, over the grid of shapes.
TEST(AllToAllPlanTest, ReceivedRowsCoverEveryPeersPieceOnce) {
  std::mt19937 random(29);
  const int cases = ForEachGridCase(
      random, [](int) { return std::vector<int>{1}; },
      [](PlanCase* c, std::mt19937& random) {
        c->tensors = 1 + static_cast<int>(random() % kMaxOpTensors);
        AllToAllShape shape;
        shape.dtype = c->dtype;
        shape.batch = c->batch;
        shape.heads = c->heads;
        shape.head_dim = c->head_dim;
        shape.token_counts = c->counts;
        shape.direction = c->direction;
        shape.head_counts = c->head_counts;
        shape.tensors = c->tensors;
        const absl::StatusOr<AllToAllLayout> layout =
            ComputeAllToAllLayout(shape, static_cast<int>(c->counts.size()));
        ASSERT_TRUE(layout.ok()) << c->ToString() << ": " << layout.status();
        const AllToAllGeometry& g = layout->geometry;
        for (int rank = 0; rank < g.world_size; ++rank) {
          std::vector<std::vector<int>> seen(g.world_size);
          int64_t expected = 0;
          for (int peer = 0; peer < g.world_size; ++peer) {
            const int64_t rows = c->tensors * PieceOf(g, peer, rank).rows;
            seen[peer].assign(rows, 0);
            if (peer != rank) expected += rows;
          }
          const int64_t total = ReceivedRows(g, rank, c->tensors);
          ASSERT_EQ(total, expected) << c->ToString() << " rank " << rank;
          for (int64_t index = 0; index < total; ++index) {
            const ReceivedRow received = ReceivedRowOf(g, rank, c->tensors, index);
            ASSERT_NE(received.peer, rank) << c->ToString();
            ASSERT_EQ(received.piece.rows, PieceOf(g, received.peer, rank).rows);
            ASSERT_GE(received.row, 0);
            ASSERT_LT(received.row, static_cast<int64_t>(seen[received.peer].size()));
            ++seen[received.peer][received.row];
          }
          for (int peer = 0; peer < g.world_size; ++peer) {
            for (int64_t row = 0; peer != rank && row < static_cast<int64_t>(seen[peer].size());
                 ++row) {
              ASSERT_EQ(seen[peer][row], 1) << c->ToString() << " rank " << rank << " peer "
                                            << peer << " row " << row;
            }
          }
        }
      });
  if (HasFatalFailure()) return;
  EXPECT_GT(cases, 100);
}

TEST(AllToAllPlanTest, TensorRowsFollowEachOtherTensorByTensor) {
  Piece piece;
  piece.rows = 5;
  EXPECT_EQ(TensorRowOf(piece, 0).tensor, 0);
  EXPECT_EQ(TensorRowOf(piece, 4).row, 4);
  EXPECT_EQ(TensorRowOf(piece, 5).tensor, 1);
  EXPECT_EQ(TensorRowOf(piece, 5).row, 0);
  EXPECT_EQ(TensorRowOf(piece, 14).tensor, 2);
  EXPECT_EQ(TensorRowOf(piece, 14).row, 4);
}

TEST(PieceWidthTest, SeveralTensorsTakeTheNarrowestWidthOfAny) {
  const Piece piece = AlignedPiece();
  TensorAddresses at;
  at.tensors = 3;
  for (int tensor = 0; tensor < 3; ++tensor) {
    at.inputs[tensor] = 0x1000 * (tensor + 1);
    at.outputs[tensor] = 0x100000 * (tensor + 1);
  }
  EXPECT_EQ(PiecesWidth(piece, at), 16);
  at.outputs[2] += 4;
  EXPECT_EQ(PiecesWidth(piece, at), 4);
  at.tensors = 2;  // The third tensor's addresses no longer count.
  EXPECT_EQ(PiecesWidth(piece, at), 16);
}

TEST(AllToAllPlanTest, ModelShapesStoreSixteenByteVectors) {
  // 32 heads of 128 bf16 elements over 8 ranks: 1 KiB runs, all 16-byte aligned.
  const std::vector<int64_t> counts = {4, 4, 4, 4, 4, 4, 4, 3};
  AllToAllShape shape;
  shape.heads = 32;
  shape.head_dim = 128;
  shape.token_counts = counts;
  for (AllToAllDirection direction :
       {AllToAllDirection::kSeqToHeads, AllToAllDirection::kHeadsToSeq}) {
    shape.direction = direction;
    const absl::StatusOr<AllToAllLayout> layout = ComputeAllToAllLayout(shape, 8);
    ASSERT_TRUE(layout.ok()) << layout.status();
    for (int rank = 0; rank < 8; ++rank) {
      for (int target = 0; target < 8; ++target) {
        const Piece piece = PieceOf(layout->geometry, rank, target);
        EXPECT_EQ(piece.run_bytes, 1024);
        EXPECT_EQ(PieceWidth(piece, 0x10000, 0x20000), 16);
      }
    }
  }
}

TEST(AllToAllPlanTest, LargestPieceBytesIsTheBiggestTargetShare) {
  const std::vector<int64_t> counts = {2, 0, 5};
  AllToAllShape shape;
  shape.dtype = DataType::kFloat32;
  shape.batch = 2;
  shape.heads = 6;
  shape.head_dim = 3;
  shape.token_counts = counts;
  shape.direction = AllToAllDirection::kSeqToHeads;
  absl::StatusOr<AllToAllLayout> layout = ComputeAllToAllLayout(shape, 3);
  ASSERT_TRUE(layout.ok());
  // Sequence -> heads: rank 2 sends each target batch * 5 tokens * 2 heads * 12 bytes.
  EXPECT_EQ(LargestPieceBytes(layout->geometry, 2), 2 * 5 * 2 * 12);
  EXPECT_EQ(LargestPieceBytes(layout->geometry, 1), 0);
  // Heads -> sequence: every rank sends its group of the largest sequence shard (5 tokens).
  shape.direction = AllToAllDirection::kHeadsToSeq;
  layout = ComputeAllToAllLayout(shape, 3);
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(LargestPieceBytes(layout->geometry, 1), 2 * 5 * 2 * 12);
}

TEST(AllToAllPlanTest, UnevenSplitPiecesCarryEachRanksHeadGroup) {
  const absl::StatusOr<AllToAllLayout> layout = UnevenSplitLayout(/*batch=*/1);
  ASSERT_TRUE(layout.ok()) << layout.status();
  // Rank 2's tokens of rank 2's heads: 3 heads from byte 32 of each 80-byte token row, into
  // token rows of 48 bytes after the 3 tokens of ranks 0 and 1.
  const Piece piece = PieceOf(layout->geometry, 2, 2);
  EXPECT_EQ(piece.run_bytes, 48);
  EXPECT_EQ(piece.rows, 4);
  EXPECT_EQ(piece.src.base, 32);
  EXPECT_EQ(piece.src.row_stride, 80);
  EXPECT_EQ(piece.dst.base, 3 * 48);
  EXPECT_EQ(piece.dst.row_stride, 48);
  EXPECT_EQ(piece.dst.slice_stride, 7 * 48);
  // Rank 1 holds no heads: nothing goes to it.
  for (int rank = 0; rank < 3; ++rank) EXPECT_EQ(PieceOf(layout->geometry, rank, 1).rows, 0);
  EXPECT_EQ(LargestPieceBytes(layout->geometry, 2), 4 * 48);
}

// --------------------------------------------------------------------- one-trip packing

// Lines rank `rank` sends to the rank `offset` places after it (`sending`), or receives from
// the rank `offset` places before it: the header and its piece's payloads.
int64_t PeerLines(const AllToAllGeometry& g, int rank, int offset, bool sending) {
  const int world = g.world_size;
  const Piece piece = sending ? PieceOf(g, rank, (rank + offset) % world)
                              : PieceOf(g, (rank + world - offset) % world, rank);
  return OneTripLines(PieceBytes(piece));
}

// What one work item of a thread carries: a line for its peer, and (sending only) a payload of
// the sender's own piece (line - kOneTripHeaderLines) that it stores into its own output.
struct ItemWork {
  int offset = 0;
  int64_t line = 0;
  bool line_travels = false;
  bool own_payload = false;
};

// The item loop of one thread of rank `rank`'s grid (SendLines or ReceiveData in
// kernels/protocols/one_trip_protocol.cuh): calls visit(work) for every item that carries a line it
// sends or awaits, or an own payload it stores. A single rank has no peers, and runs no item loop.
template <typename Visit>
void ForEachItem(const AllToAllGeometry& g, int rank, bool sending, int block, int blocks,
                 int thread, int threads, const Visit& visit) {
  const int world = g.world_size;
  if (world < 2) return;
  int64_t lines[kMaxWorldSize] = {};
  int64_t max_lines = 0;
  for (int offset = 1; offset < world; ++offset) {
    lines[offset] = PeerLines(g, rank, offset, sending);
    max_lines = std::max(max_lines, lines[offset]);
  }
  const int64_t own_lines = sending ? OneTripLines(PieceBytes(PieceOf(g, rank, rank))) : 0;
  max_lines = std::max(max_lines, own_lines);
  for (int64_t round = 0;; ++round) {
    const OneTripTransfer transfer =
        OneTripTransferOf(OneTripItem(round, block, blocks, thread, threads), world);
    if (transfer.line >= max_lines) return;
    ItemWork work;
    work.offset = transfer.offset;
    work.line = transfer.line;
    work.line_travels = transfer.line < lines[transfer.offset];
    work.own_payload =
        transfer.offset == 1 && transfer.line >= kOneTripHeaderLines && transfer.line < own_lines;
    if (work.line_travels || work.own_payload) visit(work);
  }
}

// The spans of payload `index` of `piece` in `side`, as ForEachPayloadSpan visits them: for
// each payload byte, its offset in that buffer. Checks that the spans cover the payload in
// order, and that the fast path (WholePayloadOffset) agrees with them.
std::vector<int64_t> PayloadOffsets(const Piece& piece, const PieceSide& side, int64_t index) {
  const ByteRange range = PayloadRange(piece, index);
  std::vector<int64_t> offsets;
  int spans = 0;
  ForEachPayloadSpan(piece, side, index, [&](int64_t offset, int first, int bytes) {
    EXPECT_EQ(first, static_cast<int>(offsets.size()));
    EXPECT_GT(bytes, 0);
    for (int k = 0; k < bytes; ++k) offsets.push_back(offset + k);
    ++spans;
  });
  EXPECT_EQ(static_cast<int64_t>(offsets.size()), range.end - range.begin);
  const int64_t whole = WholePayloadOffset(piece, side, index);
  if (whole >= 0) {
    EXPECT_EQ(spans, 1);
    EXPECT_EQ(offsets.size(), static_cast<size_t>(kOneTripPayloadBytes));
    EXPECT_EQ(offsets.front(), whole);
  } else {
    EXPECT_TRUE(spans > 1 || offsets.size() < static_cast<size_t>(kOneTripPayloadBytes));
  }
  return offsets;
}

// Unpacks payload `index` of `piece` (from `source` into `target`'s output) as the kernel
// does: gathers its bytes span by span from the input, scatters them span by span into the
// output; checks each byte against the reference and counts the writes.
void UnpackPayload(const Piece& piece, int64_t index, int source, int target,
                   const std::vector<std::vector<SourceByte>>& expected,
                   std::vector<std::vector<int>>& writes) {
  const ByteRange range = PayloadRange(piece, index);
  ASSERT_GT(range.end, range.begin);
  ASSERT_LE(range.end - range.begin, kOneTripPayloadBytes);
  const std::vector<int64_t> carried = PayloadOffsets(piece, piece.src, index);
  const std::vector<int64_t> stored = PayloadOffsets(piece, piece.dst, index);
  ASSERT_EQ(carried.size(), stored.size());
  for (size_t k = 0; k < stored.size(); ++k) {
    const int64_t dst = stored[k];
    ASSERT_GE(dst, 0);
    ASSERT_LT(dst, static_cast<int64_t>(writes[target].size()));
    const SourceByte want = expected[target][dst];
    ASSERT_EQ(want.rank, source) << "output " << target << " byte " << dst;
    ASSERT_EQ(want.offset, carried[k]) << "output " << target << " byte " << dst;
    ++writes[target][dst];
  }
}

// Who sent a line (block and thread of the sender's grid; block -1: not sent), and how often
// it was received.
struct LineRecord {
  int block = -1;
  int thread = -1;
  int received = 0;
};

// Runs the one-trip all-to-all on the host: every thread of every rank's grid sends its lines
// and stores its payloads of the own piece, every receiver awaits its lines (data lines in the
// same block and thread as their sender, header lines in block 0) and unpacks them; a single
// rank stores its own piece one payload per thread and round. Checks that every line is sent
// once and received once, and every output byte is written once with the right source byte.
void SimulateOneTripAndCheck(const PlanCase& c) {
  SCOPED_TRACE(c.ToString());
  const int world = static_cast<int>(c.counts.size());
  const absl::StatusOr<AllToAllLayout> layout = LayoutOf(c);
  ASSERT_TRUE(layout.ok()) << layout.status();
  const AllToAllGeometry& g = layout->geometry;
  const std::vector<std::vector<SourceByte>> expected = Reference(c, *layout);
  std::vector<std::vector<int>> writes(world);
  for (int r = 0; r < world; ++r) writes[r].assign(layout->OutputBytes(r), 0);
  // Whole runs of lines per block, and room for every peer's header lines in block 0.
  const int threads = static_cast<int>(kOneTripRunLines) * std::max(c.warps, world - 1);
  // Every line of every (source, target) pair, at (source * world + target) * stride + line.
  int64_t stride = kOneTripHeaderLines;
  int64_t expected_lines = 0;
  for (int rank = 0; rank < world; ++rank) {
    for (int offset = 1; offset < world; ++offset) {
      stride = std::max(stride, PeerLines(g, rank, offset, /*sending=*/true));
      expected_lines += PeerLines(g, rank, offset, /*sending=*/true);
    }
  }
  std::vector<LineRecord> lines(static_cast<size_t>(world * world * stride));
  auto record = [&](int source, int target, int64_t line) -> LineRecord& {
    return lines[static_cast<size_t>((source * world + target) * stride + line)];
  };
  int64_t sent = 0;
  for (int rank = 0; rank < world; ++rank) {
    const Piece own = PieceOf(g, rank, rank);
    for (int block = 0; block < c.blocks; ++block) {
      for (int thread = 0; thread < threads; ++thread) {
        ForEachItem(g, rank, true, block, c.blocks, thread, threads, [&](const ItemWork& work) {
          if (work.line_travels) {
            LineRecord& r = record(rank, (rank + work.offset) % world, work.line);
            ASSERT_EQ(r.block, -1) << "line " << work.line << " sent twice";
            r.block = block;
            r.thread = thread;
            ++sent;
          }
          if (work.own_payload) {
            UnpackPayload(own, work.line - kOneTripHeaderLines, rank, rank, expected, writes);
          }
        });
        if (::testing::Test::HasFatalFailure()) return;
        if (world > 1) continue;
        // StoreOwnPartAlone.
        const int64_t payloads = OneTripLines(PieceBytes(own)) - kOneTripHeaderLines;
        for (int64_t k = int64_t{block} * threads + thread; k < payloads;
             k += int64_t{c.blocks} * threads) {
          UnpackPayload(own, k, rank, rank, expected, writes);
        }
      }
    }
  }
  ASSERT_EQ(sent, expected_lines);
  int64_t received = 0;
  for (int rank = 0; rank < world; ++rank) {
    // Block 0's header check: thread (k - 1) * kOneTripHeaderLines + i awaits header line i of
    // the rank k places before.
    for (int thread = 0; thread < threads; ++thread) {
      const int k = 1 + thread / static_cast<int>(kOneTripHeaderLines);
      if (k >= world) continue;
      LineRecord& r = record((rank + world - k) % world, rank, thread % kOneTripHeaderLines);
      ASSERT_EQ(r.block, 0) << "header lines travel in block 0";
      ++r.received;
      ++received;
    }
    for (int block = 0; block < c.blocks; ++block) {
      for (int thread = 0; thread < threads; ++thread) {
        ForEachItem(g, rank, false, block, c.blocks, thread, threads, [&](const ItemWork& work) {
          ASSERT_TRUE(work.line_travels);
          ASSERT_FALSE(work.own_payload);
          if (work.line < kOneTripHeaderLines) return;
          const int source = (rank + world - work.offset) % world;
          LineRecord& r = record(source, rank, work.line);
          ASSERT_EQ(r.block, block) << "line " << work.line;
          ASSERT_EQ(r.thread, thread) << "line " << work.line;
          ++r.received;
          ++received;
          UnpackPayload(PieceOf(g, source, rank), work.line - kOneTripHeaderLines, source, rank,
                        expected, writes);
        });
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
  ASSERT_EQ(received, sent);
  for (const LineRecord& r : lines) ASSERT_LE(r.received, 1) << "a line received twice";
  for (int r = 0; r < world; ++r) {
    for (int64_t i = 0; i < layout->OutputBytes(r); ++i) {
      ASSERT_EQ(writes[r][i], 1) << "rank " << r << " output byte " << i;
    }
  }
}

TEST(AllToAllOneTripPlanTest, EveryLineTravelsOnceAndEveryOutputByteIsWrittenOnce) {
  std::mt19937 random(11);
  const int cases = ForEachGridCase(
      random,
      [](int) {
        return std::vector<int>{1, 2, 5};
      },
      [](PlanCase* c, std::mt19937&) {
        c->warps = c->blocks == 2 ? 4 : 1;
        SimulateOneTripAndCheck(*c);
      });
  if (HasFatalFailure()) return;
  EXPECT_GT(cases, 1000);
}

TEST(AllToAllOneTripPlanTest, OwnPayloadsTravelWithTheLinesOfThePeerOnePlaceOn) {
  // Heads -> sequence with rank 0 holding the most tokens: its own piece is larger than any
  // piece it sends, and its own payloads past the peers' lines still find items.
  AllToAllShape shape;
  shape.dtype = DataType::kFloat32;
  shape.heads = 3;
  shape.head_dim = 8;
  const std::vector<int64_t> counts = {40, 1, 2};
  shape.token_counts = counts;
  shape.direction = AllToAllDirection::kHeadsToSeq;
  const absl::StatusOr<AllToAllLayout> layout = ComputeAllToAllLayout(shape, 3);
  ASSERT_TRUE(layout.ok()) << layout.status();
  const AllToAllGeometry& g = layout->geometry;
  const int64_t own_payloads = OneTripLines(PieceBytes(PieceOf(g, 0, 0))) - kOneTripHeaderLines;
  ASSERT_GT(own_payloads + kOneTripHeaderLines, PeerLines(g, 0, 1, /*sending=*/true));
  const int threads = 64;
  std::vector<int> stored(static_cast<size_t>(own_payloads), 0);
  for (int block = 0; block < 2; ++block) {
    for (int thread = 0; thread < threads; ++thread) {
      ForEachItem(g, 0, true, block, 2, thread, threads, [&](const ItemWork& work) {
        if (!work.own_payload) return;
        EXPECT_EQ(work.offset, 1);
        ++stored[static_cast<size_t>(work.line - kOneTripHeaderLines)];
      });
    }
  }
  for (int64_t k = 0; k < own_payloads; ++k) EXPECT_EQ(stored[k], 1) << "own payload " << k;
}

TEST(AllToAllOneTripPlanTest, PayloadsSpanRowsWhenRunsAreNotMultiplesOfEightBytes) {
  Piece piece;
  piece.rows_per_slice = 2;
  piece.rows = 4;
  piece.run_bytes = 6;
  piece.src = {100, 10, 20};
  piece.dst = {50, 0, 6};
  EXPECT_EQ(PieceBytes(piece), 24);
  const ByteRange first = PayloadRange(piece, 0);
  EXPECT_EQ(first.begin, 0);
  EXPECT_EQ(first.end, 8);
  // Bytes 0-5 are row 0, bytes 6-7 the start of row 1 (source rows 20 apart).
  EXPECT_EQ(PayloadOffsets(piece, piece.src, 0),
            (std::vector<int64_t>{10, 11, 12, 13, 14, 15, 30, 31}));
  EXPECT_EQ(WholePayloadOffset(piece, piece.src, 0), -1);
  // Payload 1 is bytes 8-15: row 1 from byte 2, then row 2, the first row of the second slice.
  EXPECT_EQ(PayloadOffsets(piece, piece.dst, 1),
            (std::vector<int64_t>{8, 9, 10, 11, 50, 51, 52, 53}));
  EXPECT_EQ(PayloadOffsets(piece, piece.src, 1),
            (std::vector<int64_t>{32, 33, 34, 35, 110, 111, 112, 113}));
  const ByteRange last = PayloadRange(piece, 2);
  EXPECT_EQ(last.begin, 16);
  EXPECT_EQ(last.end, 24);
  piece.rows = 3;  // 18 bytes: the last payload carries 2.
  EXPECT_EQ(PayloadRange(piece, 2).end, 18);
  EXPECT_EQ(PayloadOffsets(piece, piece.dst, 2), (std::vector<int64_t>{54, 55}));
}

TEST(AllToAllOneTripPlanTest, WholePayloadsInsideOneRowTakeTheFastPath) {
  Piece piece;
  piece.rows_per_slice = 3;
  piece.rows = 6;
  piece.run_bytes = 16;
  piece.src = {1000, 64, 48};  // Slices 1000 apart: room between them.
  piece.dst = {144, 8, 48};    // Slices follow each other (3 rows * 48).
  // Payload 7 is the second half of row 3, the first row of the second slice.
  EXPECT_EQ(WholePayloadOffset(piece, piece.src, 7), 1000 + 64 + 8);
  EXPECT_EQ(WholePayloadOffset(piece, piece.dst, 7), 8 + 3 * 48 + 8);
  piece.run_bytes = 12;  // Payload 1 is bytes 8-15: rows 0 and 1.
  EXPECT_EQ(WholePayloadOffset(piece, piece.src, 1), -1);
  EXPECT_EQ(WholePayloadOffset(piece, piece.src, 3), 64 + 2 * 48);  // Bytes 24-31: row 2.
}

TEST(AllToAllOneTripPlanTest, PieceByteOffsetIsRowOffsetForEveryRowOfEveryPiece) {
  for (AllToAllDirection direction :
       {AllToAllDirection::kSeqToHeads, AllToAllDirection::kHeadsToSeq}) {
    AllToAllShape shape;
    shape.dtype = DataType::kBFloat16;
    shape.batch = 3;
    shape.heads = 8;
    shape.head_dim = 5;
    const std::vector<int64_t> counts = {3, 0, 7, 2};
    shape.token_counts = counts;
    shape.direction = direction;
    const absl::StatusOr<AllToAllLayout> layout = ComputeAllToAllLayout(shape, 4);
    ASSERT_TRUE(layout.ok()) << layout.status();
    for (int rank = 0; rank < 4; ++rank) {
      for (int target = 0; target < 4; ++target) {
        const Piece piece = PieceOf(layout->geometry, rank, target);
        for (int64_t row = 0; row < piece.rows; ++row) {
          for (const PieceSide& side : {piece.src, piece.dst}) {
            EXPECT_EQ(PieceByteOffset(piece, side, static_cast<uint32_t>(row), 3),
                      RowOffset(side, piece.rows_per_slice, row) + 3)
                << rank << "->" << target << " row " << row;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace ltx
