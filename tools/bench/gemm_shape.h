// The shape of the GEMM that the benchmarks run beside a collective (the GEMM load), and its
// form on the command line.
#ifndef TOOLS_BENCH_GEMM_SHAPE_H_
#define TOOLS_BENCH_GEMM_SHAPE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ltx {

// The GEMM each GPU runs: C (m x n) = A (m x k) * B (k x n), bf16 in and out, fp32 accumulation.
struct GemmShape {
  int64_t m = 8192;
  int64_t n = 8192;
  int64_t k = 8192;

  // Floating-point operations of one GEMM: 2 m n k.
  double Flops() const { return 2.0 * m * n * k; }
};

// "M,N,K" with each a number in [1, 2^31 - 1]; else InvalidArgument quoting the text.
absl::StatusOr<GemmShape> ParseGemmShape(absl::string_view text);

}  // namespace ltx

#endif  // TOOLS_BENCH_GEMM_SHAPE_H_
