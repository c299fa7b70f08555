// GPU buffers, random data, poisoning and byte-exact checks for AllGather cases.
#include "tools/testing/allgather_harness.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ltx/cuda_status.h"
#include "ltx/status_macros.h"

namespace ltx {
namespace {

// Room for moving a buffer off its allocation's alignment.
constexpr int64_t kMisalignmentRoom = 64;

int64_t AreaBytes(int64_t capacity) { return kGuardBytes + kMisalignmentRoom + capacity + kGuardBytes; }

}  // namespace

AllGatherShape AllGatherCase::Shape() const {
  AllGatherShape shape;
  shape.dtype = dtype;
  shape.batch = batch;
  shape.hidden = hidden;
  shape.token_counts = token_counts;
  return shape;
}

std::string AllGatherCase::ToString() const {
  return absl::StrFormat("%s batch=%d hidden=%d counts=[%s] misalign=%d/%d", DataTypeName(dtype),
                         batch, hidden, absl::StrJoin(token_counts, ","), input_misalignment,
                         output_misalignment);
}

AllGatherHarness::AllGatherHarness(int64_t input_capacity, int64_t output_capacity, uint64_t seed)
    : input_capacity_(input_capacity), output_capacity_(output_capacity), random_(seed) {}

absl::StatusOr<std::unique_ptr<AllGatherHarness>> AllGatherHarness::Create(
    std::vector<int> devices, int64_t input_capacity, int64_t output_capacity, uint64_t seed) {
  std::unique_ptr<AllGatherHarness> harness(
      new AllGatherHarness(input_capacity, output_capacity, seed));
  for (int device : devices) {
    Rank rank;
    rank.device = device;
    harness->ranks_.push_back(rank);
    Rank& r = harness->ranks_.back();
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking),
                                   "cudaStreamCreate"));
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaMalloc(reinterpret_cast<void**>(&r.input_area), AreaBytes(input_capacity)),
        absl::StrFormat("cudaMalloc(input, GPU %d)", device)));
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaMalloc(reinterpret_cast<void**>(&r.output_area), AreaBytes(output_capacity)),
        absl::StrFormat("cudaMalloc(output, GPU %d)", device)));
  }
  return harness;
}

AllGatherHarness::~AllGatherHarness() {
  for (Rank& r : ranks_) {
    cudaSetDevice(r.device);
    if (r.stream != nullptr) cudaStreamSynchronize(r.stream);
    cudaFree(r.input_area);
    cudaFree(r.output_area);
    if (r.stream != nullptr) cudaStreamDestroy(r.stream);
  }
  cudaGetLastError();
}

void AllGatherHarness::FillRandom(std::vector<uint8_t>* bytes) {
  size_t i = 0;
  for (; i + 8 <= bytes->size(); i += 8) {
    const uint64_t word = random_();
    std::memcpy(bytes->data() + i, &word, 8);
  }
  const uint64_t word = random_();
  std::memcpy(bytes->data() + i, &word, bytes->size() - i);
}

absl::Status AllGatherHarness::Prepare(const AllGatherCase& c) {
  case_ = c;
  LTX_ASSIGN_OR_RETURN(layout_, ComputeLayout(case_.Shape(), world_size()));
  if (c.input_misalignment < 0 || c.input_misalignment >= kMisalignmentRoom ||
      c.output_misalignment < 0 || c.output_misalignment >= kMisalignmentRoom) {
    return absl::InvalidArgumentError(
        absl::StrFormat("misalignment must be in [0, %d)", kMisalignmentRoom));
  }
  if (layout_.output_bytes > output_capacity_) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "case %s needs %d output bytes, the harness holds %d", c.ToString(),
        layout_.output_bytes, output_capacity_));
  }
  for (int rank = 0; rank < world_size(); ++rank) {
    if (layout_.InputBytes(rank) > input_capacity_) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "case %s needs %d input bytes on rank %d, the harness holds %d", c.ToString(),
          layout_.InputBytes(rank), rank, input_capacity_));
    }
  }
  return RefreshInputs();
}

