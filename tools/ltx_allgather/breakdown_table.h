// The phase breakdown of the one-trip kernel, from the records of its timed instantiation
// (kernels/one_trip_timestamps.h): per op and rank, the blocks reduced to one line of phase
// times; over ops, the trimmed mean of each phase after the op's start, the gap between ops,
// and the cross-GPU round trip; and the tables the tool prints, with the host-side cost per step
// of a per-rank call. Plain logic, no GPU.
#ifndef LTX_TOOLS_LTX_ALLGATHER_BREAKDOWN_TABLE_H_
#define LTX_TOOLS_LTX_ALLGATHER_BREAKDOWN_TABLE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/one_trip_timestamps.h"

namespace ltx {

// One op on one rank, its blocks reduced: %globaltimer ns of the rank's GPU.
struct OpPhases {
  uint64_t op = 0;
  int blocks = 0;            // Blocks that recorded the op.
  uint64_t first_start = 0;  // Earliest block start.
  uint64_t last_start = 0;   // Latest block start.
  // Per phase, the latest time any block recorded (0: no block reached it).
  std::array<uint64_t, kOneTripPhaseCount> latest = {};
};

// The ops found in `records` (samples x max_blocks records as the timed kernel wrote them,
// OneTripRecordIndex), in op order, each reduced over its blocks. Records with op 0 are empty.
std::vector<OpPhases> OpsOfRecords(const std::vector<OneTripTimestampRecord>& records, int samples,
                                   int max_blocks);

// Trimmed means over the ops of one rank (the lowest and highest tenth left out), in
// microseconds: finer than the timer's tick, since ops start at every phase of it.
struct RankPhases {
  int ops = 0;                                     // Ops summarised.
  int blocks = 0;                                  // Blocks per op (of the median op).
  double last_block_start_us = 0;                  // Last block start after the first.
  std::array<double, kOneTripPhaseCount> us = {};  // Phase after the op's first block start;
                                                   // < 0: no block reached it.
  double gap_us = -1;     // Previous op's end to this op's start (consecutive ops only).
  double period_us = -1;  // Previous op's start to this op's start (consecutive ops only).
};

// Summarises one rank's ops: the trimmed mean of each quantity over the ops that have it; the
// median block count.
RankPhases SummarizeRank(const std::vector<OpPhases>& ops);

// Round trips between rank 0 and rank r, from ops both recorded (trimmed means, microseconds). With
// `sent` = the sender's kSent and `seen` = the receiver's kLastArrived, each on its own clock:
// round_trip = (seen_r - sent_0) + (seen_0 - sent_r), in which any offset between the clocks
// cancels: an upper bound of the two one-way latencies together (a receiver that was not yet
// polling sees a line later than it arrived). offset = half their difference: the clocks'
// offset if both directions take as long, so far from 0 means the clocks are not aligned.
struct PairTrip {
  int rank = 0;
  int ops = 0;
  double round_trip_us = 0;
  double offset_us = 0;
};

// PairTrip of every rank r >= 1 against rank 0; `ranks[r]` are rank r's ops.
std::vector<PairTrip> PairTrips(const std::vector<std::vector<OpPhases>>& ranks);

// Label of a phase as the table prints it, e.g. "sent" or "headers checked (block 0)".
std::string PhaseLabel(OneTripPhase phase);

// The table of one configuration: a title line, then one line per quantity with a column per
// rank, then the round trips. Every line starts with "# " or is a table row; ends in a newline.
std::string FormatPhaseTable(const std::string& title, const std::vector<RankPhases>& ranks,
                             const std::vector<PairTrip>& trips);

// One step of a per-rank call's host cost, median microseconds per call.
struct HostStep {
  std::string name;
  double us = 0;
};

// The host table: one line per step, then the whole call against the sum of `parts` (the
// rest is what the steps do not cover). Ends in a newline.
std::string FormatHostTable(const std::vector<HostStep>& parts, const HostStep& whole);

}  // namespace ltx

#endif  // LTX_TOOLS_LTX_ALLGATHER_BREAKDOWN_TABLE_H_
