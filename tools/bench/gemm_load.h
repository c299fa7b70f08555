// The compute load of the overlap run: one bf16 GEMM per GPU through cuBLAS (loaded at run
// time), on a stream of its own, with random operands, to run beside the AllGather.
#ifndef TOOLS_BENCH_GEMM_LOAD_H_
#define TOOLS_BENCH_GEMM_LOAD_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/bench/bench_timing.h"
#include "tools/bench/cublas_library.h"
#include "tools/bench/gemm_shape.h"

namespace ltx {

class GemmLoad {
 public:
  // Allocates A, B and C of `shape` on each of `devices` (rank order), fills A and B with
  // random bf16 values in [-1, 1) from `seed`, and makes a non-blocking stream and a cuBLAS
  // handle per GPU. `cublas` must outlive the load. Errors: as CUDA or cuBLAS report them.
  static absl::StatusOr<std::unique_ptr<GemmLoad>> Create(const tools::CublasLibrary& cublas,
                                                          const std::vector<int>& devices,
                                                          const GemmShape& shape, uint64_t seed);
  ~GemmLoad();
  GemmLoad(const GemmLoad&) = delete;
  GemmLoad& operator=(const GemmLoad&) = delete;

  // A RankLoop that enqueues `calls` GEMMs on rank `rank`'s stream (rank -1: on every rank, in
  // turn); it sets the device itself. Ranks may run on different threads at once; the load
  // must outlive the loop.
  RankLoop Loop() const;

  // The GEMM streams in rank order.
  const std::vector<cudaStream_t>& streams() const { return streams_; }

 private:
  struct Operands {
    void* a = nullptr;
    void* b = nullptr;
    void* c = nullptr;
  };
  explicit GemmLoad(const GemmShape& shape) : shape_(shape) {}
  absl::Status Enqueue(int rank, int calls) const;

  const GemmShape shape_;
  std::vector<int> devices_;
  std::vector<cudaStream_t> streams_;
  std::vector<Operands> operands_;
  std::vector<std::unique_ptr<tools::CublasHandle>> handles_;
};

}  // namespace ltx

#endif  // TOOLS_BENCH_GEMM_LOAD_H_
