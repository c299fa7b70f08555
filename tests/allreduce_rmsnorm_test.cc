// GPU tests of the AllReduce with the fused residual-add + RMSNorm epilogue, in both call styles
// and captured into CUDA graphs: bf16, fp16 and fp32; rows that fill a warp, rows shorter than
// a warp and odd ones; no rows; the residual updated in place; buffers off 16-byte alignment;
// several block counts; ranks that disagree on eps; bad buffers. Random inputs per rank and
// per call (the residual and the weight the same on every rank, as a tensor-parallel layer has
// them), outputs poisoned before every call, every rank's residual_out and output compared bit
// for bit with the host reference (tools/testing/reduce_reference.h), the inputs, the residual
// (unless updated in place) and the bytes past each output checked unchanged. The ranks come
// from the layout switch (tools/testing/test_ranks.h).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/reduce/reduce_math.h"
#include "ltx/collectives/reduce_layout.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/runtime.h"
#include "ltx/status_macros.h"
#include "tools/testing/gpu_fixture.h"
#include "tools/testing/rank_threads.h"
#include "tools/testing/reduce_reference.h"
#include "tools/testing/test_ranks.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;

constexpr uint8_t kPoison = 0xA5;
// Bytes of each buffer of each rank: enough for 64 rows of 8192 fp32 elements.
constexpr int64_t kCapacity = int64_t{2} << 20;
// Bytes past the end of each output that must keep the poison.
constexpr int64_t kGuard = 64;

struct RmsNormCase {
  AllReduceRmsNormShape shape;
  bool residual_in_place = false;
  // Elements by which every buffer starts past its allocation (1: off 16-byte alignment, so the
  // kernel moves element by element).
  int offset = 0;
  std::string ToString() const {
    return absl::StrFormat("%s rows %d hidden %d eps %g%s%s", DataTypeName(shape.dtype),
                           shape.rows, shape.hidden, shape.eps,
                           residual_in_place ? " residual in place" : "",
                           offset != 0 ? " misaligned" : "");
  }
};

// The bits of a random value of `dtype` (magnitude in [0.25, 4), a random sign), as bytes.
std::vector<uint8_t> RandomValues(DataType dtype, int64_t count, std::mt19937_64& random) {
  std::uniform_real_distribution<float> magnitude(0.25f, 4.0f);
  const int size = ElementSize(dtype);
  std::vector<uint8_t> bytes(static_cast<size_t>(count * size));
  for (int64_t i = 0; i < count; ++i) {
    const float value = (random() & 1) != 0 ? magnitude(random) : -magnitude(random);
    if (dtype == DataType::kBFloat16) {
      const uint16_t bits = BFloat16Element::FromFloat(value);
      std::memcpy(bytes.data() + i * size, &bits, size);
    } else if (dtype == DataType::kFloat16) {
      const uint16_t bits = Float16Element::FromFloat(value);
      std::memcpy(bytes.data() + i * size, &bits, size);
    } else {
      std::memcpy(bytes.data() + i * size, &value, size);
    }
  }
  return bytes;
}

// Every rank's five buffers and stream, and the host copies of the current case.
class RmsNormWorld {
 public:
  explicit RmsNormWorld(std::vector<int> devices) : devices_(std::move(devices)), random_(77) {}
  RmsNormWorld(const RmsNormWorld&) = delete;
  RmsNormWorld& operator=(const RmsNormWorld&) = delete;
  ~RmsNormWorld() {
    for (Rank& r : ranks_) {
      cudaSetDevice(r.device);
      if (r.stream != nullptr) cudaStreamSynchronize(r.stream);
      for (uint8_t* area : r.areas) cudaFree(area);
      if (r.stream != nullptr) cudaStreamDestroy(r.stream);
    }
  }

