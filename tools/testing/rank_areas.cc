// GPU areas, random data, poisoning and byte-exact checks for collective cases.
#include "tools/testing/rank_areas.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ltx/cuda/cuda_status.h"
#include "ltx/status_macros.h"

namespace ltx {
namespace {

int64_t AreaBytes(int64_t capacity) {
  return kGuardBytes + kMisalignmentRoom + capacity + kGuardBytes;
}

}  // namespace

RankAreas::RankAreas(int64_t input_capacity, int64_t output_capacity, uint64_t seed)
    : input_capacity_(input_capacity), output_capacity_(output_capacity), random_(seed) {}

absl::StatusOr<std::unique_ptr<RankAreas>> RankAreas::Create(
    std::vector<int> devices, int64_t input_capacity, int64_t output_capacity, uint64_t seed,
    const std::vector<cudaStream_t>& streams) {
  if (!streams.empty() && streams.size() != devices.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d streams lent for %d ranks: lend one per rank or none", streams.size(), devices.size()));
  }
  std::unique_ptr<RankAreas> areas(new RankAreas(input_capacity, output_capacity, seed));
  for (int device : devices) {
    areas->ranks_.push_back(Rank());
    Rank& r = areas->ranks_.back();
    r.device = device;
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(device), "cudaSetDevice"));
    if (!streams.empty()) {
      r.stream = streams[areas->ranks_.size() - 1];
    } else {
      LTX_RETURN_IF_ERROR(CudaStatus(
          cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking), "cudaStreamCreate"));
      r.owns_stream = true;
    }
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaMalloc(reinterpret_cast<void**>(&r.input_area), AreaBytes(input_capacity)),
                   absl::StrFormat("cudaMalloc(input, GPU %d)", device)));
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaMalloc(reinterpret_cast<void**>(&r.output_area), AreaBytes(output_capacity)),
                   absl::StrFormat("cudaMalloc(output, GPU %d)", device)));
  }
  return areas;
}

RankAreas::~RankAreas() {
  for (Rank& r : ranks_) {
    cudaSetDevice(r.device);
    if (r.stream != nullptr) cudaStreamSynchronize(r.stream);
    cudaFree(r.input_area);
    cudaFree(r.output_area);
    if (r.owns_stream) cudaStreamDestroy(r.stream);
  }
  cudaGetLastError();
}

absl::Status RankAreas::CheckMisalignment(int input_misalignment, int output_misalignment) {
  if (input_misalignment < 0 || input_misalignment >= kMisalignmentRoom ||
      output_misalignment < 0 || output_misalignment >= kMisalignmentRoom) {
    return absl::InvalidArgumentError(
        absl::StrFormat("misalignment must be in [0, %d)", kMisalignmentRoom));
  }
  return absl::OkStatus();
}

void RankAreas::FillRandom(std::vector<uint8_t>* bytes) {
  size_t i = 0;
  for (; i + 8 <= bytes->size(); i += 8) {
    const uint64_t word = random_();
    std::memcpy(bytes->data() + i, &word, 8);
  }
  const uint64_t word = random_();
  std::memcpy(bytes->data() + i, &word, bytes->size() - i);
}

absl::Status RankAreas::UploadAndPoison(const std::vector<std::vector<uint8_t>>& inputs,
                                        int misalignment) {
  LTX_RETURN_IF_ERROR(Poison(Area::kInput));
  for (int rank = 0; rank < world_size(); ++rank) {
    Rank& r = ranks_[rank];
    if (inputs[rank].empty()) continue;
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(r.device), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaMemcpyAsync(r.input_area + kGuardBytes + misalignment, inputs[rank].data(),
                                   inputs[rank].size(), cudaMemcpyHostToDevice, r.stream),
                   "cudaMemcpyAsync(input)"));
  }
  return Poison(Area::kOutput);
}

