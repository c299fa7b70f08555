// Tests of the reductions' plan and arithmetic (kernels/reduce/reduce_plan.h,
// kernels/reduce/reduce_math.h): every thread of grids of several sizes simulated over a grid of
// shapes, alignments and rank layouts (every output element reduced exactly once, from the
// right element of every input, vectors only where every address is 16-byte aligned); the
// conversions of bf16 and fp16 against independent references; the reductions in rank order.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/reduce/reduce_math.h"
#include "kernels/reduce/reduce_plan.h"
#include "ltx/collectives/reduce_layout.h"

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
    std::vector<uint64_t> starts;
    for (uint64_t input : inputs) starts.push_back(input + input_start);
    const ReduceSplit split = SplitForReduce(output + output_start, starts.data(),
                                             layout.world_size, g.slice_elements, g.element_size);
    const int64_t items = ReduceItemCount(split);
    for (int64_t thread = 0; thread < threads; ++thread) {
      for (int64_t item = thread; item < items; item += threads) {
        const ReduceItem work = ReduceItemOf(split, item);
        if (work.elements > 1) {
          ASSERT_EQ(work.elements * size, kVectorBytes) << what;
          ASSERT_EQ((output + output_start + work.first * size) % kVectorBytes, 0u) << what;
          for (uint64_t start : starts) {
            ASSERT_EQ((start + work.first * size) % kVectorBytes, 0u) << what;
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

TEST(ReducePlanTest, EveryAllReduceElementOnceOnEveryRankAndInPlaceChunksCoverTheCount) {
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
        // In place: the chunks tile [0, count) in rank order, whole vectors but the last rank's.
        const ReduceLayout step = InPlaceAllReduceStep(*layout);
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
        SimulateLayout(step, absl::StrCat(what, " in place"));
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(ReducePlanTest, MisalignedInputsTakeTheScalarPathAlignedOnesTheVectors) {
  const uint64_t aligned[] = {0x1000, 0x2000};
  ReduceSplit split = SplitForReduce(0x3000, aligned, 2, 100, 2);
  EXPECT_EQ(split.vector_elements, 8);
  EXPECT_EQ(split.head, 0);
  EXPECT_EQ(split.body_units, 12);
  EXPECT_EQ(split.tail, 4);
  const uint64_t shifted[] = {0x1004, 0x2004};
  split = SplitForReduce(0x3004, shifted, 2, 100, 2);
  EXPECT_EQ(split.head, 6);
  EXPECT_EQ(split.body_units, 11);
  EXPECT_EQ(split.tail, 6);
  const uint64_t apart[] = {0x1000, 0x2002};
  split = SplitForReduce(0x3000, apart, 2, 100, 2);
  EXPECT_EQ(split.vector_elements, 1);
  EXPECT_EQ(split.head, 100);
  EXPECT_EQ(ReduceItemCount(split), 100);
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

}  // namespace
}  // namespace ltx
