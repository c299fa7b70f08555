// Run-time binding to cuBLAS (libcublas.so.13) through dlopen, so that ltx_allgather can run a
// GEMM beside the AllGather without a build-time dependency on cuBLAS: the tool runs on
// machines whose only cuBLAS is the one inside PyTorch's wheels. Only the entry points of a
// bf16 GEMM on a stream are bound. Linking code that uses this needs -ldl.
#ifndef TOOLS_BENCH_CUBLAS_LIBRARY_H_
#define TOOLS_BENCH_CUBLAS_LIBRARY_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ltx::tools {

// A loaded cuBLAS with its entry points resolved. Not copyable; must outlive every CublasHandle
// made from it.
class CublasLibrary {
 public:
  // Tries each of `candidates` (CublasCandidates) in order with dlopen(RTLD_NOW | RTLD_LOCAL),
  // first loading libcublasLt.so.13 from the same directory when the candidate is a path, and
  // keeps the first that loads with every symbol. NotFound listing each candidate's dlerror()
  // (or missing symbol) when none does.
  static absl::StatusOr<std::unique_ptr<CublasLibrary>> Load(
      const std::vector<std::string>& candidates);

  CublasLibrary(const CublasLibrary&) = delete;
  CublasLibrary& operator=(const CublasLibrary&) = delete;
  // dlcloses the libraries.
  ~CublasLibrary();

  // The file that was loaded (as given in the candidates).
  const std::string& path() const { return path_; }

 private:
  friend class CublasHandle;
  // cuBLAS's ABI: cublasStatus_t and the enums are int-sized, cublasHandle_t is opaque.
  using CreateFn = int (*)(void** handle);
  using DestroyFn = int (*)(void* handle);
  using SetStreamFn = int (*)(void* handle, cudaStream_t stream);
  using GetStatusStringFn = const char* (*)(int status);
  using GemmExFn = int (*)(void* handle, int transa, int transb, int m, int n, int k,
                           const void* alpha, const void* a, int a_type, int lda, const void* b,
                           int b_type, int ldb, const void* beta, void* c, int c_type, int ldc,
                           int compute_type, int algo);

  CublasLibrary() = default;
  // Loads one candidate into this object; the error says why it did not.
  absl::Status Open(const std::string& candidate);
  // "cuBLAS error N (text)".
  std::string ErrorString(int status) const;

  std::string path_;
  void* lt_handle_ = nullptr;
  void* handle_ = nullptr;
  CreateFn create_ = nullptr;
  DestroyFn destroy_ = nullptr;
  SetStreamFn set_stream_ = nullptr;
  GetStatusStringFn get_status_string_ = nullptr;
  GemmExFn gemm_ex_ = nullptr;
};

// One cuBLAS handle on one GPU, bound to one stream. Not copyable; use it from one thread at a
// time, with its device current.
class CublasHandle {
 public:
  // Creates a handle on `device` (made current) that enqueues on `stream`. Internal with
  // cuBLAS's error text if cublasCreate or cublasSetStream fails.
  static absl::StatusOr<std::unique_ptr<CublasHandle>> Create(const CublasLibrary& cublas,
                                                              int device, cudaStream_t stream);
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  ~CublasHandle();

  // Enqueues C = A * B (column-major; A is m x k, B is k x n, C is m x n; all bf16, fp32
  // accumulation) on the handle's stream. The handle's device must be current. Internal with
  // cuBLAS's error text if cublasGemmEx refuses.
  absl::Status GemmBf16(int64_t m, int64_t n, int64_t k, const void* a, const void* b,
                        void* c) const;

 private:
  CublasHandle(const CublasLibrary& cublas, void* handle) : cublas_(cublas), handle_(handle) {}
  const CublasLibrary& cublas_;
  void* handle_;
};

}  // namespace ltx::tools

#endif  // TOOLS_BENCH_CUBLAS_LIBRARY_H_
