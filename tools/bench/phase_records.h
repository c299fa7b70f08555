// The device buffers a timed kernel writes its phase records into, one per rank
// (kernels/wire/phase_timestamps.h), and the breakdown table made of what they hold: shared by the
// AllGather's and the all-to-all's breakdowns.
#ifndef TOOLS_BENCH_PHASE_RECORDS_H_
#define TOOLS_BENCH_PHASE_RECORDS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/wire/phase_timestamps.h"
#include "tools/bench/breakdown_phases.h"
#include "tools/bench/breakdown_table.h"

namespace ltx {

class PhaseRecords {
 public:
  // Allocates `samples` ops of `max_blocks` blocks of records in the memory of each of
  // `devices` (rank order), cleared. Errors: as CUDA reports them (CudaStatus).
  static absl::StatusOr<std::unique_ptr<PhaseRecords>> Create(const std::vector<int>& devices,
                                                              int samples, int max_blocks);
  ~PhaseRecords();
  PhaseRecords(const PhaseRecords&) = delete;
  PhaseRecords& operator=(const PhaseRecords&) = delete;

  // Where rank `rank`'s timed calls write (CallOptions::phase_timestamps).
  const PhaseTimestamps* ForRank(int rank) const { return &buffers_[rank]; }

  // Clears every rank's records; none of the ranks' kernels may be writing them.
  absl::Status Clear();

  // Reads every rank's records back (the ranks' streams must be idle) and reduces them, rank by
  // rank, to ops as `layout` says (OpsOfRecords).
  absl::StatusOr<std::vector<std::vector<OpPhases>>> Read(const PhaseLayout& layout) const;

  // The table of what the records hold now (Read, then SummarizeRank per rank, PairTrips and
  // FormatPhaseTable with `title`).
  absl::StatusOr<std::string> Table(const std::string& title, const PhaseLayout& layout) const;

 private:
  explicit PhaseRecords(const std::vector<int>& devices) : devices_(devices) {}

  const std::vector<int> devices_;
  std::vector<PhaseTimestamps> buffers_;  // Per rank; device memory of its GPU.
};

}  // namespace ltx

#endif  // TOOLS_BENCH_PHASE_RECORDS_H_