  absl::Status Allocate() {
    for (int device : devices_) {
      ranks_.push_back(Rank{device});
      Rank& r = ranks_.back();
      LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device), "cudaSetDevice"));
      LTX_RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking),
                                     "cudaStreamCreate"));
      for (uint8_t*& area : r.areas) {
        LTX_RETURN_IF_ERROR(CudaStatus(
            cudaMalloc(reinterpret_cast<void**>(&area), kCapacity + kGuard), "cudaMalloc"));
      }
    }
    return absl::OkStatus();
  }

  // New random inputs (each rank its own), residual and weight (the same on every rank) for
  // `c`, uploaded; every output area poisoned (residual_out too unless it is the residual).
  absl::Status Prepare(const RmsNormCase& c) {
    case_ = c;
    const int64_t elements = c.shape.rows * c.shape.hidden;
    inputs_.clear();
    for (size_t rank = 0; rank < ranks_.size(); ++rank) {
      inputs_.push_back(RandomValues(c.shape.dtype, elements, random_));
    }
    residual_ = RandomValues(c.shape.dtype, elements, random_);
    weight_ = RandomValues(c.shape.dtype, c.shape.hidden, random_);
    for (size_t rank = 0; rank < ranks_.size(); ++rank) {
      Rank& r = ranks_[rank];
      LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(r.device), "cudaSetDevice"));
      for (int k : {kOutput, kResidualOut, kResidual}) {
        LTX_RETURN_IF_ERROR(
            CudaStatus(cudaMemset(r.areas[k], kPoison, kCapacity + kGuard), "cudaMemset"));
      }
      LTX_RETURN_IF_ERROR(Upload(At(r, kInput), inputs_[rank]));
      LTX_RETURN_IF_ERROR(Upload(At(r, kResidual), residual_));
      LTX_RETURN_IF_ERROR(Upload(At(r, kWeight), weight_));
      // The copies and memsets ran on the legacy stream, which the ranks' non-blocking streams
      // do not wait for.
      LTX_RETURN_IF_ERROR(CudaStatus(cudaDeviceSynchronize(), "cudaDeviceSynchronize"));
    }
    return absl::OkStatus();
  }

  RmsNormBuffers Buffers(int rank) const {
    const Rank& r = ranks_[rank];
    RmsNormBuffers buffers;
    buffers.input = At(r, kInput);
    buffers.output = At(r, kOutput);
    buffers.residual = At(r, kResidual);
    buffers.residual_out = case_.residual_in_place ? At(r, kResidual) : At(r, kResidualOut);
    buffers.weight = At(r, kWeight);
    buffers.stream = r.stream;
    return buffers;
  }
  std::vector<RmsNormBuffers> AllBuffers() const {
    std::vector<RmsNormBuffers> all;
    for (size_t rank = 0; rank < ranks_.size(); ++rank) all.push_back(Buffers(rank));
    return all;
  }
  std::vector<RankBuffers> Streams() const {
    std::vector<RankBuffers> streams(ranks_.size());
    for (size_t rank = 0; rank < ranks_.size(); ++rank) streams[rank].stream = ranks_[rank].stream;
    return streams;
  }

  // Every rank's residual_out and output against the reference, bit for bit; its input, the
  // residual (unless updated in place) and the weight unchanged; the guard past each output
  // still poisoned.
  absl::Status Verify() const {
    const absl::StatusOr<ReduceLayout> layout =
        ComputeAllReduceRmsNormLayout(case_.shape, static_cast<int>(ranks_.size()));
    LTX_RETURN_IF_ERROR(layout.status());
    const RmsNormOutputs expected = RmsNormReference(*layout, inputs_, residual_, weight_);
    const int64_t bytes = static_cast<int64_t>(expected.output.size());
    for (size_t rank = 0; rank < ranks_.size(); ++rank) {
      const Rank& r = ranks_[rank];
      LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(r.device), "cudaSetDevice"));
      LTX_RETURN_IF_ERROR(CudaStatus(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize"));
      const uint8_t* residual_out = case_.residual_in_place ? At(r, kResidual)
                                                            : At(r, kResidualOut);
      LTX_RETURN_IF_ERROR(Compare(rank, "residual_out", residual_out, expected.residual_out));
      LTX_RETURN_IF_ERROR(Compare(rank, "output", At(r, kOutput), expected.output));
      LTX_RETURN_IF_ERROR(Compare(rank, "input", At(r, kInput), inputs_[rank]));
      LTX_RETURN_IF_ERROR(Compare(rank, "weight", At(r, kWeight), weight_));
      if (!case_.residual_in_place) {
        LTX_RETURN_IF_ERROR(Compare(rank, "residual", At(r, kResidual), residual_));
      }
      const std::vector<uint8_t> guard(kGuard, kPoison);
      LTX_RETURN_IF_ERROR(Compare(rank, "the guard past output", At(r, kOutput) + bytes, guard));
      LTX_RETURN_IF_ERROR(
          Compare(rank, "the guard past residual_out", residual_out + bytes, guard));
    }
    return absl::OkStatus();
  }

 private:
  enum Area { kInput = 0, kOutput, kResidual, kResidualOut, kWeight, kAreas };
  struct Rank {
    int device = -1;
    cudaStream_t stream = nullptr;
    uint8_t* areas[kAreas] = {};
  };

  // Where buffer `area` of rank `r` starts for the current case.
  uint8_t* At(const Rank& r, Area area) const {
    return r.areas[area] + case_.offset * ElementSize(case_.shape.dtype);
  }

  static absl::Status Upload(uint8_t* area, const std::vector<uint8_t>& bytes) {
    return CudaStatus(cudaMemcpy(area, bytes.data(), bytes.size(), cudaMemcpyHostToDevice),
                      "cudaMemcpy");
  }

  static absl::Status Compare(size_t rank, const char* what, const uint8_t* device,
                              const std::vector<uint8_t>& expected) {
    std::vector<uint8_t> got(expected.size());
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaMemcpy(got.data(), device, got.size(), cudaMemcpyDeviceToHost), "cudaMemcpy"));
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] != expected[i]) {
        return absl::InternalError(
            absl::StrFormat("rank %d: %s: byte %d of %d is 0x%02x, expected 0x%02x", rank, what,
                            i, got.size(), got[i], expected[i]));
      }
    }
    return absl::OkStatus();
  }

  const std::vector<int> devices_;
  std::mt19937_64 random_;
  std::vector<Rank> ranks_;
  RmsNormCase case_;
  std::vector<std::vector<uint8_t>> inputs_;
  std::vector<uint8_t> residual_;
  std::vector<uint8_t> weight_;
};

class AllReduceRmsNormTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LTX_REQUIRE_RANKS(2);
    RuntimeOptions options;
    options.devices = TestRankDevices(2);
    absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(OnPeerStores(options));
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    runtime_ = std::move(*runtime);
    world_ = std::make_unique<RmsNormWorld>(runtime_->devices());
    ASSERT_TRUE(world_->Allocate().ok());
  }

  // Enqueues the prepared case in `style` and waits for it.
  absl::Status Run(const RmsNormCase& c, CallStyle style, const CallOptions& call = {}) {
    const std::vector<RmsNormBuffers> buffers = world_->AllBuffers();
    if (style == CallStyle::kCoordinated) {
      return runtime_->AllReduceRmsNormAndWait(c.shape, buffers, kTestWait, call);
    }
    LTX_RETURN_IF_ERROR(RunOnRankThreads(runtime_->world_size(), [&](int rank) {
      return runtime_->AllReduceRmsNormRank(rank, c.shape, buffers[rank], call);
    }));
    return runtime_->Synchronize(kTestWait);
  }

  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<RmsNormWorld> world_;
};

RmsNormCase Case(DataType dtype, int64_t rows, int64_t hidden, bool residual_in_place = false) {
  RmsNormCase c;
  c.shape.dtype = dtype;
  c.shape.rows = rows;
  c.shape.hidden = hidden;
  c.shape.eps = 1e-5f;
  c.residual_in_place = residual_in_place;
  return c;
}

TEST_F(AllReduceRmsNormTest, EveryDtypeAndRowShapeGivesTheReferenceBits) {
  for (DataType dtype : {DataType::kBFloat16, DataType::kFloat16, DataType::kFloat32}) {
    for (const auto& [rows, hidden] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 4096}, {7, 100}, {33, 31}, {2, 1}, {64, 8192}, {0, 64}}) {
      for (bool in_place : {false, true}) {
        for (CallStyle style : {CallStyle::kCoordinated, CallStyle::kPerRankThreads}) {
          const RmsNormCase c = Case(dtype, rows, hidden, in_place);
          ASSERT_TRUE(world_->Prepare(c).ok());
          const absl::Status status = Run(c, style);
          ASSERT_TRUE(status.ok()) << c.ToString() << ": " << status;
          const absl::Status verified = world_->Verify();
          EXPECT_TRUE(verified.ok()) << c.ToString() << ": " << verified;
        }
      }
    }
  }
}

// Buffers off 16-byte alignment take the kernel's element path, rows of whole 16-byte units
// aligned its vector path; both give the reference's bits.
TEST_F(AllReduceRmsNormTest, MisalignedBuffersGiveTheSameBits) {
  for (DataType dtype : {DataType::kBFloat16, DataType::kFloat16, DataType::kFloat32}) {
    for (CallStyle style : {CallStyle::kCoordinated, CallStyle::kPerRankThreads}) {
      RmsNormCase c = Case(dtype, 5, 1000, /*residual_in_place=*/style == CallStyle::kCoordinated);
      c.offset = 1;
      ASSERT_TRUE(world_->Prepare(c).ok());
      ASSERT_TRUE(Run(c, style).ok()) << c.ToString();
      const absl::Status verified = world_->Verify();
      EXPECT_TRUE(verified.ok()) << c.ToString() << ": " << verified;
    }
  }
}

