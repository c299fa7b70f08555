// GPU tests of the AllGather with FP8 on the wire (AllGatherShape::wire = kFp8E4M3): poisoned
// outputs, and every rank's output compared bit for bit with the host reference of
// tools/testing/fp8_reference.h (a peer's rows decoded from their codes and scale, the rank's
// own rows exact). Random bf16 and fp16 rows over many binades, with zeros and a NaN: uneven and
// zero counts, batch > 1, odd row lengths, rows a whole block quantises, one block that takes
// every row in turn, both call styles, calls of changing shapes in a row, and the decoded values
// within the bound e4m3 implies; a Stop between the exchange and the copy of a rank's own rows;
// random bytes through the AllGather harness, misaligned and guarded; what the wire refuses. On
// the rank layout of the environment (ranks may share GPUs).
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/reduce/reduce_math.h"
#include "kernels/wire/fp8_rows.h"
#include "ltx/runtime.h"
#include "tools/testing/fp8_reference.h"
#include "tools/testing/gpu_fixture.h"
#include "tools/testing/rank_threads.h"
#include "tools/testing/split_rank_calls.h"
#include "tools/testing/test_ranks.h"

namespace ltx {
namespace {

constexpr uint8_t kPoison = 0xA5;

struct Fp8Case {
  DataType dtype = DataType::kBFloat16;
  int64_t batch = 1;
  int64_t hidden = 64;
  std::vector<int64_t> counts;

  std::string ToString() const {
    std::string counts_text;
    for (int64_t count : counts)
      absl::StrAppend(&counts_text, counts_text.empty() ? "" : ",", count);
    return absl::StrCat(DataTypeName(dtype), " batch ", batch, " hidden ", hidden, " counts [",
                        counts_text, "]");
  }
};

// Random 16-bit rows, each of one kind by its index: 0, 4, 5: magnitudes over 24 binades with
// some zeros; 1: the same with a NaN, +Inf and -Inf (which the scale skips and the codes carry
// as NaN and saturation); 2: all zeros; 3: tiny values (subnormal in bf16 and fp16), whose scale
// is the least one.
std::vector<uint16_t> RandomRows(const Fp8Case& c, int64_t rows, uint64_t seed) {
  std::mt19937_64 random(seed);
  const bool bf16 = c.dtype == DataType::kBFloat16;
  std::vector<uint16_t> values(rows * c.hidden);
  for (int64_t k = 0; k < static_cast<int64_t>(values.size()); ++k) {
    const int64_t kind = k / c.hidden % 6;
    const int binade = kind == 3 ? (bf16 ? -130 : -20) : static_cast<int>(random() % 24) - 12;
    const double magnitude = std::ldexp(1.0 + (random() % 1000) / 1000.0, binade);
    const bool zero = kind == 2 || random() % 7 == 0;
    const float value = static_cast<float>(zero ? 0.0 : (random() % 2 ? magnitude : -magnitude));
    values[k] = bf16 ? BFloat16Element::FromFloat(value) : Float16Element::FromFloat(value);
    if (kind == 1 && k % c.hidden < 3) {
      const uint16_t special[3] = {0x7fc0, static_cast<uint16_t>(bf16 ? 0x7f80 : 0x7c00),
                                   static_cast<uint16_t>(bf16 ? 0xff80 : 0xfc00)};
      values[k] = special[k % c.hidden];  // NaN, +Inf, -Inf.
    }
  }
  return values;
}

// Rank `rank`'s expected output: every rank's rows at their place in every slice, decoded but
// for its own.
std::vector<uint16_t> Expected(const Fp8Case& c, const std::vector<std::vector<uint16_t>>& inputs,
                               int rank) {
  int64_t total = 0;
  for (int64_t count : c.counts) total += count;
  std::vector<uint16_t> out(c.batch * total * c.hidden);
  int64_t prefix = 0;
  for (size_t source = 0; source < c.counts.size(); ++source) {
    for (int64_t slice = 0; slice < c.batch; ++slice) {
      for (int64_t i = 0; i < c.counts[source]; ++i) {
        const uint16_t* row = inputs[source].data() + (slice * c.counts[source] + i) * c.hidden;
        uint16_t* to = out.data() + ((slice * total) + prefix + i) * c.hidden;
        if (static_cast<int>(source) == rank) {
          std::memcpy(to, row, c.hidden * sizeof(uint16_t));
        } else {
          Fp8WireRow(c.dtype, row, c.hidden, to);
        }
      }
    }
    prefix += c.counts[source];
  }
  return out;
}

// Rank `rank`'s stream on `device`, the same for every test of the process: where ranks share
// a GPU, a process that keeps many streams busy can put two ranks in one hardware queue
// (kernels/PROTOCOL.md, "Ranks that share a GPU"). Never destroyed.
cudaStream_t RankStream(int rank, int device) {
  static auto* const streams = new std::map<std::pair<int, int>, cudaStream_t>();
  cudaStream_t& stream = (*streams)[{rank, device}];
  if (stream == nullptr) {
    EXPECT_EQ(cudaSetDevice(device), cudaSuccess);
    EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  }
  return stream;
}

// Every rank's buffers for the largest case, on the rank's GPU and stream.
class Fp8AllGatherTest : public ::testing::Test {
 protected:
  static constexpr int64_t kCapacity = 8 << 20;

