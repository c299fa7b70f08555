// The phase breakdown of a timed kernel (kernels/wire/phase_timestamps.h; one-trip or direct, as
// its PhaseLayout says): per op and rank, the blocks reduced to one line of phase times and the
// spread of the blocks' stores; over ops, the trimmed mean of each phase after the op's start,
// the gap between ops, and the cross-GPU round trips; and the tables the tool prints, with the
// host-side cost per step of a per-rank call. Plain logic, no GPU.
#ifndef TOOLS_BENCH_BREAKDOWN_TABLE_H_
#define TOOLS_BENCH_BREAKDOWN_TABLE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/wire/phase_timestamps.h"
#include "tools/bench/breakdown_phases.h"

namespace ltx {

// One op on one rank, its blocks reduced: %globaltimer ns of the rank's GPU.
struct OpPhases {
  uint64_t op = 0;
  int blocks = 0;            // Blocks that recorded the op.
  uint64_t first_start = 0;  // Earliest block start.
  uint64_t last_start = 0;   // Latest block start.
  // Per phase, the latest time any block recorded (0: no block reached it).
  std::array<uint64_t, kMaxPhaseCount> latest = {};
  // With a store span in the layout (and a block that reached its end): the earliest and the
  // latest block's stores-done time, which block was the latest, and the shortest and longest
  // time from a block's first store to its stores done (0 and -1 otherwise).
  uint64_t first_stores_done = 0;
  uint64_t last_stores_done = 0;
  int last_storing_block = -1;
  uint64_t shortest_stores_ns = 0;
  uint64_t longest_stores_ns = 0;
};

// The ops found in `records` (samples x max_blocks records as the timed kernel wrote them,
// PhaseRecordIndex), in op order, each reduced over its blocks as `layout` says. Records with
// op 0 are empty.
std::vector<OpPhases> OpsOfRecords(const std::vector<PhaseTimestampRecord>& records, int samples,
                                   int max_blocks, const PhaseLayout& layout);

// Trimmed means over the ops of one rank (the lowest and highest tenth left out), in
// microseconds: finer than the timer's tick, since ops start at every phase of it. < 0: no op
// had the quantity.
struct RankPhases {
  int ops = 0;                      // Ops summarised.
  int blocks = 0;                   // Blocks per op (of the median op).
  double last_block_start_us = 0;   // Last block start after the first.
  // Phase after the op's first block start, as its latest block reached it.
  std::array<double, kMaxPhaseCount> us = {};
  double gap_us = -1;     // Previous op's end to this op's start (consecutive ops only).
  double period_us = -1;  // Previous op's start to this op's start (consecutive ops only).
  // The blocks' stores (a layout with a store span): the first block's stores done after the
  // op's first start; the latest block's minus the first block's; the shortest and longest
  // time a block stored; the block most often the latest to finish storing, and the share of
  // ops (0 to 1) in which it was.
  double first_stores_done_us = -1;
  double stores_done_spread_us = -1;
  double shortest_stores_us = -1;
  double longest_stores_us = -1;
  int last_storing_block = -1;
  double last_storing_share = 0;
};

// Summarises one rank's ops: the trimmed mean of each quantity over the ops that have it; the
// median block count; the most frequent last storing block (the lowest index on a tie).
RankPhases SummarizeRank(const std::vector<OpPhases>& ops);

// Round trips between rank 0 and rank r, from ops both recorded (trimmed means, microseconds).
// With `sent` and `seen` the latest block's times of the trip's phases, each on its own rank's
// clock: round_trip = (seen_r - sent_0) + (seen_0 - sent_r), in which any offset between the
// clocks cancels: an upper bound of the two one-way latencies together (a rank that was not yet
// waiting sees a signal later than it arrived, and a rank that signals late delays its peer's
// seen by as much). offset = half their difference: the clocks' offset if both directions take
// as long, so far from 0 means the clocks are not aligned.
struct PairTrip {
  std::string name;  // TripPhases::name.
  int rank = 0;
  int ops = 0;
  double round_trip_us = 0;
  double offset_us = 0;
};

// PairTrip of every trip of `layout` and every rank r >= 1 against rank 0; `ranks[r]` are rank
// r's ops. Trip by trip, rank by rank.
std::vector<PairTrip> PairTrips(const std::vector<std::vector<OpPhases>>& ranks,
                                const PhaseLayout& layout);

// The table of one configuration: a title line, then one line per quantity (phases as `layout`
// labels them, the blocks' stores when it has a store span) with a column per rank, then the
// round trips. Every line starts with "# " or is a table row; ends in a newline.
std::string FormatPhaseTable(const std::string& title, const PhaseLayout& layout,
                             const std::vector<RankPhases>& ranks,
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

#endif  // TOOLS_BENCH_BREAKDOWN_TABLE_H_
