// Run-time binding to NCCL (libnccl.so.2) through dlopen, so that benchmark
// tools can compare against NCCL's collectives in the same process without a
// build-time dependency on NCCL headers or libraries. Only the handful of
// entry points needed for a single-process AllGather clique, the
// point-to-point calls of an all-to-all, the reductions (ncclAllReduce,
// ncclReduceScatter), and the newer entry points of NCCL's
// faster modes (ncclMemAlloc and symmetric windows, 2.27; communicators with a
// zero-CTA policy for copy-engine collectives, and ncclAlltoAll, 2.28) are
// bound. Entry points a release lacks stay unbound and the modes that need
// them say so (WindowsAvailable, CopyEngineAvailable).
// Linking code that uses this needs -ldl (dlopen/dlsym/dlclose).

#ifndef TOOLS_BENCH_NCCL_LIBRARY_H_
#define TOOLS_BENCH_NCCL_LIBRARY_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "tools/bench/nccl_version.h"

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

// The reductions NCCL is asked for (ncclRedOp_t's ncclSum, ncclMax, ncclMin).
enum class NcclReduction {
  kSum,
  kMax,
  kMin,
};

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
  // The same, decoded; 0.0.0 if ncclGetVersion fails.
  NcclVersion DecodedVersion() const;

  // OK if this NCCL can allocate with ncclMemAlloc and register symmetric
  // windows (2.27 and later); else Unimplemented saying what it lacks, e.g.
  // "NCCL 2.21.5 has no symmetric windows (they need 2.27)".
  absl::Status WindowsAvailable() const;
  // OK if this NCCL has ncclAllReduce and ncclReduceScatter; else Unimplemented
  // naming the first it lacks.
  absl::Status ReductionsAvailable() const;
  // OK if this NCCL has copy-engine collectives (2.28 and later: windows, a
  // communicator config with a CTA policy, ncclAlltoAll); else Unimplemented
  // saying what it lacks.
  absl::Status CopyEngineAvailable() const;

 private:
  friend class NcclClique;
  friend class NcclWindows;
  // ncclUniqueId, passed by value to ncclCommInitRankConfig.
  struct UniqueId {
    char internal[128];
  };
  // NCCL's ABI: ncclResult_t and ncclDataType_t are C enums (int-sized),
  // ncclComm_t is an opaque pointer.
  using GetVersionFn = int (*)(int*);
  using GetErrorStringFn = const char* (*)(int);
  using CommInitAllFn = int (*)(void** comms, int ndev, const int* devlist);
  using CommDestroyFn = int (*)(void* comm);
  using GroupFn = int (*)();
  using AllGatherFn = int (*)(const void* sendbuff, void* recvbuff, size_t sendcount, int datatype,
                              void* comm, cudaStream_t stream);
  using SendFn = int (*)(const void* sendbuff, size_t count, int datatype, int peer, void* comm,
                         cudaStream_t stream);
  using RecvFn = int (*)(void* recvbuff, size_t count, int datatype, int peer, void* comm,
                         cudaStream_t stream);
  using MemAllocFn = int (*)(void** ptr, size_t size);
  using MemFreeFn = int (*)(void* ptr);
  using WindowRegisterFn = int (*)(void* comm, void* buff, size_t size, void** win, int win_flags);
  using WindowDeregisterFn = int (*)(void* comm, void* win);
  using GetUniqueIdFn = int (*)(UniqueId* id);
  using CommInitRankConfigFn = int (*)(void** comm, int nranks, UniqueId id, int rank,
                                       void* config);
  using AlltoAllFn = int (*)(const void* sendbuff, void* recvbuff, size_t count, int datatype,
                             void* comm, cudaStream_t stream);
  // ncclAllReduce and ncclReduceScatter; `op` is an ncclRedOp_t (an int-sized C enum).
  using ReduceFn = int (*)(const void* sendbuff, void* recvbuff, size_t count, int datatype, int op,
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
  // Null where the library predates them (see WindowsAvailable and
  // CopyEngineAvailable).
  MemAllocFn mem_alloc_ = nullptr;
  MemFreeFn mem_free_ = nullptr;
  WindowRegisterFn window_register_ = nullptr;
  WindowDeregisterFn window_deregister_ = nullptr;
  GetUniqueIdFn get_unique_id_ = nullptr;
  CommInitRankConfigFn comm_init_rank_config_ = nullptr;
  AlltoAllFn all_to_all_ = nullptr;
  // Null where the library lacks them (see ReductionsAvailable).
  ReduceFn all_reduce_ = nullptr;
  ReduceFn reduce_scatter_ = nullptr;
};

