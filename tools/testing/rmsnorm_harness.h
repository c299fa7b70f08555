// Buffers and checking for running the AllReduce with the fused RMSNorm epilogue on real GPUs
// (testonly): per rank an input, output, residual, residual_out and weight, random inputs per
// rank and per case (the residual and the weight the same on every rank, as a tensor-parallel
// layer has them), outputs poisoned before every case and followed by guard bytes, and a bitwise
// comparison of every rank's outputs with the host reference (tools/testing/reduce_reference.h).
#ifndef LTX_TOOLS_TESTING_RMSNORM_HARNESS_H_
#define LTX_TOOLS_TESTING_RMSNORM_HARNESS_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ltx/allreduce_rmsnorm.h"
#include "ltx/rank_buffers.h"

namespace ltx {

// One case of the epilogue: its shape, whether residual_out is the residual itself, and by how
// many elements every buffer starts past its allocation (1: off 16-byte alignment).
struct RmsNormCase {
  AllReduceRmsNormShape shape;
  bool residual_in_place = false;
  int offset = 0;
  std::string ToString() const;
};

class RmsNormHarness {
 public:
  // Five buffers of `capacity` bytes (plus guards) and a non-blocking stream per rank of
  // `devices`; `seed` makes the data reproducible. Errors: CUDA's.
  static absl::StatusOr<std::unique_ptr<RmsNormHarness>> Create(std::vector<int> devices,
                                                                int64_t capacity, uint64_t seed);
  ~RmsNormHarness();
  RmsNormHarness(const RmsNormHarness&) = delete;
  RmsNormHarness& operator=(const RmsNormHarness&) = delete;

  // New random inputs, residual and weight for `c`, uploaded and waited for; every output
  // poisoned (residual_out too unless it is the residual). InvalidArgument when `c` does not
  // fit the capacity.
  absl::Status Prepare(const RmsNormCase& c);

  // Rank `rank`'s buffers for the current case, on its stream; every rank's.
  RmsNormBuffers Buffers(int rank) const;
  std::vector<RmsNormBuffers> AllBuffers() const;
  // The ranks' streams (as RankBuffers with only the stream set, for the graph and timing
  // helpers), and their input and output as RankBuffers (for timing another collective on the
  // same buffers).
  std::vector<RankBuffers> Streams() const;
  std::vector<RankBuffers> InputsAndOutputs() const;

  // Waits for every rank's stream, then compares every rank's residual_out and output with the
  // host reference bit for bit, and checks its input, the residual (unless updated in place)
  // and the weight unchanged and the guards past the outputs still poisoned. Internal naming
  // the rank, the buffer and the first wrong byte.
  absl::Status Verify() const;

 private:
  enum Area { kInput = 0, kOutput, kResidual, kResidualOut, kWeight, kAreas };
  struct Rank {
    int device = -1;
    cudaStream_t stream = nullptr;
    uint8_t* areas[kAreas] = {};
  };

  RmsNormHarness(std::vector<int> devices, int64_t capacity, uint64_t seed);
  // Where buffer `area` of rank `r` starts for the current case.
  uint8_t* At(const Rank& r, Area area) const;

  const std::vector<int> devices_;
  const int64_t capacity_;
  std::mt19937_64 random_;
  std::vector<Rank> ranks_;
  RmsNormCase case_;
  std::vector<std::vector<uint8_t>> inputs_;
  std::vector<uint8_t> residual_;
  std::vector<uint8_t> weight_;
};

}  // namespace ltx

#endif  // LTX_TOOLS_TESTING_RMSNORM_HARNESS_H_
