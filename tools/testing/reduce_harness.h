// Buffers and checking for running AllReduce and ReduceScatter cases on real GPUs (testonly):
// random inputs of the case's dtype (never zero, full mantissas, so that the order of the
// reduction shows in the bits), outputs poisoned before every call and surrounded by guard
// bytes, every call style, and a bitwise comparison of every rank's output with the host
// reference (tools/testing/reduce_reference.h). The machinery is tools/testing/rank_areas.h.
#ifndef LTX_TOOLS_TESTING_REDUCE_HARNESS_H_
#define LTX_TOOLS_TESTING_REDUCE_HARNESS_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ltx/collectives/reduce_layout.h"
#include "ltx/runtime.h"
#include "tools/testing/gpu_fixture.h"
#include "tools/testing/rank_areas.h"

namespace ltx {

// One reduction case: the collective and its shape, and how far each buffer is moved off the
// allocation's alignment (a multiple of the element size: to exercise the scalar paths).
struct ReduceCase {
  Collective collective = Collective::kAllReduce;
  DataType dtype = DataType::kBFloat16;
  Reduction reduction = Reduction::kSum;
  int64_t count = 1;  // The AllReduce's.
  // The ReduceScatter's.
  int64_t batch = 1;
  int64_t hidden = 1;
  std::vector<int64_t> token_counts;
  int input_misalignment = 0;
  int output_misalignment = 0;
  // AllReduce only: every rank's input is its output (the output area holds the input).
  bool in_place = false;

  // The shapes to pass to the Runtime; the ReduceScatter's refers to this case's token_counts.
  AllReduceShape AllReduceShapeOf() const;
  ReduceScatterShape ReduceScatterShapeOf() const;
  // E.g. "all_reduce bf16 sum count=1001 misalign=0/2 in-place".
  std::string ToString() const;
};

class ReduceHarness {
 public:
  // Allocates on each GPU of `devices` an input and an output area of `capacity` bytes each
  // (plus misalignment room and guards), and a non-blocking stream. `seed` makes the data
  // reproducible. Errors: as CUDA reports them.
  static absl::StatusOr<std::unique_ptr<ReduceHarness>> Create(std::vector<int> devices,
                                                               int64_t capacity, uint64_t seed);

  int world_size() const { return areas_->world_size(); }

  // Makes `c` current: fresh random inputs, every output area poisoned, the expected outputs
  // computed on the host. Returns when the GPUs hold it. InvalidArgument for a shape the layout
  // rejects; ResourceExhausted where it does not fit the areas.
  absl::Status Prepare(const ReduceCase& c);

  // Fresh random inputs for the current case (same buffers), outputs poisoned again.
  absl::Status RefreshInputs();

  // Rank `rank`'s buffers for the current case, on the harness's stream of that rank.
  RankBuffers Buffers(int rank) const;
  std::vector<RankBuffers> AllBuffers() const;

  // Enqueues the current case's reduction on `ranks` (every rank if empty) in `style`:
  // coordinated, or per-rank calls from one thread per rank. Does not wait.
  absl::Status Launch(Runtime& runtime, CallStyle style, const CallOptions& call = {},
                      std::vector<int> ranks = {});

  // The per-rank call of rank `rank` for the current case.
  absl::Status RankCall(Runtime& runtime, int rank, const CallOptions& call);

  // Waits for every harness stream, then compares every rank's output bit for bit with the
  // host reference and checks the guard bytes around it, and that every input (unless in
  // place) is as it was. DataLoss names the rank and the element.
  absl::Status Verify();

 private:
  ReduceHarness(std::unique_ptr<RankAreas> areas, uint64_t seed);

  std::unique_ptr<RankAreas> areas_;
  std::mt19937_64 random_;
  ReduceCase case_;
  ReduceLayout layout_;
  std::vector<std::vector<uint8_t>> inputs_;
};

// Prepare, Launch on every rank, wait (Synchronize, kTestWait) and Verify.
absl::Status RunAndVerify(Runtime& runtime, ReduceHarness& harness, const ReduceCase& c,
                          CallStyle style, const CallOptions& call = {});

}  // namespace ltx

#endif  // LTX_TOOLS_TESTING_REDUCE_HARNESS_H_