// How a clique's communicators are made.
struct NcclCliqueOptions {
  // Communicators with NCCL_CTA_POLICY_ZERO in their config (ncclCommInitRankConfig):
  // NCCL 2.28 then runs ncclAllGather and ncclAlltoAll between buffers of
  // symmetric windows on the copy engines. Needs CopyEngineAvailable().
  bool zero_cta_policy = false;
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
  // outlive the clique. Without options, ncclCommInitAll makes the
  // communicators; with zero_cta_policy, ncclGetUniqueId and one
  // ncclCommInitRankConfig per rank inside one group. Errors: InvalidArgument
  // if `devices` is empty; Unimplemented if the options need entry points the
  // library lacks; Internal with NCCL's error string if NCCL fails.
  static absl::StatusOr<std::unique_ptr<NcclClique>> Create(const NcclLibrary& nccl,
                                                            absl::Span<const int> devices,
                                                            const NcclCliqueOptions& options = {});

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
  absl::Status AllGather(absl::Span<const void* const> inputs, absl::Span<void* const> outputs,
                         size_t count, NcclType type, absl::Span<const cudaStream_t> streams) const;

  // Enqueues an all-to-all of bytes inside ncclGroupStart/ncclGroupEnd, all
  // from the calling thread: rank r sends transfers[r][p].send_bytes from
  // .send to peer p and receives transfers[r][p].recv_bytes from p into .recv
  // (ncclSend/ncclRecv; empty transfers are skipped), on streams[r]. Does not
  // synchronise. Errors: InvalidArgument for spans of the wrong size;
  // Unimplemented if the library lacks ncclSend/ncclRecv; Internal with NCCL's
  // error string if an NCCL call fails (the group is still closed).
  absl::Status AllToAll(absl::Span<const std::vector<NcclPeerBytes>> transfers,
                        absl::Span<const cudaStream_t> streams) const;

  // Enqueues one ncclAlltoAll of bytes per rank inside one group, from the
  // calling thread: rank r sends `bytes_per_peer` bytes from sends[r] + p *
  // bytes_per_peer to each peer p, and receives p's into recvs[r] + p *
  // bytes_per_peer, on streams[r]. Does not synchronise. Errors:
  // InvalidArgument for spans of the wrong size; Unimplemented if the library
  // lacks ncclAlltoAll (before 2.28); Internal with NCCL's error string.
  absl::Status AlltoAll(absl::Span<const void* const> sends, absl::Span<void* const> recvs,
                        size_t bytes_per_peer, absl::Span<const cudaStream_t> streams) const;

  // Enqueues one ncclAllReduce per rank inside one group, from the calling
  // thread: rank r reduces `count` elements of `type` from inputs[r] into
  // outputs[r] with `reduction`, on streams[r]. Does not synchronise. Errors:
  // InvalidArgument for spans of the wrong size; Unimplemented if the library
  // lacks ncclAllReduce; Internal with NCCL's error string.
  absl::Status AllReduce(absl::Span<const void* const> inputs, absl::Span<void* const> outputs,
                         size_t count, NcclType type, NcclReduction reduction,
                         absl::Span<const cudaStream_t> streams) const;

  // Enqueues one ncclReduceScatter per rank inside one group, from the
  // calling thread: rank r's input holds world_size() * `recv_count` elements
  // of `type`, and rank r receives into outputs[r] the `reduction` over every
  // rank of the input's block r (`recv_count` elements), on streams[r]. Does
  // not synchronise. Errors: as AllReduce's, naming ncclReduceScatter.
  absl::Status ReduceScatter(absl::Span<const void* const> inputs, absl::Span<void* const> outputs,
                             size_t recv_count, NcclType type, NcclReduction reduction,
                             absl::Span<const cudaStream_t> streams) const;

  // Number of ranks (devices) in the clique.
  int world_size() const { return static_cast<int>(comms_.size()); }

 private:
  friend class NcclWindows;
  NcclClique(const NcclLibrary& nccl, std::vector<void*> comms)
      : nccl_(nccl), comms_(std::move(comms)) {}
  // Runs `enqueue` between ncclGroupStart and ncclGroupEnd, closing the group
  // even when it fails; the first error, NCCL's with `what` in it.
  absl::Status InGroup(const char* what, const std::function<absl::Status()>& enqueue) const;
  // InGroup over every rank: call(rank) for each, in rank order, stopping at
  // the first that does not return ncclSuccess (Internal "`what` on rank r
  // failed: <NCCL's error>").
  absl::Status EachRankInGroup(const char* what, const std::function<int(size_t rank)>& call) const;
  // One `fn` (ncclAllReduce or ncclReduceScatter, named `what`) per rank in
  // one group, each with `count` elements; the errors of AllReduce.
  absl::Status Reduce(const char* what, NcclLibrary::ReduceFn fn,
                      absl::Span<const void* const> inputs, absl::Span<void* const> outputs,
                      size_t count, NcclType type, NcclReduction reduction,
                      absl::Span<const cudaStream_t> streams) const;

  const NcclLibrary& nccl_;
  std::vector<void*> comms_;  // ncclComm_t per rank.
};

}  // namespace ltx::tools

#endif  // TOOLS_BENCH_NCCL_LIBRARY_H_
