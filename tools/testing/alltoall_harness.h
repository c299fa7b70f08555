// Buffers and checking for running all-to-all cases on real GPUs, shared by the GPU tests and
// the ltx_alltoall tool: random inputs, outputs poisoned before every call and surrounded by
// guard bytes (tools/testing/rank_areas.h), a host reference of every rank's output, a byte-exact
// comparison, and the inverse op on the output of the previous one (round trips).
#ifndef LTX_TOOLS_TESTING_ALLTOALL_HARNESS_H_
#define LTX_TOOLS_TESTING_ALLTOALL_HARNESS_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ltx/collectives/alltoall_layout.h"
#include "ltx/data_type.h"
#include "ltx/rank_buffers.h"
#include "ltx/wire_format.h"
#include "tools/testing/rank_areas.h"

namespace ltx {

// One all-to-all case: the shape, and how far each buffer is moved off the allocation's
// 256-byte alignment (to exercise the narrow copy paths).
struct AllToAllCase {
  DataType dtype = DataType::kBFloat16;
  int64_t batch = 1;
  int64_t heads = 1;
  int64_t head_dim = 1;
  std::vector<int64_t> token_counts;
  AllToAllDirection direction = AllToAllDirection::kSeqToHeads;
  // Empty: the even split.
  std::vector<int64_t> head_counts;
  int input_misalignment = 0;
  int output_misalignment = 0;
  // How the head vectors travel: with FP8 on the wire every rank expects the head vectors of its
  // peers' pieces as tools/testing/fp8_reference.h decodes them, its own piece exactly.
  WireFormat wire = WireFormat::kNative;

  // The shape to pass to the Runtime; it refers to this case's token_counts and head_counts.
  AllToAllShape Shape() const;
  // E.g. "seq->heads bf16 batch=1 heads=32 head_dim=128 counts=[5,0,7,1] misalign=0/3", with
  // " head_counts=[...]" after the counts for an uneven split.
  std::string ToString() const;
};

// Every rank's output of the all-to-all of `layout` on `inputs` (one per rank), computed on
// the host from the tensor definitions alone; with FP8 on the wire (layout.wire), each head
// vector a rank receives from a peer as the receiver decodes it.
std::vector<std::vector<uint8_t>> AllToAllReference(
    const AllToAllLayout& layout, const std::vector<std::vector<uint8_t>>& inputs);

class AllToAllHarness {
 public:
  // Allocates on each GPU an input area of `input_capacity` bytes and an output area of
  // `output_capacity` bytes (plus misalignment room and guards), and a stream per rank unless
  // `streams` lends them (RankAreas::Create). `seed` makes the data reproducible. Errors: as
  // CUDA reports them; InvalidArgument for a wrong count of streams.
  static absl::StatusOr<std::unique_ptr<AllToAllHarness>> Create(
      std::vector<int> devices, int64_t input_capacity, int64_t output_capacity, uint64_t seed,
      const std::vector<cudaStream_t>& streams = {});

  int world_size() const { return areas_->world_size(); }

  // Makes `c` current: fresh random input on every rank, every output area (guards included)
  // poisoned with a fresh random byte, expected outputs computed on the host. Returns when the
  // GPUs hold it. ResourceExhausted if the case does not fit the capacities (both areas must
  // hold inputs and outputs, for round trips); InvalidArgument for a shape
  // ComputeAllToAllLayout rejects.
  absl::Status Prepare(const AllToAllCase& c);

  // Overwrites every rank's input with fresh random data, updates the expected outputs and
  // poisons the outputs again (for replays of captured calls with new data). After
  // PrepareInverse, the inverse op gets fresh inputs in the input areas, like a prepared op.
  absl::Status RefreshInputs();

  // Makes the inverse op current, run on the output of the current one: its input is each
  // rank's output area, its output (poisoned now) the input area, and the expected output the
  // current op's input, so Verify checks the round trip byte-exact (with FP8 on the wire, the
  // reference of the inverse op on the current op's expected output).
  absl::Status PrepareInverse();

  // Rank `rank`'s buffers for the current case, on the harness's stream of that rank.
  RankBuffers Buffers(int rank) const;
  std::vector<RankBuffers> AllBuffers() const;

  // Waits for every harness stream, then compares every rank's output with the expected bytes
  // and checks the guard bytes around it, and checks that every input and its guards are as
  // they were. DataLoss names the rank, the offset and both bytes.
  absl::Status Verify();

  // Like Verify, but checks only the guard bytes around every output (and every input): for
  // calls that failed, where the output itself is undefined but nothing outside it may change.
  absl::Status VerifyGuards();

  // Waits for every harness stream.
  absl::Status SynchronizeStreams() { return areas_->SynchronizeStreams(); }

  const AllToAllCase& current_case() const { return case_; }
  const AllToAllLayout& layout() const { return layout_; }

 private:
  explicit AllToAllHarness(std::unique_ptr<RankAreas> areas);
  // Verify (check_data) or VerifyGuards.
  absl::Status Check(bool check_data);

  std::unique_ptr<RankAreas> areas_;
  AllToAllCase case_;
  AllToAllLayout layout_;
  // The current op reads the output areas and writes the input areas.
  bool swapped_ = false;
  std::vector<std::vector<uint8_t>> inputs_;
  std::vector<std::vector<uint8_t>> expected_;
};

}  // namespace ltx

#endif  // LTX_TOOLS_TESTING_ALLTOALL_HARNESS_H_