  void SetUp() override {
    LTX_REQUIRE_RANKS(2);
    devices_ = TestRankDevices(2);
    RuntimeOptions options = OnPeerStores();
    options.devices = devices_;
    absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    runtime_ = std::move(*runtime);
    for (size_t rank = 0; rank < devices_.size(); ++rank) {
      const int device = devices_[rank];
      const cudaStream_t stream = RankStream(static_cast<int>(rank), device);
      ASSERT_EQ(cudaSetDevice(device), cudaSuccess);
      void* input = nullptr;
      void* output = nullptr;
      ASSERT_EQ(cudaMalloc(&input, kCapacity), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&output, kCapacity), cudaSuccess);
      RankBuffers buffers;
      buffers.input = input;
      buffers.output = output;
      buffers.stream = stream;
      buffers_.push_back(buffers);
    }
  }

  void TearDown() override {
    if (runtime_ != nullptr) runtime_->Synchronize(kTestWait).IgnoreError();
    runtime_.reset();
    for (size_t rank = 0; rank < buffers_.size(); ++rank) {
      cudaSetDevice(devices_[rank]);
      cudaFree(const_cast<void*>(buffers_[rank].input));
      cudaFree(buffers_[rank].output);
    }
  }

  // Writes fresh random inputs for `c` and poisons the outputs, on the ranks' streams; returns
  // the inputs.
  std::vector<std::vector<uint16_t>> Prepare(const Fp8Case& c, uint64_t seed) {
    const int world = runtime_->world_size();
    std::vector<std::vector<uint16_t>> inputs;
    const int64_t output_bytes = OutputBytes(c);
    EXPECT_LE(output_bytes, kCapacity);
    for (int rank = 0; rank < world; ++rank) {
      inputs.push_back(RandomRows(c, c.batch * c.counts[rank], seed * 131 + rank));
      EXPECT_EQ(cudaSetDevice(devices_[rank]), cudaSuccess);
      // Both on the rank's stream, so that they land before the op starts (cudaMemcpy from
      // pageable memory may return before its copy has reached the GPU, and cudaMemset runs on
      // the legacy stream, which the non-blocking streams do not wait for).
      EXPECT_EQ(cudaMemcpyAsync(const_cast<void*>(buffers_[rank].input), inputs[rank].data(),
                                inputs[rank].size() * 2, cudaMemcpyHostToDevice,
                                buffers_[rank].stream),
                cudaSuccess);
      EXPECT_EQ(cudaMemsetAsync(buffers_[rank].output, kPoison, output_bytes,
                                buffers_[rank].stream),
                cudaSuccess);
    }
    return inputs;
  }