TEST_F(AllReduceRmsNormTest, EveryBlockCountGivesTheSameBits) {
  const RmsNormCase c = Case(DataType::kBFloat16, 45, 1000);
  for (int blocks : {1, 2, 3, 7, 0}) {
    CallOptions call;
    call.blocks = blocks;
    ASSERT_TRUE(world_->Prepare(c).ok());
    ASSERT_TRUE(Run(c, CallStyle::kPerRankThreads, call).ok());
    const absl::Status verified = world_->Verify();
    EXPECT_TRUE(verified.ok()) << blocks << " blocks: " << verified;
  }
}

TEST_F(AllReduceRmsNormTest, CapturedRankCallsReplayWithNewData) {
  const RmsNormCase c = Case(DataType::kBFloat16, 16, 2048);
  ASSERT_TRUE(world_->Prepare(c).ok());
  const std::vector<RmsNormBuffers> buffers = world_->AllBuffers();
  CapturedRankCalls graphs;
  ASSERT_TRUE(graphs
                  .Capture(runtime_->devices(), world_->Streams(),
                           [&](int rank) {
                             return runtime_->AllReduceRmsNormRank(rank, c.shape, buffers[rank]);
                           })
                  .ok());
  for (int replay = 0; replay < 4; ++replay) {
    ASSERT_TRUE(world_->Prepare(c).ok());  // The same buffers, new data.
    ASSERT_TRUE(graphs.Replay(runtime_->devices(), world_->Streams()).ok());
    const absl::Status verified = world_->Verify();
    EXPECT_TRUE(verified.ok()) << "replay " << replay << ": " << verified;
  }
  // Eager calls and replays share the op numbers.
  ASSERT_TRUE(world_->Prepare(c).ok());
  ASSERT_TRUE(Run(c, CallStyle::kCoordinated).ok());
  EXPECT_TRUE(world_->Verify().ok());
}

TEST_F(AllReduceRmsNormTest, RanksThatDisagreeOnEpsFailAndResetRecovers) {
  const RmsNormCase c = Case(DataType::kFloat16, 4, 256);
  ASSERT_TRUE(world_->Prepare(c).ok());
  const std::vector<RmsNormBuffers> buffers = world_->AllBuffers();
  ASSERT_TRUE(RunOnRankThreads(runtime_->world_size(), [&](int rank) {
                AllReduceRmsNormShape shape = c.shape;
                if (rank == 0) shape.eps = 1e-6f;
                return runtime_->AllReduceRmsNormRank(rank, shape, buffers[rank]);
              }).ok());
  const absl::Status status = runtime_->Synchronize(kTestWait);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("all_reduce_rmsnorm #1"));
  ASSERT_TRUE(runtime_->Reset(kTestWait).ok());
  ASSERT_TRUE(world_->Prepare(c).ok());
  ASSERT_TRUE(Run(c, CallStyle::kPerRankThreads).ok());
  EXPECT_TRUE(world_->Verify().ok());
}

TEST_F(AllReduceRmsNormTest, BadBuffersAreRefusedBeforeAnyLaunch) {
  const RmsNormCase c = Case(DataType::kBFloat16, 4, 128);
  ASSERT_TRUE(world_->Prepare(c).ok());
  std::vector<RmsNormBuffers> buffers = world_->AllBuffers();
  buffers[1].output = const_cast<void*>(buffers[1].input);
  absl::Status status = runtime_->AllReduceRmsNorm(c.shape, buffers).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("rank 1: input is its output"));
  buffers = world_->AllBuffers();
  buffers[0].weight = nullptr;
  status = runtime_->AllReduceRmsNorm(c.shape, buffers).status();
  EXPECT_THAT(std::string(status.message()), HasSubstr("rank 0: weight is null"));
  AllReduceRmsNormShape bad = c.shape;
  bad.eps = 0.0f;
  status = runtime_->AllReduceRmsNorm(bad, world_->AllBuffers()).status();
  EXPECT_THAT(std::string(status.message()), HasSubstr("eps must be positive"));
  EXPECT_TRUE(runtime_->status().ok()) << runtime_->status();
  // A host pointer as the weight: refused, and nothing launched anywhere.
  std::vector<uint8_t> host(c.shape.hidden * 2);
  buffers = world_->AllBuffers();
  buffers[0].weight = host.data();
  status = runtime_->AllReduceRmsNorm(c.shape, buffers).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("weight"));
  EXPECT_TRUE(runtime_->status().ok()) << runtime_->status();
  ASSERT_TRUE(world_->Prepare(c).ok());
  ASSERT_TRUE(Run(c, CallStyle::kCoordinated).ok());
  EXPECT_TRUE(world_->Verify().ok());
}

}  // namespace
}  // namespace ltx
