// One cuBLAS bf16 GEMM per GPU on its own stream, for the overlap run.
#include "tools/bench/gemm_load.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "ltx/cuda/cuda_status.h"
#include "ltx/status_macros.h"

namespace ltx {
namespace {

// `count` random bf16 values in [-1, 1): the top half of a float's bits.
std::vector<uint16_t> RandomBf16(int64_t count, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<uint16_t> values(count);
  for (uint16_t& value : values) {
    const float x = uniform(random);
    uint32_t bits = 0;
    std::memcpy(&bits, &x, sizeof(bits));
    value = static_cast<uint16_t>(bits >> 16);
  }
  return values;
}

constexpr int64_t kBf16Bytes = 2;

}  // namespace

absl::StatusOr<std::unique_ptr<GemmLoad>> GemmLoad::Create(const tools::CublasLibrary& cublas,
                                                           const std::vector<int>& devices,
                                                           const GemmShape& shape, uint64_t seed) {
  std::unique_ptr<GemmLoad> load(new GemmLoad(shape));
  load->devices_ = devices;
  const int64_t a_elems = shape.m * shape.k;
  const int64_t b_elems = shape.k * shape.n;
  const std::vector<uint16_t> host = RandomBf16(std::max(a_elems, b_elems), seed);
  for (int device : devices) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device), "cudaSetDevice"));
    cudaStream_t stream = nullptr;
    LTX_RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                                   "cudaStreamCreateWithFlags"));
    load->streams_.push_back(stream);
    Operands ops;
    LTX_RETURN_IF_ERROR(CudaStatus(cudaMalloc(&ops.a, a_elems * kBf16Bytes), "cudaMalloc"));
    load->operands_.push_back(ops);
    Operands& kept = load->operands_.back();
    LTX_RETURN_IF_ERROR(CudaStatus(cudaMalloc(&kept.b, b_elems * kBf16Bytes), "cudaMalloc"));
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaMalloc(&kept.c, shape.m * shape.n * kBf16Bytes), "cudaMalloc"));
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaMemcpy(kept.a, host.data(), a_elems * kBf16Bytes, cudaMemcpyHostToDevice),
                   "cudaMemcpy"));
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaMemcpy(kept.b, host.data(), b_elems * kBf16Bytes, cudaMemcpyHostToDevice),
                   "cudaMemcpy"));
    // The copies ran on the legacy stream, which `stream` does not wait for.
    LTX_RETURN_IF_ERROR(CudaStatus(cudaDeviceSynchronize(), "cudaDeviceSynchronize"));
    LTX_ASSIGN_OR_RETURN(std::unique_ptr<tools::CublasHandle> handle,
                         tools::CublasHandle::Create(cublas, device, stream));
    load->handles_.push_back(std::move(handle));
  }
  return load;
}

GemmLoad::~GemmLoad() {
  for (size_t rank = 0; rank < devices_.size(); ++rank) {
    cudaSetDevice(devices_[rank]);
    if (rank < streams_.size()) cudaStreamSynchronize(streams_[rank]);
    if (rank < handles_.size()) handles_[rank].reset();
    if (rank < operands_.size()) {
      cudaFree(operands_[rank].a);
      cudaFree(operands_[rank].b);
      cudaFree(operands_[rank].c);
    }
    if (rank < streams_.size()) cudaStreamDestroy(streams_[rank]);
  }
}

absl::Status GemmLoad::Enqueue(int rank, int calls) const {
  LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(devices_[rank]), "cudaSetDevice"));
  const Operands& ops = operands_[rank];
  for (int i = 0; i < calls; ++i) {
    LTX_RETURN_IF_ERROR(
        handles_[rank]->GemmBf16(shape_.m, shape_.n, shape_.k, ops.a, ops.b, ops.c));
  }
  return absl::OkStatus();
}

RankLoop GemmLoad::Loop() const {
  return [this](int rank, int calls) -> absl::Status {
    if (rank >= 0) return Enqueue(rank, calls);
    for (size_t r = 0; r < devices_.size(); ++r) {
      LTX_RETURN_IF_ERROR(Enqueue(static_cast<int>(r), calls));
    }
    return absl::OkStatus();
  };
}

}  // namespace ltx
