// Tests of the reductions' plan and arithmetic (kernels/reduce/reduce_plan.h,
// kernels/reduce/reduce_math.h): every thread of grids of several sizes simulated over a grid of
// shapes, alignments and rank layouts (every output element reduced exactly once, from the
// right element of every input, vectors only where every address is 16-byte aligned); the
// two-shot AllReduce, in place or not, against the one-shot's bits; the conversions of bf16 and
// fp16 against independent references; the reductions in rank order.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/reduce/reduce_math.h"
#include "kernels/reduce/reduce_plan.h"
#include "ltx/collectives/allgather_layout.h"
#include "ltx/collectives/reduce_layout.h"
#include "tools/testing/reduce_reference.h"

namespace ltx {
namespace {

// What rank `rank` of `layout` reduces, simulated for a grid of `threads` threads with rank
// s's input at byte address inputs[s] and the output at `output`: every output element must be
// produced once, from the element that the shape's definition names.
void SimulateRank(const ReduceLayout& layout, int rank, const std::vector<uint64_t>& inputs,
                  uint64_t output, int64_t threads, const std::string& what) {
  const ReduceGeometry g = layout.GeometryOf(rank);
  const int64_t size = g.element_size;
  const int64_t hidden = layout.row_elements;
  std::vector<int> produced(static_cast<size_t>(g.batch * g.slice_elements), 0);
  for (int64_t slice = 0; slice < g.batch; ++slice) {
    const int64_t input_start = ReduceInputIndex(g, slice, 0) * size;
    const int64_t output_start = ReduceOutputIndex(g, slice, 0) * size;
    const ReduceSplit split = SplitForReduce(output + output_start, inputs.data(), input_start,
                                             layout.world_size, g.slice_elements, g.element_size);
    const int64_t items = ReduceItemCount(split);
    for (int64_t thread = 0; thread < threads; ++thread) {
      for (int64_t item = thread; item < items; item += threads) {
        const ReduceItem work = ReduceItemOf(split, item);
        if (work.elements > 1) {
          ASSERT_EQ(work.elements * size, kVectorBytes) << what;
          ASSERT_EQ((output + output_start + work.first * size) % kVectorBytes, 0u) << what;
          for (uint64_t input : inputs) {
            ASSERT_EQ((input + input_start + work.first * size) % kVectorBytes, 0u) << what;
          }
        }
        for (int e = 0; e < work.elements; ++e) {
          const int64_t index = work.first + e;
          ASSERT_LT(index, g.slice_elements) << what;
          const int64_t out = ReduceOutputIndex(g, slice, index);
          ++produced[static_cast<size_t>(out)];
          // The definition: output row k of slice b is input row first_rows[rank] + k.
          const int64_t row = layout.first_rows[rank] + index / hidden;
          const int64_t expected = (slice * layout.total_rows + row) * hidden + index % hidden;
          ASSERT_EQ(ReduceInputIndex(g, slice, index), expected) << what;
        }
      }
    }
  }
  for (size_t out = 0; out < produced.size(); ++out) {
    ASSERT_EQ(produced[out], 1) << what << " output element " << out;
  }
}

// Every rank of `layout` simulated for several grids and alignments.
void SimulateLayout(const ReduceLayout& layout, const std::string& what) {
  const int size = layout.element_size;
  for (int64_t threads : {1, 7, 512, 4096}) {
    for (int shift : {0, 1, 3, 7}) {
      // Aligned inputs, or each rank's input moved by its own multiple of the element size.
      for (bool same : {true, false}) {
        std::vector<uint64_t> inputs;
        for (int s = 0; s < layout.world_size; ++s) {
          inputs.push_back(0x10000000ull * (s + 1) + size * (same ? shift : (shift + s) % 8));
        }
        for (int rank = 0; rank < layout.world_size; ++rank) {
          const uint64_t output = 0x90000000ull + size * shift;
          SimulateRank(layout, rank, inputs, output, threads,
                       absl::StrCat(what, " rank ", rank, " threads ", threads, " shift ", shift,
                                    same ? " co-aligned" : " apart"));
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(ReducePlanTest, EveryReduceScatterOutputElementOnceFromItsRows) {
  const std::vector<std::vector<int64_t>> layouts = {
      {5},          {3, 0},           {0, 0},
      {1, 2, 3},    {7, 0, 9, 1},     {2, 2, 2, 2, 2, 2, 2, 2},
      {0, 0, 0, 0, 0, 0, 0, 33}};
  for (const std::vector<int64_t>& counts : layouts) {
    for (DataType dtype : {DataType::kBFloat16, DataType::kFloat16, DataType::kFloat32}) {
      for (int64_t hidden : {1, 3, 8, 13, 64}) {
        for (int64_t batch : {1, 3}) {
          ReduceScatterShape shape;
          shape.dtype = dtype;
          shape.batch = batch;
          shape.hidden = hidden;
          shape.token_counts = counts;
          const absl::StatusOr<ReduceLayout> layout =
              ComputeReduceScatterLayout(shape, static_cast<int>(counts.size()));
          ASSERT_TRUE(layout.ok()) << layout.status();
          SimulateLayout(*layout, absl::StrCat(DataTypeName(dtype), " batch ", batch, " hidden ",
                                               hidden, " counts ", counts.size()));
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(ReducePlanTest, EveryAllReduceElementOnceOnEveryRankAndTwoShotChunksCoverTheCount) {
  for (int world : {1, 2, 3, 5, 8}) {
    for (DataType dtype : {DataType::kBFloat16, DataType::kFloat32}) {
      for (int64_t count : {0, 1, 7, 8, 9, 63, 64, 1000, 4099}) {
        AllReduceShape shape;
        shape.dtype = dtype;
        shape.count = count;
        const absl::StatusOr<ReduceLayout> layout = ComputeAllReduceLayout(shape, world);
        ASSERT_TRUE(layout.ok()) << layout.status();
        const std::string what =
            absl::StrCat(DataTypeName(dtype), " world ", world, " count ", count);
        SimulateLayout(*layout, what);
        // Two-shot: the chunks tile [0, count) in rank order, whole vectors but the last rank's.
        const ReduceLayout step = TwoShotAllReduceStep(*layout);
        int64_t next = 0;
        for (int rank = 0; rank < world; ++rank) {
          EXPECT_EQ(step.first_rows[rank], next) << what;
          if (rank < world - 1) {
            EXPECT_EQ(step.rows[rank] * layout->element_size % kVectorBytes, 0) << what;
          }
          next += step.rows[rank];
        }
        EXPECT_EQ(next, count) << what;
        EXPECT_NE(step.digest, layout->digest) << what;
        SimulateLayout(step, absl::StrCat(what, " two-shot"));
        if (HasFatalFailure()) return;
      }
    }
  }
}

// The two-shot AllReduce of `all_reduce` with rank s's input at byte address inputs[s] and its
// output at outputs[s] (in place where they are equal), as its two ops run: the first
// (TwoShotAllReduceStep) with its plan run by every thread of a grid of `threads`, every load
// and store recorded per buffer element, then the second (TwoShotAllReduceGather) storing each
// rank's chunk into every output. The ranks of the first op run concurrently until its exit
// barrier, so in place no element that one item stores may be loaded by any other item of any
// rank: then every load reads the inputs as they were, and every output must end as the
// one-shot AllReduce's (the reference of `all_reduce` itself), bit for bit.
void SimulateTwoShotAllReduce(const ReduceLayout& all_reduce, const std::vector<uint64_t>& inputs,
                              const std::vector<uint64_t>& outputs, int64_t threads,
                              std::mt19937* random, const std::string& what) {
  const int world = all_reduce.world_size;
  const int64_t size = all_reduce.element_size;
  const int64_t count = all_reduce.row_elements;
  const bool in_place = inputs == outputs;
  std::vector<std::vector<uint8_t>> initial(world, std::vector<uint8_t>(count * size));
  for (std::vector<uint8_t>& buffer : initial) {
    for (uint8_t& byte : buffer) byte = static_cast<uint8_t>((*random)());
  }
  const ReduceLayout step = TwoShotAllReduceStep(all_reduce);
  // The first op: who loads each element of each input and who stores each element of each
  // output (item ids over every rank), and the values stored.
  constexpr int64_t kNobody = -1;
  std::vector<std::vector<std::vector<int64_t>>> loaders(
      world, std::vector<std::vector<int64_t>>(count));
  std::vector<std::vector<int64_t>> storer(world, std::vector<int64_t>(count, kNobody));
  // Out of place, the outputs start as garbage that the two ops must overwrite entirely.
  std::vector<std::vector<uint8_t>> buffers = initial;
  if (!in_place) {
    for (std::vector<uint8_t>& buffer : buffers) {
      for (uint8_t& byte : buffer) byte = static_cast<uint8_t>((*random)());
    }
  }
  int64_t next_item = 0;
  for (int rank = 0; rank < world; ++rank) {
    const ReduceGeometry g = step.GeometryOf(rank);
    ASSERT_EQ(g.batch, 1) << what;
    const uint64_t output = outputs[rank] + step.first_rows[rank] * size;
    const ReduceSplit split = SplitForReduce(output, inputs.data(),
                                             ReduceInputIndex(g, 0, 0) * size, world,
                                             g.slice_elements, g.element_size);
    const int64_t items = ReduceItemCount(split);
    for (int64_t thread = 0; thread < threads; ++thread) {
      for (int64_t item = thread; item < items; item += threads, ++next_item) {
        const ReduceItem work = ReduceItemOf(split, item);
        for (int e = 0; e < work.elements; ++e) {
          const int64_t in = ReduceInputIndex(g, 0, work.first + e);
          const int64_t out = step.first_rows[rank] + ReduceOutputIndex(g, 0, work.first + e);
          for (int s = 0; s < world; ++s) loaders[s][in].push_back(next_item);
          ASSERT_EQ(storer[rank][out], kNobody) << what << " rank " << rank << " element " << out;
          storer[rank][out] = next_item;
        }
      }
    }
  }
  for (int s = 0; s < world; ++s) {
    for (int64_t e = 0; e < count; ++e) {
      if (storer[s][e] == kNobody) continue;
      ASSERT_GE(e, step.first_rows[s]) << what << " rank " << s << " stores outside its chunk";
      ASSERT_LT(e, step.first_rows[s] + step.rows[s]) << what << " rank " << s;
      if (!in_place) continue;
      for (int64_t loader : loaders[s][e]) {
        ASSERT_EQ(loader, storer[s][e])
            << what << ": element " << e << " of rank " << s
            << "'s buffer is stored by one item and loaded by another in the first op";
      }
    }
  }
  // So every load of the first op read the inputs as they were: each rank's chunk holds what
  // the reference reduces from the initial inputs.
  for (int rank = 0; rank < world; ++rank) {
    const std::vector<uint8_t> chunk = ReduceReference(step, rank, initial);
    std::copy(chunk.begin(), chunk.end(), buffers[rank].begin() + step.first_rows[rank] * size);
  }
  // The second op: the AllGather of the chunks, in place in the outputs (each rank's input is
  // its chunk in its output), stores rank r's chunk into every output at its own place; it
  // starts on a rank only after every rank's first op ended (the AllGather's entry barrier).
  const absl::StatusOr<AllGatherLayout> gather = TwoShotAllReduceGather(step);
  ASSERT_TRUE(gather.ok()) << what << ": " << gather.status();
  const std::vector<std::vector<uint8_t>> reduced = buffers;
  for (int rank = 0; rank < world; ++rank) {
    const ShardGeometry shard = gather->GeometryOf(rank);
    ASSERT_EQ(shard.batch, 1) << what;
    ASSERT_EQ(shard.output_offset, step.first_rows[rank] * size) << what;
    ASSERT_EQ(shard.shard_bytes, step.rows[rank] * size) << what;
    ASSERT_EQ(gather->InPlaceOffset(rank), shard.output_offset) << what;
    for (int target = 0; target < world; ++target) {
      std::copy_n(reduced[rank].begin() + shard.output_offset, shard.shard_bytes,
                  buffers[target].begin() + shard.output_offset);
    }
  }
  // The one-shot: every rank reduces the whole count from the inputs.
  for (int rank = 0; rank < world; ++rank) {
    ASSERT_TRUE(buffers[rank] == ReduceReference(all_reduce, rank, initial))
        << what << ": rank " << rank << "'s two-shot output differs from the one-shot's";
  }
}

TEST(ReducePlanTest, TwoShotAllReduceInAndOutOfPlaceGivesTheOneShotsBits) {
  std::mt19937 random(11);
  for (int world : {1, 2, 3, 4, 7, 8}) {
    for (DataType dtype : {DataType::kBFloat16, DataType::kFloat16, DataType::kFloat32}) {
      for (Reduction reduction : {Reduction::kSum, Reduction::kMax, Reduction::kMin}) {
        for (int64_t count : {1, 7, 8, 9, 31, 64, 65, 257, 1000}) {
          AllReduceShape shape;
          shape.dtype = dtype;
          shape.reduction = reduction;
          shape.count = count;
          const absl::StatusOr<ReduceLayout> layout = ComputeAllReduceLayout(shape, world);
          ASSERT_TRUE(layout.ok()) << layout.status();
          const uint64_t size = layout->element_size;
          for (int64_t threads : {1, 5, 512}) {
            // Every buffer aligned, all moved alike, or each by its own multiple of the element;
            // in place, or outputs elsewhere (moved by their own multiple).
            for (int pattern = 0; pattern < 3; ++pattern) {
              for (bool in_place : {true, false}) {
                std::vector<uint64_t> inputs;
                std::vector<uint64_t> outputs;
                for (int s = 0; s < world; ++s) {
                  const uint64_t shift = pattern == 0 ? 0 : pattern == 1 ? 3 : (s * 5) % 8;
                  inputs.push_back(0x10000000ull * (s + 1) + size * shift);
                  outputs.push_back(in_place ? inputs.back()
                                             : 0x10000000ull * (s + 9) + size * ((shift * 3) % 8));
                }
                SimulateTwoShotAllReduce(
                    *layout, inputs, outputs, threads, &random,
                    absl::StrCat(DataTypeName(dtype), " ", ReductionName(reduction), " world ",
                                 world, " count ", count, " threads ", threads, " pattern ",
                                 pattern, in_place ? " in place" : " out of place"));
                if (HasFatalFailure()) return;
              }
            }
          }
        }
      }
    }
  }
}

TEST(ReducePlanTest, MisalignedInputsTakeTheScalarPathAlignedOnesTheVectors) {
  const uint64_t aligned[] = {0x1000, 0x2000};
  ReduceSplit split = SplitForReduce(0x3000, aligned, 0, 2, 100, 2);
  EXPECT_EQ(split.vector_elements, 8);
  EXPECT_EQ(split.head, 0);
  EXPECT_EQ(split.body_units, 12);
  EXPECT_EQ(split.tail, 4);
  const uint64_t shifted[] = {0x1004, 0x2004};
  split = SplitForReduce(0x3004, shifted, 0, 2, 100, 2);
  EXPECT_EQ(split.head, 6);
  EXPECT_EQ(split.body_units, 11);
  EXPECT_EQ(split.tail, 6);
  const uint64_t apart[] = {0x1000, 0x2002};
  split = SplitForReduce(0x3000, apart, 0, 2, 100, 2);
  EXPECT_EQ(split.vector_elements, 1);
  EXPECT_EQ(split.head, 100);
  EXPECT_EQ(ReduceItemCount(split), 100);
  // The offset into the inputs counts: 0x2002 + 2 is co-aligned with 0x3004.
  split = SplitForReduce(0x3004, apart, 2, 2, 100, 2);
  EXPECT_EQ(split.vector_elements, 1);
  const uint64_t behind[] = {0x1002, 0x2002};
  split = SplitForReduce(0x3004, behind, 2, 2, 100, 2);
  EXPECT_EQ(split.vector_elements, 8);
  EXPECT_EQ(split.head, 6);
}

uint32_t Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float FromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// bf16 round to nearest even, by comparing the two neighbours in double.
uint16_t ReferenceBFloat16(float value) {
  const uint32_t down = Bits(value) & 0xffff0000u;
  const double low = FromBits(down);
  const double high = FromBits(down + 0x10000u);
  const double error_low = std::fabs(static_cast<double>(value) - low);
  const double error_high = std::fabs(high - static_cast<double>(value));
  const bool up = error_high < error_low || (error_high == error_low && ((down >> 16) & 1u) != 0);
  return static_cast<uint16_t>((up ? down + 0x10000u : down) >> 16);
}

uint16_t HalfBits(_Float16 half) {
  uint16_t bits;
  std::memcpy(&bits, &half, sizeof(bits));
  return bits;
}

// Floats over the whole range, and those next to every boundary of the 16-bit types: every
// 16-bit value's fp32, one ulp either side, and the midpoints to its neighbours.
std::vector<float> TestFloats() {
  std::vector<float> values;
  std::mt19937 random(7);
  for (int i = 0; i < 200000; ++i) {
    const uint32_t bits = random();
    if ((bits & 0x7fffffffu) <= 0x7f800000u) values.push_back(FromBits(bits));
  }
  for (uint32_t half = 0; half < 0x10000u; ++half) {
    _Float16 h;
    const uint16_t bits16 = static_cast<uint16_t>(half);
    std::memcpy(&h, &bits16, sizeof(h));
    const float value = static_cast<float>(h);
    if (std::isnan(value) || std::isinf(value)) continue;
    for (int delta : {-1, 0, 1}) values.push_back(FromBits(Bits(value) + delta));
    const float bf = FromBits(half << 16);
    if (!std::isnan(bf) && !std::isinf(bf)) {
      const float next = FromBits((half + 1) << 16);
      if (!std::isnan(next) && !std::isinf(next)) {
        const float mid = static_cast<float>((static_cast<double>(bf) + next) / 2);
        for (int delta : {-1, 0, 1}) values.push_back(FromBits(Bits(mid) + delta));
      }
    }
  }
  std::vector<float> numbers;
  for (float value : values) {
    if (!std::isnan(value)) numbers.push_back(value);
  }
  return numbers;
}

TEST(ReduceMathTest, Float16ConversionsMatchTheCompilersIeeeHalf) {
  for (uint32_t half = 0; half < 0x10000u; ++half) {
    _Float16 h;
    const uint16_t bits16 = static_cast<uint16_t>(half);
    std::memcpy(&h, &bits16, sizeof(h));
    const float expected = static_cast<float>(h);
    const float actual = Float16Element::ToFloat(bits16);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(actual)) << std::hex << half;
    } else {
      ASSERT_EQ(Bits(actual), Bits(expected)) << std::hex << half;
    }
  }
  for (float value : TestFloats()) {
    ASSERT_EQ(Float16Element::FromFloat(value), HalfBits(static_cast<_Float16>(value)))
        << value << " bits " << std::hex << Bits(value);
  }
}

TEST(ReduceMathTest, BFloat16ConversionsRoundToNearestEven) {
  for (uint32_t half = 0; half < 0x10000u; ++half) {
    ASSERT_EQ(Bits(BFloat16Element::ToFloat(static_cast<uint16_t>(half))), half << 16);
  }
  for (float value : TestFloats()) {
    if (std::fabs(value) > 3.3e38f) continue;  // Neighbours past the largest bf16 are inf.
    ASSERT_EQ(BFloat16Element::FromFloat(value), ReferenceBFloat16(value))
        << value << " bits " << std::hex << Bits(value);
  }
  EXPECT_EQ(BFloat16Element::FromFloat(FromBits(0x7fc00001u)) & 0x7fc0u, 0x7fc0u);  // NaN stays.
}

TEST(ReduceMathTest, RanksCombineInRankOrderInFp32RoundedOnce) {
  // In fp32, (1e8 + 1) - 1e8 = 0 but (1e8 - 1e8) + 1 = 1: the order is rank order.
  const float values[] = {1e8f, 1.0f, -1e8f};
  const uint32_t sum = ReduceInRankOrder<Float32Element>(
      kReduceSum, 3, [&values](int s) { return Bits(values[s]); });
  EXPECT_EQ(FromBits(sum), (1e8f + 1.0f) - 1e8f);
  // bf16 accumulates in fp32 and rounds once: 256 + 1 + 1 = 258 (exact in bf16), where rounding
  // after every step would give 256.
  const uint16_t bf[] = {BFloat16Element::FromFloat(256.0f), BFloat16Element::FromFloat(1.0f),
                         BFloat16Element::FromFloat(1.0f)};
  const uint16_t bf_sum =
      ReduceInRankOrder<BFloat16Element>(kReduceSum, 3, [&bf](int s) { return bf[s]; });
  EXPECT_EQ(BFloat16Element::ToFloat(bf_sum), 258.0f);
  const float mixed[] = {-3.0f, 5.5f, 2.0f, -7.25f};
  auto element = [&mixed](int s) { return Bits(mixed[s]); };
  EXPECT_EQ(FromBits(ReduceInRankOrder<Float32Element>(kReduceMax, 4, element)), 5.5f);
  EXPECT_EQ(FromBits(ReduceInRankOrder<Float32Element>(kReduceMin, 4, element)), -7.25f);
  EXPECT_EQ(FromBits(ReduceInRankOrder<Float32Element>(kReduceSum, 1, element)), -3.0f);
}

// The reduction of the fp32 `values` (one per rank) with `reduction`, as fp32 bits.
uint32_t ReduceFloats(int32_t reduction, const std::vector<float>& values) {
  return ReduceInRankOrder<Float32Element>(reduction, static_cast<int>(values.size()),
                                           [&values](int s) { return Bits(values[s]); });
}

TEST(ReduceMathTest, NaNAndSignedZerosGiveTheSameBitsInEveryRankOrder) {
  const float nan = std::nanf("");
  const float payload = FromBits(0xffc01234u);  // A negative NaN with a payload.
  for (int32_t reduction : {kReduceSum, kReduceMax, kReduceMin}) {
    // A NaN of any rank, whatever its sign and payload, gives the one canonical NaN.
    for (const std::vector<float>& values :
         std::vector<std::vector<float>>{{nan, 1.0f}, {1.0f, nan}, {2.0f, payload, -3.0f},
                                         {payload}, {-1.0f, 4.0f, nan, nan}}) {
      EXPECT_EQ(ReduceFloats(reduction, values), kCanonicalNaN) << reduction;
    }
    const uint16_t bf_nan = 0xffc1u;
    EXPECT_EQ(ReduceInRankOrder<BFloat16Element>(
                  reduction, 2, [bf_nan](int s) { return s == 1 ? bf_nan : uint16_t{0x3f80}; }),
              0x7fffu);
    EXPECT_EQ(ReduceInRankOrder<Float16Element>(
                  reduction, 2, [](int s) { return s == 0 ? uint16_t{0xfe01} : uint16_t{0x3c00}; }),
              0x7e00u);
  }
  // Max of -0 and +0 is +0, min is -0, in either order; the sum is as IEEE adds.
  for (const std::vector<float>& zeros :
       std::vector<std::vector<float>>{{-0.0f, 0.0f}, {0.0f, -0.0f}, {-0.0f, -0.0f, 0.0f}}) {
    EXPECT_EQ(ReduceFloats(kReduceMax, zeros), 0x00000000u);
    EXPECT_EQ(ReduceFloats(kReduceMin, zeros), 0x80000000u);
  }
  EXPECT_EQ(ReduceFloats(kReduceMax, {-0.0f, -0.0f}), 0x80000000u);
  EXPECT_EQ(ReduceFloats(kReduceMin, {0.0f, 0.0f}), 0x00000000u);
  EXPECT_EQ(ReduceFloats(kReduceSum, {-0.0f, -0.0f}), 0x80000000u);
  EXPECT_EQ(ReduceFloats(kReduceSum, {-0.0f, 0.0f}), 0x00000000u);
  // Infinities are values: max and min keep them, and their sum of opposite signs is NaN.
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(FromBits(ReduceFloats(kReduceMax, {-inf, 1.0f, inf})), inf);
  EXPECT_EQ(FromBits(ReduceFloats(kReduceMin, {1.0f, -inf})), -inf);
  EXPECT_EQ(ReduceFloats(kReduceSum, {inf, -inf}), kCanonicalNaN);
}

}  // namespace
}  // namespace ltx
