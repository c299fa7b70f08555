// Buffers and checking for running AllGather cases on real GPUs, shared by the GPU tests and
// the ltx_allgather tool (so it is not testonly): random inputs (never all zeros), outputs
// poisoned before every call and surrounded by guard bytes, and a byte-exact comparison of every
// rank's output (the machinery is tools/testing/rank_areas.h; this adds the AllGather's shapes
// and expected output).
#ifndef LTX_TOOLS_TESTING_ALLGATHER_HARNESS_H_
#define LTX_TOOLS_TESTING_ALLGATHER_HARNESS_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ltx/collectives/allgather_layout.h"
#include "ltx/data_type.h"
#include "ltx/wire_format.h"
#include "tools/testing/rank_areas.h"

namespace ltx {

// One AllGather case: the shape, and how far each buffer is moved off the allocation's
// 256-byte alignment (to exercise the narrow copy paths).
struct AllGatherCase {
  DataType dtype = DataType::kBFloat16;
  int64_t batch = 1;
  int64_t hidden = 1;
  std::vector<int64_t> token_counts;
  int input_misalignment = 0;
  int output_misalignment = 0;
  // Each rank's input is its own tokens inside its output (batch 1 only): the output is
  // poisoned but for that slot, which holds the input.
  bool in_place = false;
  // How the rows travel: with FP8 on the wire every rank expects its peers' rows as
  // tools/testing/fp8_reference.h decodes them, its own exactly.
  WireFormat wire = WireFormat::kNative;

  // The shape to pass to the Runtime; it refers to this case's token_counts.
  AllGatherShape Shape() const;
  // E.g. "bf16 batch=3 hidden=4096 counts=[5,0,7,1] misalign=0/3" (" in-place" when it is).
  std::string ToString() const;
};

class AllGatherHarness {
 public:
  // Allocates on each GPU an input area of `input_capacity` bytes and an output area of
  // `output_capacity` bytes (plus misalignment room and guards), and a non-blocking stream
  // per rank unless `streams` lends them (RankAreas::Create). `seed` makes the data
  // reproducible. Errors: as CUDA reports them; InvalidArgument for a wrong count of streams.
  static absl::StatusOr<std::unique_ptr<AllGatherHarness>> Create(
      std::vector<int> devices, int64_t input_capacity, int64_t output_capacity, uint64_t seed,
      const std::vector<cudaStream_t>& streams = {});
  ~AllGatherHarness();

  AllGatherHarness(const AllGatherHarness&) = delete;
  AllGatherHarness& operator=(const AllGatherHarness&) = delete;

  int world_size() const { return areas_->world_size(); }

  // Makes `c` current: fresh random input on every rank, every output area (guards included)
  // poisoned with a fresh random byte, expected output computed on the host. Returns when the
  // GPUs hold it. ResourceExhausted if the case does not fit the capacities; InvalidArgument
  // for a shape ComputeAllGatherLayout rejects.
  absl::Status Prepare(const AllGatherCase& c);

  // Rank `rank`'s buffers for the current case, on the harness's stream of that rank.
  RankBuffers Buffers(int rank) const;
  std::vector<RankBuffers> AllBuffers() const;

  // Overwrites every rank's input with fresh random data (same shape, same buffers), updates
  // the expected output and poisons the outputs again; returns when the GPUs hold it. For
  // replays of captured calls with new data.
  absl::Status RefreshInputs();

  // Waits for every harness stream, then compares every rank's output with the expected bytes
  // and checks the guard bytes around it, and checks that every input and its guards are as
  // they were. DataLoss names the rank, the offset (with its batch slice and source rank) and
  // both byte values.
  absl::Status Verify();

  // Like Verify, but checks only the guard bytes around every output (and every input): for
  // calls that failed, where the output itself is undefined but nothing outside it may change.
  absl::Status VerifyGuards();

  // Waits for every harness stream.
  absl::Status SynchronizeStreams();

  // The current case's layout.
  const AllGatherLayout& layout() const { return layout_; }

 private:
  explicit AllGatherHarness(std::unique_ptr<RankAreas> areas);
  absl::Status Check(bool check_data);

  std::unique_ptr<RankAreas> areas_;
  AllGatherCase case_;
  AllGatherLayout layout_;
  std::vector<std::vector<uint8_t>> inputs_;  // Each rank's, as uploaded.
  std::vector<uint8_t> expected_;  // Every rank's output (the native wire).
  // With FP8 on the wire, each rank's: its peers' rows decoded, its own exact.
  std::vector<std::vector<uint8_t>> expected_by_rank_;
};

}  // namespace ltx

#endif  // LTX_TOOLS_TESTING_ALLGATHER_HARNESS_H_
