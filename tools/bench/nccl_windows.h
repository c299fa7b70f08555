// NCCL's symmetric windows for a benchmark: buffers from ncclMemAlloc on every rank's GPU, each
// registered once with ncclCommWindowRegister(..., NCCL_WIN_COLL_SYMMETRIC) inside one group
// over all of a clique's communicators, so that NCCL (2.27 and later) may run its symmetric
// kernels between them, or (on communicators with a zero-CTA policy, 2.28) its copy-engine
// collectives. Deregistered and freed when destroyed.
#ifndef TOOLS_BENCH_NCCL_WINDOWS_H_
#define TOOLS_BENCH_NCCL_WINDOWS_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "tools/bench/nccl_library.h"

namespace ltx::tools {

class NcclWindows {
 public:
  // Allocates, on each rank r's GPU devices[r], one buffer per entry of `buffer_bytes` (at least
  // one byte each) and registers every buffer of every rank as a symmetric window of the
  // clique's communicator of that rank, all inside one ncclGroupStart/ncclGroupEnd. `nccl` and
  // `clique` must outlive the windows, and `devices` must be the clique's. Errors:
  // Unimplemented (with the version) where the library has no windows; InvalidArgument if
  // `devices` does not match the clique; Internal with NCCL's error string if an allocation or
  // the registration fails (what was made is released).
  static absl::StatusOr<std::unique_ptr<NcclWindows>> Create(const NcclLibrary& nccl,
                                                             const NcclClique& clique,
                                                             absl::Span<const int> devices,
                                                             absl::Span<const size_t> buffer_bytes);

  NcclWindows(const NcclWindows&) = delete;
  NcclWindows& operator=(const NcclWindows&) = delete;
  // Deregisters every window, then frees every buffer. The caller must first make sure no
  // enqueued work on them is still needed (e.g. sync streams).
  ~NcclWindows();

  // Rank `rank`'s buffer number `index` (an index into Create's `buffer_bytes`).
  void* buffer(int rank, int index) const { return ranks_[rank].buffers[index]; }

 private:
  struct Rank {
    int device = 0;
    std::vector<void*> buffers;  // From ncclMemAlloc.
    std::vector<void*> windows;  // ncclWindow_t per buffer; null: not registered.
  };
  NcclWindows(const NcclLibrary& nccl, const NcclClique& clique) : nccl_(nccl), clique_(clique) {}

  const NcclLibrary& nccl_;
  const NcclClique& clique_;
  std::vector<Rank> ranks_;
};

}  // namespace ltx::tools

#endif  // TOOLS_BENCH_NCCL_WINDOWS_H_
