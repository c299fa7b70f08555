// Implementation of the dlopen-based NCCL binding declared in
// nccl_library.h. The NCCL ABI values used here (ncclSuccess == 0, the
// ncclDataType_t numbering, int-sized enums, opaque ncclComm_t pointers)
// follow NCCL's public nccl.h; they have been stable since fp8 was added. So
// does the layout of the communicator config (ncclConfig_t as of 2.27, which
// later releases extend at its end and accept by its size and version field).

#include "tools/bench/nccl_library.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <climits>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"

namespace ltx::tools {
namespace {

constexpr int kNcclSuccess = 0;  // ncclSuccess.

// ncclConfig_t as NCCL 2.27 declares it (ncclConfig_v22700); what it does not
// set is NCCL_CONFIG_UNDEF_INT or null, which asks for NCCL's default.
struct NcclConfig2_27 {
  size_t size = sizeof(NcclConfig2_27);
  unsigned int magic = 0xcafebeef;  // What NCCL_CONFIG_INITIALIZER sets.
  unsigned int version = 22700;     // NCCL_VERSION(2, 27, 0).
  int blocking = INT_MIN;
  int cga_cluster_size = INT_MIN;
  int min_ctas = INT_MIN;
  int max_ctas = INT_MIN;
  const char* net_name = nullptr;
  int split_share = INT_MIN;
  int traffic_class = INT_MIN;
  const char* comm_name = nullptr;
  int collnet_enable = INT_MIN;
  int cta_policy = INT_MIN;
  int shrink_share = INT_MIN;
  int nvls_ctas = INT_MIN;
};

constexpr int kNcclCtaPolicyZero = 2;  // NCCL_CTA_POLICY_ZERO.

// Maps to ncclDataType_t values from nccl.h.
int ToNcclDataType(NcclType type) {
  switch (type) {
    case NcclType::kInt8:
      return 0;  // ncclInt8
    case NcclType::kUint8:
      return 1;  // ncclUint8
    case NcclType::kFloat16:
      return 6;  // ncclFloat16
    case NcclType::kBfloat16:
      return 9;  // ncclBfloat16
    case NcclType::kFloat32:
      return 7;  // ncclFloat32
    case NcclType::kFloat8E4M3:
      return 10;  // ncclFloat8e4m3
    case NcclType::kFloat8E5M2:
      return 11;  // ncclFloat8e5m2
    case NcclType::kInt32:
      return 2;  // ncclInt32
    case NcclType::kUint32:
      return 3;  // ncclUint32
    case NcclType::kInt64:
      return 4;  // ncclInt64
    case NcclType::kUint64:
      return 5;  // ncclUint64
    case NcclType::kFloat64:
      return 8;  // ncclFloat64
  }
  return -1;
}

// Maps to ncclRedOp_t values from nccl.h.
int ToNcclRedOp(NcclReduction reduction) {
  switch (reduction) {
    case NcclReduction::kSum:
      return 0;  // ncclSum
    case NcclReduction::kMax:
      return 2;  // ncclMax
    case NcclReduction::kMin:
      return 3;  // ncclMin
  }
  return -1;
}

// Resolves `name` from `handle` into `*fn`, or returns Unimplemented.
template <typename Fn>
absl::Status Resolve(void* handle, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (*fn == nullptr) {
    return absl::UnimplementedError(absl::StrFormat("NCCL library lacks symbol %s", name));
  }
  return absl::OkStatus();
}

}  // namespace

int NcclTypeSize(NcclType type) {
  switch (type) {
    case NcclType::kInt8:
    case NcclType::kUint8:
    case NcclType::kFloat8E4M3:
    case NcclType::kFloat8E5M2:
      return 1;
    case NcclType::kFloat16:
    case NcclType::kBfloat16:
      return 2;
    case NcclType::kFloat32:
    case NcclType::kInt32:
    case NcclType::kUint32:
      return 4;
    case NcclType::kInt64:
    case NcclType::kUint64:
    case NcclType::kFloat64:
      return 8;
  }
  return 1;
}

absl::StatusOr<std::unique_ptr<NcclLibrary>> NcclLibrary::Load(const std::string& path) {
  dlerror();  // Clear any stale error.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::NotFoundError(
        absl::StrFormat("cannot load NCCL from %s: %s", path, error ? error : "unknown"));
  }
  // Owns `handle` from here on, so early returns dlclose it.
  std::unique_ptr<NcclLibrary> lib(new NcclLibrary(handle));
  for (absl::Status status : {Resolve(handle, "ncclGetVersion", &lib->get_version_),
                              Resolve(handle, "ncclGetErrorString", &lib->get_error_string_),
                              Resolve(handle, "ncclCommInitAll", &lib->comm_init_all_),
                              Resolve(handle, "ncclCommDestroy", &lib->comm_destroy_),
                              Resolve(handle, "ncclGroupStart", &lib->group_start_),
                              Resolve(handle, "ncclGroupEnd", &lib->group_end_),
                              Resolve(handle, "ncclAllGather", &lib->all_gather_)}) {
    if (!status.ok()) return status;
  }
  // Optional: only the all-to-all needs them.
  if (!Resolve(handle, "ncclSend", &lib->send_).ok() ||
      !Resolve(handle, "ncclRecv", &lib->recv_).ok()) {
    lib->send_ = nullptr;
    lib->recv_ = nullptr;
  }
  // Optional: the newer modes. Each stays null where missing; the
  // availability checks name what is.
  Resolve(handle, "ncclMemAlloc", &lib->mem_alloc_).IgnoreError();
  Resolve(handle, "ncclMemFree", &lib->mem_free_).IgnoreError();
  Resolve(handle, "ncclCommWindowRegister", &lib->window_register_).IgnoreError();
  Resolve(handle, "ncclCommWindowDeregister", &lib->window_deregister_).IgnoreError();
  Resolve(handle, "ncclGetUniqueId", &lib->get_unique_id_).IgnoreError();
  Resolve(handle, "ncclCommInitRankConfig", &lib->comm_init_rank_config_).IgnoreError();
  Resolve(handle, "ncclAlltoAll", &lib->all_to_all_).IgnoreError();
  // Optional: only the reductions' benchmark needs them (ReductionsAvailable).
  Resolve(handle, "ncclAllReduce", &lib->all_reduce_).IgnoreError();
  Resolve(handle, "ncclReduceScatter", &lib->reduce_scatter_).IgnoreError();
  return lib;
}