  // Compares every rank's output with Expected, once the op is done; checks the decoded
  // values' error bound too.
  void Check(const Fp8Case& c, const std::vector<std::vector<uint16_t>>& inputs) {
    const int64_t output_bytes = OutputBytes(c);
    for (int rank = 0; rank < runtime_->world_size(); ++rank) {
      std::vector<uint16_t> got(output_bytes / 2);
      ASSERT_EQ(cudaSetDevice(devices_[rank]), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(got.data(), buffers_[rank].output, output_bytes, cudaMemcpyDeviceToHost),
                cudaSuccess);
      const std::vector<uint16_t> expected = Expected(c, inputs, rank);
      int64_t wrong = 0;
      int64_t first = -1;
      for (size_t k = 0; k < got.size(); ++k) {
        if (got[k] != expected[k]) {
          if (first < 0) first = static_cast<int64_t>(k);
          ++wrong;
        }
      }
      EXPECT_EQ(wrong, 0) << "rank " << rank << ": " << wrong << " elements differ, first at "
                          << first;
      CheckBound(c, inputs, got, rank);
    }
  }

  // Runs `c` once in `style` (with `call`'s options) on fresh random inputs and poisoned
  // outputs, and checks it.
  void RunAndCheck(const Fp8Case& c, CallStyle style, uint64_t seed, const CallOptions& call = {}) {
    SCOPED_TRACE(c.ToString());
    const std::vector<std::vector<uint16_t>> inputs = Prepare(c, seed);
    const AllGatherShape shape = ShapeOf(c);
    if (style == CallStyle::kCoordinated) {
      const absl::Status status = runtime_->AllGatherAndWait(shape, buffers_, kTestWait, call);
      ASSERT_TRUE(status.ok()) << status;
    } else {
      const absl::Status launched = RunOnRankThreads(runtime_->world_size(), [&](int rank) {
        return runtime_->AllGatherRank(rank, shape, buffers_[rank], call);
      });
      ASSERT_TRUE(launched.ok()) << launched;
      const absl::Status status = runtime_->Synchronize(kTestWait);
      ASSERT_TRUE(status.ok()) << status;
    }
    Check(c, inputs);
  }

  static int64_t OutputBytes(const Fp8Case& c) {
    int64_t total = 0;
    for (int64_t count : c.counts) total += count;
    return c.batch * total * c.hidden * 2;
  }

  static AllGatherShape ShapeOf(const Fp8Case& c) {
    AllGatherShape shape;
    shape.dtype = c.dtype;
    shape.batch = c.batch;
    shape.hidden = c.hidden;
    shape.token_counts = c.counts;
    shape.wire = WireFormat::kFp8E4M3;
    return shape;
  }

  // A peer's finite value comes back within 2^-4 of itself relative, plus 2^-10 of its row's
  // scale (below e4m3's normal range), plus the dtype's own rounding of the result (2^-8
  // relative for bf16, 2^-11 for fp16, and half its least subnormal); infinities saturate, a NaN
  // stays a NaN.
  static void CheckBound(const Fp8Case& c, const std::vector<std::vector<uint16_t>>& inputs,
                         const std::vector<uint16_t>& got, int rank) {
    int64_t total = 0;
    for (int64_t count : c.counts) total += count;
    const bool bf16 = c.dtype == DataType::kBFloat16;
    auto to_float = [bf16](uint16_t bits) {
      return bf16 ? BFloat16Element::ToFloat(bits) : Float16Element::ToFloat(bits);
    };
    const double dtype_relative = bf16 ? 1.0 / 256 : 1.0 / 2048;
    const double dtype_absolute = bf16 ? std::ldexp(1.0, -134) : std::ldexp(1.0, -25);
    int64_t prefix = 0;
    for (size_t source = 0; source < c.counts.size(); ++source) {
      for (int64_t row = 0; static_cast<int>(source) != rank && row < c.batch * c.counts[source];
           ++row) {
        const int64_t slice = row / c.counts[source];
        const uint16_t* values = inputs[source].data() + row * c.hidden;
        float largest = 0.0f;
        for (int64_t e = 0; e < c.hidden; ++e) {
          largest = Fp8RowLargest(largest, to_float(values[e]));
        }
        const double scale = Fp8RowScale(largest);
        const int64_t at = (slice * total + prefix + row % c.counts[source]) * c.hidden;
        for (int64_t e = 0; e < c.hidden; ++e) {
          const double sent = to_float(values[e]);
          const double received = to_float(got[at + e]);
          if (std::isnan(sent)) {
            EXPECT_TRUE(std::isnan(received)) << "rank " << rank << ", element " << e;
            continue;
          }
          if (std::isinf(sent)) {  // Saturated: the row's largest finite magnitude, signed.
            EXPECT_TRUE(std::isfinite(received) && std::signbit(received) == std::signbit(sent))
                << "rank " << rank << ", element " << e << ": " << received;
            continue;
          }
          const double bound = std::fabs(sent) / 16 + scale / 1024 +
                               dtype_relative * std::fabs(received) + dtype_absolute;
          ASSERT_LE(std::fabs(received - sent), bound)
              << "rank " << rank << ", from " << source << ", row " << row << ", element " << e;
        }
      }
      prefix += c.counts[source];
    }
  }