absl::Status RankAreas::Poison(Area area) {
  // A fresh poison byte per call, so a stale output from an earlier call cannot pass.
  uint8_t& current = poison_[static_cast<int>(area)];
  uint8_t poison = current;
  while (poison == current || poison == 0) poison = static_cast<uint8_t>(random_());
  current = poison;
  for (Rank& r : ranks_) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(r.device), "cudaSetDevice"));
    LTX_RETURN_IF_ERROR(
        CudaStatus(cudaMemsetAsync(AreaOf(r, area), poison, AreaBytes(CapacityOf(area)), r.stream),
                   "cudaMemsetAsync(poison)"));
  }
  return SynchronizeStreams();
}

RankBuffers RankAreas::Buffers(int rank, int input_misalignment, int output_misalignment,
                               bool swapped) const {
  const Rank& r = ranks_[rank];
  RankBuffers buffers;
  buffers.input =
      AreaOf(r, swapped ? Area::kOutput : Area::kInput) + kGuardBytes + input_misalignment;
  buffers.output =
      AreaOf(r, swapped ? Area::kInput : Area::kOutput) + kGuardBytes + output_misalignment;
  buffers.stream = r.stream;
  return buffers;
}

absl::Status RankAreas::CopyInputIntoOutput(int rank, int input_misalignment,
                                            int output_misalignment, int64_t output_offset,
                                            int64_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  const RankBuffers separate = Buffers(rank, input_misalignment, output_misalignment);
  const Rank& r = ranks_[rank];
  LTX_RETURN_IF_ERROR(CudaStatus(
      cudaMemcpyAsync(static_cast<uint8_t*>(separate.output) + output_offset, separate.input,
                      bytes, cudaMemcpyDefault, r.stream),
      absl::StrFormat("rank %d: in-place input", rank)));
  return CudaStatus(cudaStreamSynchronize(r.stream),
                    absl::StrFormat("rank %d: in-place input", rank));
}

absl::Status RankAreas::SynchronizeStreams() {
  for (Rank& r : ranks_) {
    LTX_RETURN_IF_ERROR(CudaStatus(cudaStreamSynchronize(r.stream),
                                   absl::StrFormat("cudaStreamSynchronize(GPU %d)", r.device)));
  }
  return absl::OkStatus();
}

absl::Status RankAreas::CheckArea(Area area, int rank, int misalignment,
                                  absl::Span<const uint8_t> expected, bool check_data,
                                  const std::string& what,
                                  const std::function<std::string(int64_t)>& describe) {
  LTX_RETURN_IF_ERROR(SynchronizeStreams());
  const Rank& r = ranks_[rank];
  const char* const name = area == Area::kInput ? "input" : "output";
  const uint8_t poison = poison_[static_cast<int>(area)];
  const int64_t bytes = static_cast<int64_t>(expected.size());
  const int64_t before = kGuardBytes + misalignment;
  const int64_t checked = before + bytes + kGuardBytes;
  std::vector<uint8_t> found(checked);
  LTX_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(r.device), "cudaSetDevice"));
  LTX_RETURN_IF_ERROR(
      CudaStatus(cudaMemcpy(found.data(), AreaOf(r, area), checked, cudaMemcpyDeviceToHost),
                 absl::StrFormat("cudaMemcpy(%s)", name)));
  for (int64_t i = 0; i < checked; ++i) {
    const bool guard = i < before || i >= before + bytes;
    if (!guard && !check_data) continue;
    const uint8_t want = guard ? poison : expected[i - before];
    if (found[i] == want) continue;
    if (guard) {
      return absl::DataLossError(absl::StrFormat(
          "%s: something wrote outside rank %d's (GPU %d) %s: guard byte at offset %d is %#x, "
          "poison %#x",
          what, rank, r.device, name, i - before, found[i], want));
    }
    return absl::DataLossError(absl::StrFormat(
        "%s: rank %d (GPU %d) %s byte %d (%s) is %#x, expected %#x (poison %#x)", what, rank,
        r.device, name, i - before, describe(i - before), found[i], want, poison));
  }
  return absl::OkStatus();
}

absl::Status RankAreas::CheckInput(Area area, int rank, int misalignment,
                                   absl::Span<const uint8_t> expected, const std::string& what) {
  return CheckArea(area, rank, misalignment, expected, /*check_data=*/true,
                   absl::StrCat(what, " (an input the op must leave as it was)"),
                   [](int64_t) { return std::string("input"); });
}

}  // namespace ltx