absl::Status AllGatherHarness::RefreshInputs() {
  const int64_t row = layout_.row_bytes;
  expected_.assign(layout_.output_bytes, 0);
  for (int rank = 0; rank < world_size(); ++rank) {
    Rank& r = ranks_[rank];
    r.input_host.resize(layout_.InputBytes(rank));
    FillRandom(&r.input_host);
    const int64_t slice = layout_.token_counts[rank] * row;
    for (int64_t b = 0; b < layout_.batch; ++b) {
      std::memcpy(expected_.data() + (b * layout_.total_tokens + layout_.prefix_tokens[rank]) * row,
                  r.input_host.data() + b * slice, slice);
    }
  }
  LTX_RETURN_IF_ERROR(UploadInputs());
  return PoisonOutputs();
}

absl::Status AllGatherHarness::UploadInputs() {
  for (Rank& r : ranks_) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(r.device), "cudaSetDevice"));
    if (r.input_host.empty()) continue;
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaMemcpyAsync(r.input_area + kGuardBytes + case_.input_misalignment, r.input_host.data(),
                        r.input_host.size(), cudaMemcpyHostToDevice, r.stream),
        "cudaMemcpyAsync(input)"));
  }
  return SynchronizeStreams();
}

absl::Status AllGatherHarness::PoisonOutputs() {
  // A fresh poison byte per call, so a stale output from an earlier call cannot pass.
  uint8_t poison = poison_;
  while (poison == poison_ || poison == 0) poison = static_cast<uint8_t>(random_());
  poison_ = poison;
  for (Rank& r : ranks_) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(r.device), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaMemsetAsync(r.output_area, poison_, AreaBytes(output_capacity_), r.stream),
        "cudaMemsetAsync(poison)"));
  }
  return SynchronizeStreams();
}

RankBuffers AllGatherHarness::Buffers(int rank) const {
  const Rank& r = ranks_[rank];
  RankBuffers buffers;
  buffers.input = r.input_area + kGuardBytes + case_.input_misalignment;
  buffers.output = r.output_area + kGuardBytes + case_.output_misalignment;
  buffers.stream = r.stream;
  return buffers;
}

std::vector<RankBuffers> AllGatherHarness::AllBuffers() const {
  std::vector<RankBuffers> all;
  for (int rank = 0; rank < world_size(); ++rank) all.push_back(Buffers(rank));
  return all;
}

absl::Status AllGatherHarness::SynchronizeStreams() {
  for (Rank& r : ranks_) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaStreamSynchronize(r.stream),
                                   absl::StrFormat("cudaStreamSynchronize(GPU %d)", r.device)));
  }
  return absl::OkStatus();
}

absl::Status AllGatherHarness::Verify() { return Check(/*check_data=*/true); }

absl::Status AllGatherHarness::VerifyGuards() { return Check(/*check_data=*/false); }

absl::Status AllGatherHarness::Check(bool check_data) {
  LTX_RETURN_IF_ERROR(SynchronizeStreams());
  const int64_t before = kGuardBytes + case_.output_misalignment;
  const int64_t checked = before + layout_.output_bytes + kGuardBytes;
  std::vector<uint8_t> found(checked);
  for (int rank = 0; rank < world_size(); ++rank) {
    Rank& r = ranks_[rank];
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(r.device), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(CudaStatus(
        cudaMemcpy(found.data(), r.output_area, checked, cudaMemcpyDeviceToHost),
        "cudaMemcpy(output)"));
    for (int64_t i = 0; i < checked; ++i) {
      const bool guard = i < before || i >= before + layout_.output_bytes;
      if (!guard && !check_data) continue;
      const uint8_t want = guard ? poison_ : expected_[i - before];
      if (found[i] == want) continue;
      if (guard) {
        return absl::DataLossError(absl::StrFormat(
            "%s: rank %d (GPU %d) wrote outside its output: guard byte at offset %d is %#x, "
            "poison %#x",
            case_.ToString(), rank, r.device, i - before, found[i], want));
      }
      const int64_t offset = i - before;
      const int64_t token = offset / layout_.row_bytes % layout_.total_tokens;
      int source = 0;
      while (source + 1 < world_size() && layout_.prefix_tokens[source + 1] <= token) ++source;
      return absl::DataLossError(absl::StrFormat(
          "%s: rank %d (GPU %d) output byte %d (batch %d, token %d from rank %d) is %#x, "
          "expected %#x (poison %#x)",
          case_.ToString(), rank, r.device, offset,
          offset / (layout_.row_bytes * layout_.total_tokens), token, source, found[i], want,
          poison_));
    }
  }
  return absl::OkStatus();
}

}  // namespace ltx
