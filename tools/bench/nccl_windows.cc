// Allocating and registering NCCL's symmetric windows.
#include "tools/bench/nccl_windows.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"

namespace ltx::tools {
namespace {

constexpr int kNcclSuccess = 0;           // ncclSuccess.
constexpr int kNcclWinCollSymmetric = 1;  // NCCL_WIN_COLL_SYMMETRIC.

}  // namespace

absl::StatusOr<std::unique_ptr<NcclWindows>> NcclWindows::Create(
    const NcclLibrary& nccl, const NcclClique& clique, absl::Span<const int> devices,
    absl::Span<const size_t> buffer_bytes) {
  if (absl::Status available = nccl.WindowsAvailable(); !available.ok()) return available;
  if (static_cast<int>(devices.size()) != clique.world_size()) {
    return absl::InvalidArgumentError(absl::StrFormat("NcclWindows: %d devices for a clique of %d",
                                                      devices.size(), clique.world_size()));
  }
  std::unique_ptr<NcclWindows> windows(new NcclWindows(nccl, clique));
  int current = 0;
  cudaGetDevice(&current);
  // ncclMemAlloc allocates on the current device.
  for (size_t r = 0; r < devices.size(); ++r) {
    windows->ranks_.push_back(Rank{devices[r], {}, {}});
    Rank& rank = windows->ranks_.back();
    if (cudaSetDevice(devices[r]) != cudaSuccess) {
      cudaGetLastError();
      cudaSetDevice(current);
      return absl::InternalError(absl::StrFormat("cudaSetDevice(%d) failed", devices[r]));
    }
    for (size_t bytes : buffer_bytes) {
      void* buffer = nullptr;
      const int result = nccl.mem_alloc_(&buffer, std::max<size_t>(bytes, 1));
      if (result != kNcclSuccess) {
        cudaSetDevice(current);
        return absl::InternalError(absl::StrFormat("ncclMemAlloc(%d bytes) on rank %d failed: %s",
                                                   bytes, r, nccl.ErrorString(result)));
      }
      rank.buffers.push_back(buffer);
      rank.windows.push_back(nullptr);
    }
  }
  cudaSetDevice(current);
  // Registration is collective over the clique: one thread registers every rank's buffers in
  // one group.
  const absl::Status registered = clique.EachRankInGroup("ncclCommWindowRegister", [&](size_t r) {
    Rank& rank = windows->ranks_[r];
    for (size_t i = 0; i < rank.buffers.size(); ++i) {
      const int result = nccl.window_register_(clique.comms_[r], rank.buffers[i],
                                               std::max<size_t>(buffer_bytes[i], 1),
                                               &rank.windows[i], kNcclWinCollSymmetric);
      if (result != kNcclSuccess) return result;
    }
    return kNcclSuccess;
  });
  if (!registered.ok()) return registered;
  return windows;
}

NcclWindows::~NcclWindows() {
  int current = 0;
  cudaGetDevice(&current);
  for (size_t r = 0; r < ranks_.size(); ++r) {
    Rank& rank = ranks_[r];
    cudaSetDevice(rank.device);
    cudaDeviceSynchronize();
    for (size_t i = 0; i < rank.buffers.size(); ++i) {
      // Deregistering is local to the communicator (no group needed).
      if (rank.windows[i] != nullptr) nccl_.window_deregister_(clique_.comms_[r], rank.windows[i]);
      nccl_.mem_free_(rank.buffers[i]);
    }
  }
  cudaGetLastError();
  cudaSetDevice(current);
}

}  // namespace ltx::tools
