// Run-time binding to NCCL (libnccl.so.2) through dlopen, so that benchmark
// tools can compare against NCCL's AllGather in the same process without a
// build-time dependency on NCCL headers or libraries. Only the handful of
// entry points needed for a single-process AllGather clique, and the
// point-to-point calls of an all-to-all, are bound.
// Linking code that uses this needs -ldl (dlopen/dlsym/dlclose).

#ifndef TOOLS_BENCH_NCCL_LIBRARY_H_
#define TOOLS_BENCH_NCCL_LIBRARY_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace ltx::tools {

// Element types NCCL is asked to gather. AllGather copies bytes exactly, so
// only the element size matters, but the matching NCCL type is passed where
// NCCL has one.
enum class NcclType {
  kInt8,
  kUint8,
  kFloat16,
  kBfloat16,
  kFloat32,
  kFloat8E4M3,
  kFloat8E5M2,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kFloat64,
};

// Bytes of one element of `type`.
int NcclTypeSize(NcclType type);

// A loaded NCCL shared library with its entry points resolved. Not copyable.
// Must outlive every NcclClique created from it.
class NcclLibrary {
 public:
  // Loads `path` (a soname searched the usual dlopen way, or a file path, e.g.
  // taken from a flag or environment variable) with
  // dlopen(RTLD_NOW | RTLD_LOCAL) and resolves the NCCL symbols used here.
  // Errors: NotFound carrying dlerror() text if the library cannot be loaded;
  // Unimplemented naming the first missing symbol.
  static absl::StatusOr<std::unique_ptr<NcclLibrary>> Load(
      const std::string& path = "libnccl.so.2");

  NcclLibrary(const NcclLibrary&) = delete;
  NcclLibrary& operator=(const NcclLibrary&) = delete;
  // dlcloses the library.
  ~NcclLibrary();

  // The library's version as "major.minor.patch" (e.g. "2.28.3"), decoded from
  // ncclGetVersion; "unknown" if that call fails.
  std::string Version() const;

 private:
  friend class NcclClique;
  // NCCL's ABI: ncclResult_t and ncclDataType_t are C enums (int-sized),
  // ncclComm_t is an opaque pointer.
  using GetVersionFn = int (*)(int*);
  using GetErrorStringFn = const char* (*)(int);
  using CommInitAllFn = int (*)(void** comms, int ndev, const int* devlist);
  using CommDestroyFn = int (*)(void* comm);
  using GroupFn = int (*)();
  using AllGatherFn = int (*)(const void* sendbuff, void* recvbuff,
                              size_t sendcount, int datatype, void* comm,
                              cudaStream_t stream);
  using SendFn = int (*)(const void* sendbuff, size_t count, int datatype,
                         int peer, void* comm, cudaStream_t stream);
  using RecvFn = int (*)(void* recvbuff, size_t count, int datatype, int peer,
                         void* comm, cudaStream_t stream);

  explicit NcclLibrary(void* handle) : handle_(handle) {}
  // Returns NCCL's description of `result`.
  std::string ErrorString(int result) const;

  void* handle_;
  GetVersionFn get_version_ = nullptr;
  GetErrorStringFn get_error_string_ = nullptr;
  CommInitAllFn comm_init_all_ = nullptr;
  CommDestroyFn comm_destroy_ = nullptr;
  GroupFn group_start_ = nullptr;
  GroupFn group_end_ = nullptr;
  AllGatherFn all_gather_ = nullptr;
  // Null when the library predates ncclSend/ncclRecv (NCCL < 2.7).
  SendFn send_ = nullptr;
  RecvFn recv_ = nullptr;
};

// What one rank exchanges with one peer in an all-to-all, in bytes.
struct NcclPeerBytes {
  const void* send = nullptr;
  size_t send_bytes = 0;
  void* recv = nullptr;
  size_t recv_bytes = 0;
};

// A clique of NCCL communicators, one per device, created in this process with
// ncclCommInitAll. Rank r is devices[r]. Not copyable. Methods are not
// thread-safe with respect to each other.
class NcclClique {
 public:
  // `devices`: CUDA device ordinals in rank order (non-empty). `nccl` must
  // outlive the clique. Errors: InvalidArgument if `devices` is empty;
  // Internal with NCCL's error string if ncclCommInitAll fails.
  static absl::StatusOr<std::unique_ptr<NcclClique>> Create(
      const NcclLibrary& nccl, absl::Span<const int> devices);

  NcclClique(const NcclClique&) = delete;
  NcclClique& operator=(const NcclClique&) = delete;
  // Calls ncclCommDestroy on each communicator. The caller must first make
  // sure no enqueued work on the clique is still needed (e.g. sync streams).
  ~NcclClique();

  // Enqueues one ncclAllGather per rank inside ncclGroupStart/ncclGroupEnd,
  // all from the calling thread: rank r sends `count` elements of `type` from
  // device buffer inputs[r] and receives world_size() * count elements into
  // outputs[r], ordered by rank, on streams[r]. streams[r] must belong to
  // devices[r]. Does not synchronise. Errors: InvalidArgument if a span's
  // size differs from world_size(); Internal with NCCL's error string if an
  // NCCL call fails (the group is still closed).
  absl::Status AllGather(absl::Span<const void* const> inputs,
                         absl::Span<void* const> outputs, size_t count,
                         NcclType type,
                         absl::Span<const cudaStream_t> streams) const;

  // Enqueues an all-to-all of bytes inside ncclGroupStart/ncclGroupEnd, all
  // from the calling thread: rank r sends transfers[r][p].send_bytes from
  // .send to peer p and receives transfers[r][p].recv_bytes from p into .recv
  // (ncclSend/ncclRecv; empty transfers are skipped), on streams[r]. Does not
  // synchronise. Errors: InvalidArgument for spans of the wrong size;
  // Unimplemented if the library lacks ncclSend/ncclRecv; Internal with NCCL's
  // error string if an NCCL call fails (the group is still closed).
  absl::Status AllToAll(absl::Span<const std::vector<NcclPeerBytes>> transfers,
                        absl::Span<const cudaStream_t> streams) const;

  // Number of ranks (devices) in the clique.
  int world_size() const { return static_cast<int>(comms_.size()); }

 private:
  NcclClique(const NcclLibrary& nccl, std::vector<void*> comms)
      : nccl_(nccl), comms_(std::move(comms)) {}

  const NcclLibrary& nccl_;
  std::vector<void*> comms_;  // ncclComm_t per rank.
};

}  // namespace ltx::tools

#endif  // TOOLS_BENCH_NCCL_LIBRARY_H_