NcclLibrary::~NcclLibrary() { dlclose(handle_); }

NcclVersion NcclLibrary::DecodedVersion() const {
  int code = 0;
  if (get_version_(&code) != kNcclSuccess) return NcclVersion{};
  return DecodeNcclVersion(code);
}

std::string NcclLibrary::Version() const {
  const NcclVersion version = DecodedVersion();
  return version.major == 0 ? "unknown" : version.ToString();
}

absl::Status NcclLibrary::WindowsAvailable() const {
  const NcclVersion version = DecodedVersion();
  if (!version.AtLeast(kNcclWindowsSince.major, kNcclWindowsSince.minor)) {
    return absl::UnimplementedError(
        absl::StrFormat("NCCL %s has no symmetric windows (they need %d.%d)", version.ToString(),
                        kNcclWindowsSince.major, kNcclWindowsSince.minor));
  }
  for (const auto& [fn, name] :
       {std::pair<const void*, const char*>{reinterpret_cast<const void*>(mem_alloc_),
                                            "ncclMemAlloc"},
        {reinterpret_cast<const void*>(mem_free_), "ncclMemFree"},
        {reinterpret_cast<const void*>(window_register_), "ncclCommWindowRegister"},
        {reinterpret_cast<const void*>(window_deregister_), "ncclCommWindowDeregister"}}) {
    if (fn == nullptr) {
      return absl::UnimplementedError(
          absl::StrFormat("NCCL %s lacks %s: no symmetric windows", version.ToString(), name));
    }
  }
  return absl::OkStatus();
}

absl::Status NcclLibrary::ReductionsAvailable() const {
  if (all_reduce_ == nullptr) return absl::UnimplementedError("NCCL library lacks ncclAllReduce");
  if (reduce_scatter_ == nullptr) {
    return absl::UnimplementedError("NCCL library lacks ncclReduceScatter");
  }
  return absl::OkStatus();
}

absl::Status NcclLibrary::CopyEngineAvailable() const {
  const NcclVersion version = DecodedVersion();
  if (!version.AtLeast(kNcclCopyEngineSince.major, kNcclCopyEngineSince.minor)) {
    return absl::UnimplementedError(absl::StrFormat(
        "NCCL %s has no copy-engine collectives (they need %d.%d)", version.ToString(),
        kNcclCopyEngineSince.major, kNcclCopyEngineSince.minor));
  }
  if (absl::Status windows = WindowsAvailable(); !windows.ok()) return windows;
  if (get_unique_id_ == nullptr || comm_init_rank_config_ == nullptr || all_to_all_ == nullptr) {
    return absl::UnimplementedError(
        absl::StrFormat("NCCL %s lacks ncclGetUniqueId, ncclCommInitRankConfig or "
                        "ncclAlltoAll: no copy-engine collectives",
                        version.ToString()));
  }
  // NCCL runs its copy-engine collectives only on a CUDA 12.5 driver or later.
  int driver = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver < 12050) {
    return absl::UnimplementedError(
        absl::StrFormat("the CUDA driver (%d.%d) is older than 12.5, which NCCL's copy-engine "
                        "collectives need",
                        driver / 1000, driver % 1000 / 10));
  }
  return absl::OkStatus();
}