  // Counts for `world` ranks, uneven: every rank with rows, or rank `zero` without (-1: none).
  static std::vector<int64_t> UnevenCounts(int world, int zero = -1) {
    std::vector<int64_t> counts;
    for (int rank = 0; rank < world; ++rank) counts.push_back(rank == zero ? 0 : 3 + 5 * rank);
    return counts;
  }

  std::vector<int> devices_;
  std::unique_ptr<Runtime> runtime_;
  std::vector<RankBuffers> buffers_;
};

TEST_F(Fp8AllGatherTest, PeersRowsArriveDecodedAndOwnRowsExact) {
  const int world = runtime_->world_size();
  uint64_t seed = 1;
  for (DataType dtype : {DataType::kBFloat16, DataType::kFloat16}) {
    for (int64_t batch : {1, 3}) {
      for (int64_t hidden : {8, 13, 96, 4096}) {
        Fp8Case c;
        c.dtype = dtype;
        c.batch = batch;
        c.hidden = hidden;
        for (int zero : {-1, 0, world - 1}) {
          c.counts = UnevenCounts(world, zero);
          for (CallStyle style : {CallStyle::kCoordinated, CallStyle::kPerRankThreads}) {
            RunAndCheck(c, style, ++seed);
          }
        }
      }
    }
  }
}

// Rows that a whole block quantises (a team of 32 warps), in one pass and in several, on the
// vector path and the element path, with a rank without rows.
TEST_F(Fp8AllGatherTest, LongRowsTakeTheWholeBlock) {
  const int world = runtime_->world_size();
  uint64_t seed = 500;
  for (int64_t hidden : {16384, 16392, 17001, 33000}) {
    Fp8Case c;
    c.hidden = hidden;
    for (int rank = 0; rank < world; ++rank) c.counts.push_back(rank == 1 ? 0 : 1 + rank);
    RunAndCheck(c, CallStyle::kCoordinated, ++seed);
  }
}

// One block per rank, so that every team quantises row after row (the two halves of its shared
// memory in turn) and every warp decodes piece after piece: teams of 1, 4, 8 and 32 warps, on
// the vector path and the element path, in both call styles.
TEST_F(Fp8AllGatherTest, OneBlockTakesEveryRowInTurn) {
  const int world = runtime_->world_size();
  CallOptions one_block;
  one_block.blocks = 1;
  uint64_t seed = 700;
  for (int64_t hidden : {96, 4096, 4101, 5120, 32768}) {
    Fp8Case c;
    c.hidden = hidden;
    c.batch = 2;
    c.counts = UnevenCounts(world);
    for (CallStyle style : {CallStyle::kCoordinated, CallStyle::kPerRankThreads}) {
      RunAndCheck(c, style, ++seed, one_block);
    }
  }
}

// Many calls of changing shapes one after another, each checked: a rank's next op rewrites its
// slot only after every peer read the last one.
TEST_F(Fp8AllGatherTest, CallsInARowEachCheckedBitForBit) {
  const int world = runtime_->world_size();
  std::mt19937_64 random(7);
  for (int call = 0; call < 24; ++call) {
    Fp8Case c;
    c.dtype = random() % 2 ? DataType::kBFloat16 : DataType::kFloat16;
    c.batch = 1 + random() % 2;
    c.hidden = 8 + random() % 300;
    for (int rank = 0; rank < world; ++rank)
      c.counts.push_back(random() % 4 == 0 ? 0 : 1 + random() % 40);
    RunAndCheck(c, call % 2 ? CallStyle::kPerRankThreads : CallStyle::kCoordinated, 1000 + call);
  }
}

// A Stop of the Runtime after an op's exchange, before its last kernel (the copy of each
// rank's own rows over its slot): the op passed its exit barrier, so every peer is done with
// the slot and the copy still runs; the output is whole (no codes left in a rank's own rows).
// Each rank's call is captured and split at that kernel, so that the Stop lands in between.
TEST_F(Fp8AllGatherTest, AStopAfterTheExchangeStillCompletesTheOutput) {
  Fp8Case c;
  c.hidden = 96;
  c.batch = 2;
  c.counts = UnevenCounts(runtime_->world_size());
  const std::vector<std::vector<uint16_t>> inputs = Prepare(c, 4242);
  const AllGatherShape shape = ShapeOf(c);
  SplitRankCalls split;
  ASSERT_TRUE(split
                  .Capture(devices_, buffers_, "CopyOwnRowsKernel",
                           [&](int rank) {
                             return runtime_->AllGatherRank(rank, shape, buffers_[rank]);
                           })
                  .ok());
  ASSERT_TRUE(split.LaunchBefore().ok());
  for (const RankBuffers& buffers : buffers_) {
    ASSERT_EQ(cudaStreamSynchronize(buffers.stream), cudaSuccess);
  }
  EXPECT_EQ(runtime_->Stop(absl::CancelledError("stopped by the test")).code(),
            absl::StatusCode::kCancelled);
  for (int device : devices_) {  // The GPUs' abort flags are set before the kernel starts.
    ASSERT_EQ(cudaSetDevice(device), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  ASSERT_TRUE(split.LaunchKernel().ok());
  for (const RankBuffers& buffers : buffers_) {
    ASSERT_EQ(cudaStreamSynchronize(buffers.stream), cudaSuccess);
  }
  Check(c, inputs);
  ASSERT_TRUE(runtime_->Reset(kTestWait).ok());
  RunAndCheck(c, CallStyle::kPerRankThreads, 4243);
}

// What the FP8 wire refuses, before any launch, alike on every rank: coordinated calls leave the
// Runtime usable, a per-rank call stops it until Reset.
TEST_F(Fp8AllGatherTest, RefusesWhatItCannotCarry) {
  const int world = runtime_->world_size();
  const std::vector<int64_t> counts = UnevenCounts(world);
  AllGatherShape shape;
  shape.dtype = DataType::kFloat32;
  shape.hidden = 64;
  shape.token_counts = counts;
  shape.wire = WireFormat::kFp8E4M3;
  EXPECT_EQ(runtime_->AllGatherAndWait(shape, buffers_, kTestWait).code(),
            absl::StatusCode::kInvalidArgument);
  shape.dtype = DataType::kBFloat16;
  CallOptions one_trip;
  one_trip.protocol = Protocol::kOneTrip;
  EXPECT_EQ(runtime_->AllGatherAndWait(shape, buffers_, kTestWait, one_trip).code(),
            absl::StatusCode::kUnimplemented);
  // In place: rank r's input at its own rows of its output.
  std::vector<RankBuffers> in_place = buffers_;
  int64_t prefix = 0;
  for (int rank = 0; rank < world; ++rank) {
    in_place[rank].input = static_cast<uint8_t*>(in_place[rank].output) + prefix * 64 * 2;
    prefix += counts[rank];
  }
  EXPECT_EQ(runtime_->AllGatherAndWait(shape, in_place, kTestWait).code(),
            absl::StatusCode::kInvalidArgument);
  // Several tensors: UNIMPLEMENTED, a coordinated call's leaving the Runtime usable; a per-rank
  // call's stops it (a rank cannot know that its peers refused alike), and the next rank's call
  // finds it stopped until Reset.
  shape.tensors = 3;
  EXPECT_EQ(runtime_->AllGather(shape, buffers_).status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(runtime_->status().ok()) << runtime_->status();
  EXPECT_EQ(runtime_->AllGatherRank(0, shape, buffers_[0]).code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(runtime_->status().code(), absl::StatusCode::kUnimplemented) << runtime_->status();
  EXPECT_EQ(runtime_->AllGatherRank(1, shape, buffers_[1]).code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(runtime_->Reset(kTestWait).ok());
  shape.tensors = 1;
  Fp8Case c;
  c.counts = counts;
  RunAndCheck(c, CallStyle::kCoordinated, 99);
}

// Ranks that disagree on the wire format fail at entry (the wire is in the digest), with
// InvalidArgument and no stores; Reset makes the Runtime usable again.
TEST_F(Fp8AllGatherTest, RanksThatDisagreeOnTheWireFailAtEntry) {
  const int world = runtime_->world_size();
  const std::vector<int64_t> counts = UnevenCounts(world);
  AllGatherShape shape;
  shape.hidden = 64;
  shape.token_counts = counts;
  const absl::Status launched = RunOnRankThreads(world, [&](int rank) {
    AllGatherShape mine = shape;
    mine.wire = rank == 0 ? WireFormat::kNative : WireFormat::kFp8E4M3;
    return runtime_->AllGatherRank(rank, mine, buffers_[rank]);
  });
  EXPECT_TRUE(LaunchedOrRefusedForTheDisagreement(launched)) << launched;
  const absl::Status status = runtime_->Synchronize(kTestWait);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  ASSERT_TRUE(runtime_->Reset(kTestWait).ok());
  Fp8Case c;
  c.counts = counts;
  RunAndCheck(c, CallStyle::kPerRankThreads, 77);
}

// Through the AllGather harness: random bytes (every bit pattern, NaNs and infinities too),
// misaligned inputs and outputs (a slot's scales at odd addresses), guards around every buffer.
TEST(Fp8AllGatherHarnessTest, RandomBytesMisalignedAndGuarded) {
  LTX_REQUIRE_RANKS(2);
  GpuFixture f = MakeGpuFixture(TestRankDevices(2), OnPeerStores());
  ASSERT_NE(f.runtime, nullptr);
  const int world = f.runtime->world_size();
  for (DataType dtype : {DataType::kBFloat16, DataType::kFloat16}) {
    // Row lengths on the element path (37) and the vector path (64); misalignments that put the
    // quantising and the decoding on different paths (input aligned, output not, and back).
    struct Layout {
      int64_t hidden;
      int input_misalignment;
      int output_misalignment;
    };
    for (const Layout l : {Layout{37, 0, 0}, Layout{37, 2, 6}, Layout{64, 0, 0}, Layout{64, 0, 8},
                           Layout{64, 8, 0}, Layout{64, 2, 2}}) {
      AllGatherCase c;
      c.dtype = dtype;
      c.batch = 2;
      c.hidden = l.hidden;
      for (int rank = 0; rank < world; ++rank) c.token_counts.push_back(rank == 1 ? 0 : 2 + rank);
      c.input_misalignment = l.input_misalignment;
      c.output_misalignment = l.output_misalignment;
      c.wire = WireFormat::kFp8E4M3;
      for (CallStyle style : {CallStyle::kCoordinated, CallStyle::kPerRankThreads}) {
        const absl::Status status = RunAndVerify(f, c, style);
        EXPECT_TRUE(status.ok()) << c.ToString() << ": " << status;
      }
    }
  }
}

}  // namespace
}  // namespace ltx
