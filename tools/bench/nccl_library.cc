// Implementation of the dlopen-based NCCL binding declared in
// nccl_library.h. The NCCL ABI values used here (ncclSuccess == 0, the
// ncclDataType_t numbering, int-sized enums, opaque ncclComm_t pointers)
// follow NCCL's public nccl.h; they have been stable since fp8 was added.

#include "tools/bench/nccl_library.h"

#include <dlfcn.h>

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

// Resolves `name` from `handle` into `*fn`, or returns Unimplemented.
template <typename Fn>
absl::Status Resolve(void* handle, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (*fn == nullptr) {
    return absl::UnimplementedError(
        absl::StrFormat("NCCL library lacks symbol %s", name));
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

absl::StatusOr<std::unique_ptr<NcclLibrary>> NcclLibrary::Load(
    const std::string& path) {
  dlerror();  // Clear any stale error.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::NotFoundError(absl::StrFormat(
        "cannot load NCCL from %s: %s", path, error ? error : "unknown"));
  }
  // Owns `handle` from here on, so early returns dlclose it.
  std::unique_ptr<NcclLibrary> lib(new NcclLibrary(handle));
  for (absl::Status status :
       {Resolve(handle, "ncclGetVersion", &lib->get_version_),
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
  return lib;
}

NcclLibrary::~NcclLibrary() { dlclose(handle_); }

std::string NcclLibrary::Version() const {
  int code = 0;
  if (get_version_(&code) != kNcclSuccess) return "unknown";
  // NCCL >= 2.9 encodes major*10000 + minor*100 + patch; older releases used
  // major*1000 + minor*100 + patch.
  const int major_scale = code >= 10000 ? 10000 : 1000;
  return absl::StrFormat("%d.%d.%d", code / major_scale,
                         code % major_scale / 100, code % 100);
}

std::string NcclLibrary::ErrorString(int result) const {
  const char* text = get_error_string_(result);
  return absl::StrFormat("NCCL error %d (%s)", result,
                         text ? text : "no description");
}

absl::StatusOr<std::unique_ptr<NcclClique>> NcclClique::Create(
    const NcclLibrary& nccl, absl::Span<const int> devices) {
  if (devices.empty()) {
    return absl::InvalidArgumentError("NcclClique needs at least one device");
  }
  std::vector<void*> comms(devices.size(), nullptr);
  const int result = nccl.comm_init_all_(
      comms.data(), static_cast<int>(devices.size()), devices.data());
  if (result != kNcclSuccess) {
    // The handles are left alone: they may be null or already released by
    // NCCL's group cleanup, and leaking beats a double free.
    return absl::InternalError("ncclCommInitAll failed: " +
                               nccl.ErrorString(result));
  }
  return std::unique_ptr<NcclClique>(new NcclClique(nccl, std::move(comms)));
}

NcclClique::~NcclClique() {
  for (void* comm : comms_) nccl_.comm_destroy_(comm);
}

absl::Status NcclClique::AllGather(
    absl::Span<const void* const> inputs, absl::Span<void* const> outputs,
    size_t count, NcclType type, absl::Span<const cudaStream_t> streams) const {
  const size_t n = comms_.size();
  if (inputs.size() != n || outputs.size() != n || streams.size() != n) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "AllGather needs %d inputs, outputs and streams; got %d, %d, %d", n,
        inputs.size(), outputs.size(), streams.size()));
  }
  int result = nccl_.group_start_();
  if (result != kNcclSuccess) {
    return absl::InternalError("ncclGroupStart failed: " +
                               nccl_.ErrorString(result));
  }
  const int datatype = ToNcclDataType(type);
  absl::Status status;
  for (size_t r = 0; r < n && status.ok(); ++r) {
    result = nccl_.all_gather_(inputs[r], outputs[r], count, datatype,
                               comms_[r], streams[r]);
    if (result != kNcclSuccess) {
      status = absl::InternalError(absl::StrFormat(
          "ncclAllGather on rank %d failed: %s", r, nccl_.ErrorString(result)));
    }
  }
  // Always close the group, even after a failed enqueue.
  result = nccl_.group_end_();
  if (status.ok() && result != kNcclSuccess) {
    status = absl::InternalError("ncclGroupEnd failed: " +
                                 nccl_.ErrorString(result));
  }
  return status;
}

absl::Status NcclClique::AllToAll(
    absl::Span<const std::vector<NcclPeerBytes>> transfers,
    absl::Span<const cudaStream_t> streams) const {
  const size_t n = comms_.size();
  if (transfers.size() != n || streams.size() != n) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "AllToAll needs %d transfer lists and streams; got %d, %d", n,
        transfers.size(), streams.size()));
  }
  for (const std::vector<NcclPeerBytes>& peers : transfers) {
    if (peers.size() != n) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "AllToAll needs %d peers per rank; got %d", n, peers.size()));
    }
  }
  if (nccl_.send_ == nullptr || nccl_.recv_ == nullptr) {
    return absl::UnimplementedError("NCCL library lacks ncclSend/ncclRecv");
  }
  int result = nccl_.group_start_();
  if (result != kNcclSuccess) {
    return absl::InternalError("ncclGroupStart failed: " +
                               nccl_.ErrorString(result));
  }
  const int bytes = ToNcclDataType(NcclType::kUint8);
  absl::Status status;
  for (size_t r = 0; r < n && status.ok(); ++r) {
    for (size_t p = 0; p < n && status.ok(); ++p) {
      const NcclPeerBytes& t = transfers[r][p];
      if (t.send_bytes > 0) {
        result = nccl_.send_(t.send, t.send_bytes, bytes, static_cast<int>(p),
                             comms_[r], streams[r]);
      }
      if (result == kNcclSuccess && t.recv_bytes > 0) {
        result = nccl_.recv_(t.recv, t.recv_bytes, bytes, static_cast<int>(p),
                             comms_[r], streams[r]);
      }
      if (result != kNcclSuccess) {
        status = absl::InternalError(
            absl::StrFormat("ncclSend/ncclRecv on rank %d, peer %d failed: %s",
                            r, p, nccl_.ErrorString(result)));
      }
    }
  }
  // Always close the group, even after a failed enqueue.
  result = nccl_.group_end_();
  if (status.ok() && result != kNcclSuccess) {
    status = absl::InternalError("ncclGroupEnd failed: " +
                                 nccl_.ErrorString(result));
  }
  return status;
}

}  // namespace ltx::tools