std::string NcclLibrary::ErrorString(int result) const {
  const char* text = get_error_string_(result);
  return absl::StrFormat("NCCL error %d (%s)", result, text ? text : "no description");
}

absl::StatusOr<std::unique_ptr<NcclClique>> NcclClique::Create(const NcclLibrary& nccl,
                                                               absl::Span<const int> devices,
                                                               const NcclCliqueOptions& options) {
  if (devices.empty()) {
    return absl::InvalidArgumentError("NcclClique needs at least one device");
  }
  std::vector<void*> comms(devices.size(), nullptr);
  if (!options.zero_cta_policy) {
    const int result =
        nccl.comm_init_all_(comms.data(), static_cast<int>(devices.size()), devices.data());
    if (result != kNcclSuccess) {
      // The handles are left alone: they may be null or already released by
      // NCCL's group cleanup, and leaking beats a double free.
      return absl::InternalError("ncclCommInitAll failed: " + nccl.ErrorString(result));
    }
    return std::unique_ptr<NcclClique>(new NcclClique(nccl, std::move(comms)));
  }
  if (absl::Status available = nccl.CopyEngineAvailable(); !available.ok()) {
    return available;
  }
  NcclLibrary::UniqueId id{};
  int result = nccl.get_unique_id_(&id);
  if (result != kNcclSuccess) {
    return absl::InternalError("ncclGetUniqueId failed: " + nccl.ErrorString(result));
  }
  NcclConfig2_27 config;
  config.cta_policy = kNcclCtaPolicyZero;
  int device = 0;
  cudaGetDevice(&device);
  // Every rank's init joins the others', so one thread issues them in a group.
  result = nccl.group_start_();
  for (size_t r = 0; r < devices.size() && result == kNcclSuccess; ++r) {
    if (cudaSetDevice(devices[r]) != cudaSuccess) {
      cudaGetLastError();
      result = -1;
      break;
    }
    result = nccl.comm_init_rank_config_(&comms[r], static_cast<int>(devices.size()), id,
                                         static_cast<int>(r), &config);
  }
  const int ended = nccl.group_end_();
  cudaSetDevice(device);
  if (result == kNcclSuccess) result = ended;
  if (result != kNcclSuccess) {
    // As above: the handles are left alone.
    return absl::InternalError(
        "ncclCommInitRankConfig (CTA policy zero) failed: " +
        (result < 0 ? std::string("cudaSetDevice failed") : nccl.ErrorString(result)));
  }
  return std::unique_ptr<NcclClique>(new NcclClique(nccl, std::move(comms)));
}

NcclClique::~NcclClique() {
  for (void* comm : comms_) nccl_.comm_destroy_(comm);
}

absl::Status NcclClique::InGroup(const char* what,
                                 const std::function<absl::Status()>& enqueue) const {
  int result = nccl_.group_start_();
  if (result != kNcclSuccess) {
    return absl::InternalError(
        absl::StrFormat("ncclGroupStart (%s) failed: %s", what, nccl_.ErrorString(result)));
  }
  absl::Status status = enqueue();
  // Always close the group, even after a failed enqueue.
  result = nccl_.group_end_();
  if (status.ok() && result != kNcclSuccess) {
    status = absl::InternalError(
        absl::StrFormat("ncclGroupEnd (%s) failed: %s", what, nccl_.ErrorString(result)));
  }
  return status;
}

absl::Status NcclClique::EachRankInGroup(const char* what,
                                         const std::function<int(size_t rank)>& call) const {
  return InGroup(what, [&]() -> absl::Status {
    for (size_t r = 0; r < comms_.size(); ++r) {
      const int result = call(r);
      if (result != kNcclSuccess) {
        return absl::InternalError(
            absl::StrFormat("%s on rank %d failed: %s", what, r, nccl_.ErrorString(result)));
      }
    }
    return absl::OkStatus();
  });
}

absl::Status NcclClique::AllGather(absl::Span<const void* const> inputs,
                                   absl::Span<void* const> outputs, size_t count, NcclType type,
                                   absl::Span<const cudaStream_t> streams) const {
  const size_t n = comms_.size();
  if (inputs.size() != n || outputs.size() != n || streams.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrFormat("AllGather needs %d inputs, outputs and streams; got %d, %d, %d", n,
                        inputs.size(), outputs.size(), streams.size()));
  }
  const int datatype = ToNcclDataType(type);
  return EachRankInGroup("ncclAllGather", [&](size_t r) {
    return nccl_.all_gather_(inputs[r], outputs[r], count, datatype, comms_[r], streams[r]);
  });
}

