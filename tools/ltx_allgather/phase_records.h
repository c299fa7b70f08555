// The device buffers that the timed one-trip kernel writes its phase timestamps into
// (kernels/one_trip_timestamps.h), one per rank, and the phase table made from them: shared by
// the breakdown runs of ltx_allgather and ltx_alltoall, whose one-trip kernels record alike.
#ifndef LTX_TOOLS_LTX_ALLGATHER_PHASE_RECORDS_H_
#define LTX_TOOLS_LTX_ALLGATHER_PHASE_RECORDS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/one_trip_timestamps.h"
#include "tools/ltx_allgather/breakdown_table.h"

namespace ltx {

class PhaseRecords {
 public:
  // Allocates `samples` x `max_blocks` records in device memory of each of `devices` (rank
  // order). Errors: as CUDA reports them. Changes the calling thread's current device.
  static absl::StatusOr<std::unique_ptr<PhaseRecords>> Create(const std::vector<int>& devices,
                                                              int samples, int max_blocks);
  ~PhaseRecords();
  PhaseRecords(const PhaseRecords&) = delete;
  PhaseRecords& operator=(const PhaseRecords&) = delete;

  // What rank `rank`'s calls pass as CallOptions::one_trip_timestamps; valid while this lives.
  const OneTripTimestamps* Of(int rank) const { return &records_[rank]; }

  // Zeroes every rank's records (a synchronous memset; the GPUs must not be writing them).
  absl::Status Clear();

  // Every rank's ops recorded since the last Clear, each reduced over its blocks (OpsOfRecords),
  // in rank order. The GPUs must be done with the timed calls. Errors: as CUDA reports them.
  absl::StatusOr<std::vector<std::vector<OpPhases>>> Read();

  // The phase table of the recorded ops under `title` (FormatPhaseTable: every rank's summary
  // and the round trips against rank 0). Errors: as Read.
  absl::StatusOr<std::string> Table(const std::string& title);

 private:
  explicit PhaseRecords(std::vector<int> devices) : devices_(std::move(devices)) {}

  std::vector<int> devices_;
  std::vector<OneTripTimestamps> records_;  // Per rank; device memory of its GPU.
};

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLGATHER_PHASE_RECORDS_H_
