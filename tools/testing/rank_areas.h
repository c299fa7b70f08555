// GPU buffers for running collective cases on real GPUs, shared by the AllGather and all-to-all
// harnesses: per rank an input and an output area with guard bytes around them and room to
// misalign, a stream, random data (never all zeros), a fresh poison byte for each area before
// every call, and a byte-exact comparison of an area with the expected bytes and its guards.
#ifndef LTX_TOOLS_TESTING_RANK_AREAS_H_
#define LTX_TOOLS_TESTING_RANK_AREAS_H_

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ltx/rank_buffers.h"

namespace ltx {

// Bytes of guard space before and after every input and output.
inline constexpr int64_t kGuardBytes = 256;
// Room for moving a buffer off its allocation's alignment: misalignments are in [0, this).
inline constexpr int kMisalignmentRoom = 64;

class RankAreas {
 public:
  // The two areas of a rank.
  enum class Area { kInput, kOutput };

  // Allocates on each GPU an input area of `input_capacity` bytes and an output area of
  // `output_capacity` bytes (plus misalignment room and guards), and a non-blocking stream
  // per rank, unless `streams` lends one per rank (streams[r] a stream of devices[r], kept, not
  // destroyed: they must outlive the areas). `seed` makes the data reproducible. Errors: as CUDA
  // reports them; InvalidArgument if `streams` is neither empty nor one per rank.
  static absl::StatusOr<std::unique_ptr<RankAreas>> Create(
      std::vector<int> devices, int64_t input_capacity, int64_t output_capacity, uint64_t seed,
      const std::vector<cudaStream_t>& streams = {});
  ~RankAreas();

  RankAreas(const RankAreas&) = delete;
  RankAreas& operator=(const RankAreas&) = delete;

  int world_size() const { return static_cast<int>(ranks_.size()); }
  int device(int rank) const { return ranks_[rank].device; }
  int64_t input_capacity() const { return input_capacity_; }
  int64_t output_capacity() const { return output_capacity_; }
  // The byte that area `area` (guards included) was last poisoned with.
  uint8_t poison(Area area) const { return poison_[static_cast<int>(area)]; }

  // InvalidArgument unless both misalignments are in [0, kMisalignmentRoom).
  static absl::Status CheckMisalignment(int input_misalignment, int output_misalignment);

  // Fills `bytes` with random data.
  void FillRandom(std::vector<uint8_t>* bytes);

  // Poisons every input area, copies `inputs[r]` into rank r's input area at `misalignment`,
  // then poisons every output area (guards included), each area with a fresh random byte;
  // returns when the GPUs hold it.
  absl::Status UploadAndPoison(const std::vector<std::vector<uint8_t>>& inputs, int misalignment);

  // Poisons every rank's area `area` (guards included) with a fresh random byte; returns when
  // the GPUs hold it.
  absl::Status Poison(Area area);

  // Rank `rank`'s buffers at the given misalignments, on its stream: input in the input area
  // and output in the output area, or the other way round when `swapped` (to run an op on the
  // output of the previous one).
  RankBuffers Buffers(int rank, int input_misalignment, int output_misalignment,
                      bool swapped = false) const;

  // Waits for every stream.
  absl::Status SynchronizeStreams();

  // Puts an in-place case's input where its calls find it: copies the `bytes` (>= 0) of rank
  // `rank`'s input at `input_misalignment` to `output_offset` bytes into its output at
  // `output_misalignment`, on the rank's stream, and waits for it (a copy on the legacy stream
  // could land after a kernel on the rank's non-blocking stream read the slot). Errors: as CUDA
  // reports them, naming the rank.
  absl::Status CopyInputIntoOutput(int rank, int input_misalignment, int output_misalignment,
                                   int64_t output_offset, int64_t bytes);

  // Waits for every stream, then compares the data at `misalignment` in rank `rank`'s area
  // `area` with `expected` and checks the poison of the guard bytes around it; only the guards
  // when `check_data` is false. DataLoss names the rank, the area, the offset,
  // `describe(offset)` (where the byte comes from) and both byte values; `what` prefixes the
  // message.
  absl::Status CheckArea(Area area, int rank, int misalignment, absl::Span<const uint8_t> expected,
                         bool check_data, const std::string& what,
                         const std::function<std::string(int64_t)>& describe);

  // CheckArea of an op's input in area `area`, which the op must leave as it was: `expected` at
  // `misalignment`, and the poison around it.
  absl::Status CheckInput(Area area, int rank, int misalignment,
                          absl::Span<const uint8_t> expected, const std::string& what);

 private:
  struct Rank {
    int device = -1;
    cudaStream_t stream = nullptr;
    bool owns_stream = false;  // Created here, not lent by Create's caller.
    uint8_t* input_area = nullptr;
    uint8_t* output_area = nullptr;
  };
  RankAreas(int64_t input_capacity, int64_t output_capacity, uint64_t seed);
  uint8_t* AreaOf(const Rank& r, Area area) const {
    return area == Area::kInput ? r.input_area : r.output_area;
  }
  int64_t CapacityOf(Area area) const {
    return area == Area::kInput ? input_capacity_ : output_capacity_;
  }

  const int64_t input_capacity_;
  const int64_t output_capacity_;
  std::mt19937_64 random_;
  std::vector<Rank> ranks_;
  std::array<uint8_t, 2> poison_ = {};  // By Area.
};

}  // namespace ltx

#endif  // LTX_TOOLS_TESTING_RANK_AREAS_H_