absl::Status NcclClique::AllToAll(absl::Span<const std::vector<NcclPeerBytes>> transfers,
                                  absl::Span<const cudaStream_t> streams) const {
  const size_t n = comms_.size();
  if (transfers.size() != n || streams.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrFormat("AllToAll needs %d transfer lists and streams; got %d, %d", n,
                        transfers.size(), streams.size()));
  }
  for (const std::vector<NcclPeerBytes>& peers : transfers) {
    if (peers.size() != n) {
      return absl::InvalidArgumentError(
          absl::StrFormat("AllToAll needs %d peers per rank; got %d", n, peers.size()));
    }
  }
  if (nccl_.send_ == nullptr || nccl_.recv_ == nullptr) {
    return absl::UnimplementedError("NCCL library lacks ncclSend/ncclRecv");
  }
  const int bytes = ToNcclDataType(NcclType::kUint8);
  return InGroup("ncclSend/ncclRecv", [&]() -> absl::Status {
    for (size_t r = 0; r < n; ++r) {
      for (size_t p = 0; p < n; ++p) {
        const NcclPeerBytes& t = transfers[r][p];
        int result = kNcclSuccess;
        if (t.send_bytes > 0) {
          result =
              nccl_.send_(t.send, t.send_bytes, bytes, static_cast<int>(p), comms_[r], streams[r]);
        }
        if (result == kNcclSuccess && t.recv_bytes > 0) {
          result =
              nccl_.recv_(t.recv, t.recv_bytes, bytes, static_cast<int>(p), comms_[r], streams[r]);
        }
        if (result != kNcclSuccess) {
          return absl::InternalError(absl::StrFormat(
              "ncclSend/ncclRecv on rank %d, peer %d failed: %s", r, p, nccl_.ErrorString(result)));
        }
      }
    }
    return absl::OkStatus();
  });
}

absl::Status NcclClique::AlltoAll(absl::Span<const void* const> sends,
                                  absl::Span<void* const> recvs, size_t bytes_per_peer,
                                  absl::Span<const cudaStream_t> streams) const {
  const size_t n = comms_.size();
  if (sends.size() != n || recvs.size() != n || streams.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrFormat("AlltoAll needs %d sends, receives and streams; got %d, %d, %d", n,
                        sends.size(), recvs.size(), streams.size()));
  }
  if (nccl_.all_to_all_ == nullptr) {
    return absl::UnimplementedError(
        absl::StrFormat("NCCL %s lacks ncclAlltoAll (it needs 2.28)", nccl_.Version()));
  }
  const int bytes = ToNcclDataType(NcclType::kUint8);
  return EachRankInGroup("ncclAlltoAll", [&](size_t r) {
    return nccl_.all_to_all_(sends[r], recvs[r], bytes_per_peer, bytes, comms_[r], streams[r]);
  });
}

absl::Status NcclClique::Reduce(const char* what, NcclLibrary::ReduceFn fn,
                                absl::Span<const void* const> inputs,
                                absl::Span<void* const> outputs, size_t count, NcclType type,
                                NcclReduction reduction,
                                absl::Span<const cudaStream_t> streams) const {
  const size_t n = comms_.size();
  if (inputs.size() != n || outputs.size() != n || streams.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s needs %d inputs, outputs and streams; got %d, %d, %d", what, n,
                        inputs.size(), outputs.size(), streams.size()));
  }
  if (fn == nullptr) {
    return absl::UnimplementedError(absl::StrFormat("NCCL library lacks %s", what));
  }
  const int datatype = ToNcclDataType(type);
  const int op = ToNcclRedOp(reduction);
  return EachRankInGroup(what, [&](size_t r) {
    return fn(inputs[r], outputs[r], count, datatype, op, comms_[r], streams[r]);
  });
}

absl::Status NcclClique::AllReduce(absl::Span<const void* const> inputs,
                                   absl::Span<void* const> outputs, size_t count, NcclType type,
                                   NcclReduction reduction,
                                   absl::Span<const cudaStream_t> streams) const {
  return Reduce("ncclAllReduce", nccl_.all_reduce_, inputs, outputs, count, type, reduction,
                streams);
}

absl::Status NcclClique::ReduceScatter(absl::Span<const void* const> inputs,
                                       absl::Span<void* const> outputs, size_t recv_count,
                                       NcclType type, NcclReduction reduction,
                                       absl::Span<const cudaStream_t> streams) const {
  return Reduce("ncclReduceScatter", nccl_.reduce_scatter_, inputs, outputs, recv_count, type,
                reduction, streams);
}

}  // namespace ltx::tools
