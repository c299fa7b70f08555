// The dlopen-based cuBLAS binding declared in cublas_library.h. The ABI values used here
// (CUBLAS_STATUS_SUCCESS == 0, CUBLAS_OP_N == 0, CUDA_R_16BF == 14, CUBLAS_COMPUTE_32F == 68,
// CUBLAS_GEMM_DEFAULT == -1, int-sized enums, opaque handles) follow cuBLAS's public
// cublas_api.h and library_types.h.
#include "tools/bench/cublas_library.h"

#include <dlfcn.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tools/bench/cublas_paths.h"

namespace ltx::tools {
namespace {

constexpr int kCublasSuccess = 0;  // CUBLAS_STATUS_SUCCESS.
constexpr int kOpN = 0;            // CUBLAS_OP_N.
constexpr int kBfloat16 = 14;      // CUDA_R_16BF.
constexpr int kCompute32F = 68;    // CUBLAS_COMPUTE_32F.
constexpr int kGemmDefault = -1;   // CUBLAS_GEMM_DEFAULT.

// Resolves `name` from `handle` into `*fn`, or returns Unimplemented naming it.
template <typename Fn>
absl::Status Resolve(void* handle, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (*fn == nullptr) {
    return absl::UnimplementedError(absl::StrFormat("lacks symbol %s", name));
  }
  return absl::OkStatus();
}

std::string DlError() {
  const char* error = dlerror();
  return error != nullptr ? error : "unknown";
}

}  // namespace

absl::StatusOr<std::unique_ptr<CublasLibrary>> CublasLibrary::Load(
    const std::vector<std::string>& candidates) {
  std::vector<std::string> reasons;
  for (const std::string& candidate : candidates) {
    std::unique_ptr<CublasLibrary> lib(new CublasLibrary());
    const absl::Status opened = lib->Open(candidate);
    if (opened.ok()) return lib;
    reasons.push_back(absl::StrCat(candidate, ": ", opened.message()));
  }
  return absl::NotFoundError(absl::StrCat("cannot load cuBLAS (give --cublas=PATH or LTX_CUBLAS); ",
                                          absl::StrJoin(reasons, "; ")));
}

absl::Status CublasLibrary::Open(const std::string& candidate) {
  const std::string dir = DirectoryOf(candidate);
  dlerror();
  if (!dir.empty()) {
    // The wheels' libcublas finds its libcublasLt by RPATH; loading it first also covers
    // copies without one. A failure here shows up when libcublas itself is opened.
    lt_handle_ = dlopen(absl::StrCat(dir, "/", kCublasLtSoname).c_str(), RTLD_NOW | RTLD_GLOBAL);
  }
  handle_ = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) return absl::NotFoundError(DlError());
  path_ = candidate;
  for (absl::Status status : {Resolve(handle_, "cublasCreate_v2", &create_),
                              Resolve(handle_, "cublasDestroy_v2", &destroy_),
                              Resolve(handle_, "cublasSetStream_v2", &set_stream_),
                              Resolve(handle_, "cublasGetStatusString", &get_status_string_),
                              Resolve(handle_, "cublasGemmEx", &gemm_ex_)}) {
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

CublasLibrary::~CublasLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
  if (lt_handle_ != nullptr) dlclose(lt_handle_);
}

std::string CublasLibrary::ErrorString(int status) const {
  const char* text = get_status_string_(status);
  return absl::StrFormat("cuBLAS error %d (%s)", status, text != nullptr ? text : "no text");
}

absl::StatusOr<std::unique_ptr<CublasHandle>> CublasHandle::Create(const CublasLibrary& cublas,
                                                                   int device,
                                                                   cudaStream_t stream) {
  const cudaError_t set = cudaSetDevice(device);
  if (set != cudaSuccess) {
    return absl::InternalError(absl::StrCat("cudaSetDevice: ", cudaGetErrorString(set)));
  }
  void* raw = nullptr;
  const int created = cublas.create_(&raw);
  if (created != kCublasSuccess) {
    return absl::InternalError("cublasCreate: " + cublas.ErrorString(created));
  }
  std::unique_ptr<CublasHandle> handle(new CublasHandle(cublas, raw));
  const int bound = cublas.set_stream_(raw, stream);
  if (bound != kCublasSuccess) {
    return absl::InternalError("cublasSetStream: " + cublas.ErrorString(bound));
  }
  return handle;
}

CublasHandle::~CublasHandle() { cublas_.destroy_(handle_); }

absl::Status CublasHandle::GemmBf16(int64_t m, int64_t n, int64_t k, const void* a, const void* b,
                                    void* c) const {
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const int status = cublas_.gemm_ex_(handle_, kOpN, kOpN, static_cast<int>(m), static_cast<int>(n),
                                      static_cast<int>(k), &alpha, a, kBfloat16,
                                      static_cast<int>(m), b, kBfloat16, static_cast<int>(k), &beta,
                                      c, kBfloat16, static_cast<int>(m), kCompute32F, kGemmDefault);
  if (status != kCublasSuccess) {
    return absl::InternalError("cublasGemmEx: " + cublas_.ErrorString(status));
  }
  return absl::OkStatus();
}

}  // namespace ltx::tools
