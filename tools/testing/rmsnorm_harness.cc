// The RMSNorm epilogue's cases on every rank's buffers: random data, poison, bitwise checks.
#include "tools/testing/rmsnorm_harness.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"
#include "ltx/collectives/reduce_layout.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/data_type.h"
#include "ltx/status_macros.h"
#include "tools/testing/reduce_reference.h"

namespace ltx {
namespace {

constexpr uint8_t kPoison = 0xA5;
// Bytes past the end of each output that must keep the poison, and room for the offset.
constexpr int64_t kGuard = 64;

absl::Status Upload(uint8_t* area, const std::vector<uint8_t>& bytes) {
  return CudaStatus(cudaMemcpy(area, bytes.data(), bytes.size(), cudaMemcpyHostToDevice),
                    "cudaMemcpy");
}

// Internal naming rank `rank`, `what` and the first byte of `device` that differs from
// `expected`; OK when none does.
absl::Status Compare(size_t rank, const char* what, const uint8_t* device,
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

}  // namespace

std::string RmsNormCase::ToString() const {
  return absl::StrFormat("%s rows %d hidden %d eps %g%s%s", DataTypeName(shape.dtype),
                         shape.rows, shape.hidden, shape.eps,
                         residual_in_place ? " residual in place" : "",
                         offset != 0 ? " misaligned" : "");
}

RmsNormHarness::RmsNormHarness(std::vector<int> devices, int64_t capacity, uint64_t seed)
    : devices_(std::move(devices)), capacity_(capacity), random_(seed) {}

absl::StatusOr<std::unique_ptr<RmsNormHarness>> RmsNormHarness::Create(std::vector<int> devices,
                                                                       int64_t capacity,
                                                                       uint64_t seed) {
  std::unique_ptr<RmsNormHarness> harness(
      new RmsNormHarness(std::move(devices), capacity, seed));
  for (int device : harness->devices_) {
    harness->ranks_.push_back(Rank{device});
    Rank& r = harness->ranks_.back();
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking),
                                   "cudaStreamCreate"));
    for (uint8_t*& area : r.areas) {
      LTX_RETURN_IF_ERROR(CudaStatus(
          cudaMalloc(reinterpret_cast<void**>(&area), capacity + 2 * kGuard), "cudaMalloc"));
    }
  }
  return harness;
}

RmsNormHarness::~RmsNormHarness() {
  for (Rank& r : ranks_) {
    cudaSetDevice(r.device);
    if (r.stream != nullptr) cudaStreamSynchronize(r.stream);
    for (uint8_t* area : r.areas) cudaFree(area);
    if (r.stream != nullptr) cudaStreamDestroy(r.stream);
  }
  cudaGetLastError();
}

uint8_t* RmsNormHarness::At(const Rank& r, Area area) const {
  return r.areas[area] + case_.offset * ElementSize(case_.shape.dtype);
}

absl::Status RmsNormHarness::Prepare(const RmsNormCase& c) {
  const int size = ElementSize(c.shape.dtype);
  const int64_t elements = c.shape.rows * c.shape.hidden;
  if (c.offset < 0 || c.offset * size > kGuard ||
      std::max(elements, c.shape.hidden) * size > capacity_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s does not fit buffers of %d bytes", c.ToString(), capacity_));
  }
  case_ = c;
  inputs_.clear();
  for (size_t rank = 0; rank < ranks_.size(); ++rank) {
    inputs_.push_back(RandomReduceValues(c.shape.dtype, elements, random_));
  }
  residual_ = RandomReduceValues(c.shape.dtype, elements, random_);
  weight_ = RandomReduceValues(c.shape.dtype, c.shape.hidden, random_);
  for (size_t rank = 0; rank < ranks_.size(); ++rank) {
    Rank& r = ranks_[rank];
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(r.device), "cudaSetDevice"));
    for (Area area : {kOutput, kResidualOut, kResidual}) {
      LTX_RETURN_IF_ERROR(CudaStatus(
          cudaMemset(r.areas[area], kPoison, capacity_ + 2 * kGuard), "cudaMemset"));
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

RmsNormBuffers RmsNormHarness::Buffers(int rank) const {
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

std::vector<RmsNormBuffers> RmsNormHarness::AllBuffers() const {
  std::vector<RmsNormBuffers> all;
  for (size_t rank = 0; rank < ranks_.size(); ++rank) all.push_back(Buffers(rank));
  return all;
}

std::vector<RankBuffers> RmsNormHarness::Streams() const {
  std::vector<RankBuffers> streams(ranks_.size());
  for (size_t rank = 0; rank < ranks_.size(); ++rank) streams[rank].stream = ranks_[rank].stream;
  return streams;
}

std::vector<RankBuffers> RmsNormHarness::InputsAndOutputs() const {
  std::vector<RankBuffers> buffers;
  for (size_t rank = 0; rank < ranks_.size(); ++rank) {
    const Rank& r = ranks_[rank];
    buffers.push_back(RankBuffers{At(r, kInput), At(r, kOutput), r.stream});
  }
  return buffers;
}

absl::Status RmsNormHarness::Verify() const {
  const absl::StatusOr<ReduceLayout> layout =
      ComputeAllReduceRmsNormLayout(case_.shape, static_cast<int>(ranks_.size()));
  LTX_RETURN_IF_ERROR(layout.status());
  const RmsNormOutputs expected = RmsNormReference(*layout, inputs_, residual_, weight_);
  const int64_t bytes = static_cast<int64_t>(expected.output.size());
  const std::vector<uint8_t> guard(kGuard, kPoison);
  for (size_t rank = 0; rank < ranks_.size(); ++rank) {
    const Rank& r = ranks_[rank];
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(r.device), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(CudaStatus(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize"));
    const uint8_t* residual_out =
        case_.residual_in_place ? At(r, kResidual) : At(r, kResidualOut);
    LTX_RETURN_IF_ERROR(Compare(rank, "residual_out", residual_out, expected.residual_out));
    LTX_RETURN_IF_ERROR(Compare(rank, "output", At(r, kOutput), expected.output));
    LTX_RETURN_IF_ERROR(Compare(rank, "input", At(r, kInput), inputs_[rank]));
    LTX_RETURN_IF_ERROR(Compare(rank, "weight", At(r, kWeight), weight_));
    if (!case_.residual_in_place) {
      LTX_RETURN_IF_ERROR(Compare(rank, "residual", At(r, kResidual), residual_));
    }
    LTX_RETURN_IF_ERROR(Compare(rank, "the guard past output", At(r, kOutput) + bytes, guard));
    LTX_RETURN_IF_ERROR(
        Compare(rank, "the guard past residual_out", residual_out + bytes, guard));
  }
  return absl::OkStatus();
}

}  // namespace ltx
