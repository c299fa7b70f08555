// Reducing the one-trip kernel's phase records to medians, and the breakdown tables.
#include "tools/ltx_allgather/breakdown_table.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/ltx_allgather/bench_timing.h"

namespace ltx {
namespace {

constexpr double kNsPerUs = 1e3;

double Us(int64_t ns) { return static_cast<double>(ns) / kNsPerUs; }

// Mean of `values` without their lowest and highest tenth: robust to the odd slow op (a window
// boundary), and finer than the timer's tick, since ops start at every phase of it.
double TrimmedMean(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t cut = values.size() / 10;
  double sum = 0;
  for (size_t i = cut; i < values.size() - cut; ++i) sum += values[i];
  return sum / static_cast<double>(values.size() - 2 * cut);
}

uint64_t EndOf(const OpPhases& op) { return op.latest[static_cast<int>(OneTripPhase::kEnd)]; }

// "  1.23" per value, "     -" for a negative one.
std::string Cells(const std::vector<double>& values) {
  std::string cells;
  for (double value : values) {
    absl::StrAppend(&cells,
                    value < 0 ? absl::StrFormat(" %9s", "-") : absl::StrFormat(" %9.2f", value));
  }
  return cells;
}

std::string Row(const std::string& label, const std::vector<double>& values) {
  return absl::StrFormat("%-34s%s\n", label, Cells(values));
}

// Medians per rank of one quantity.
template <typename Get>
std::vector<double> Column(const std::vector<RankPhases>& ranks, Get get) {
  std::vector<double> values;
  for (const RankPhases& rank : ranks) values.push_back(get(rank));
  return values;
}

}  // namespace

std::vector<OpPhases> OpsOfRecords(const std::vector<OneTripTimestampRecord>& records, int samples,
                                   int max_blocks) {
  std::map<uint64_t, OpPhases> by_op;
  for (int sample = 0; sample < samples; ++sample) {
    for (int block = 0; block < max_blocks; ++block) {
      const OneTripTimestampRecord& record = records[sample * max_blocks + block];
      if (record.op == 0) continue;
      OpPhases& op = by_op[record.op];
      const uint64_t start = record.ns[static_cast<int>(OneTripPhase::kStart)];
      op.op = record.op;
      op.first_start = op.blocks == 0 ? start : std::min(op.first_start, start);
      op.last_start = std::max(op.last_start, start);
      ++op.blocks;
      for (int phase = 0; phase < kOneTripPhaseCount; ++phase) {
        op.latest[phase] = std::max(op.latest[phase], record.ns[phase]);
      }
    }
  }
  std::vector<OpPhases> ops;
  for (const auto& entry : by_op) ops.push_back(entry.second);
  return ops;
}

RankPhases SummarizeRank(const std::vector<OpPhases>& ops) {
  RankPhases summary;
  summary.ops = static_cast<int>(ops.size());
  std::vector<double> blocks, spread, gaps, periods;
  std::array<std::vector<double>, kOneTripPhaseCount> phases;
  for (size_t i = 0; i < ops.size(); ++i) {
    const OpPhases& op = ops[i];
    blocks.push_back(op.blocks);
    spread.push_back(Us(static_cast<int64_t>(op.last_start - op.first_start)));
    for (int phase = 0; phase < kOneTripPhaseCount; ++phase) {
      if (op.latest[phase] == 0) continue;
      phases[phase].push_back(Us(static_cast<int64_t>(op.latest[phase] - op.first_start)));
    }
    if (i == 0 || ops[i - 1].op + 1 != op.op) continue;
    gaps.push_back(Us(static_cast<int64_t>(op.first_start - EndOf(ops[i - 1]))));
    periods.push_back(Us(static_cast<int64_t>(op.first_start - ops[i - 1].first_start)));
  }
  summary.blocks = static_cast<int>(Median(blocks));
  summary.last_block_start_us = TrimmedMean(spread);
  for (int phase = 0; phase < kOneTripPhaseCount; ++phase) {
    summary.us[phase] = phases[phase].empty() ? -1 : TrimmedMean(phases[phase]);
  }
  summary.gap_us = gaps.empty() ? -1 : TrimmedMean(gaps);
  summary.period_us = periods.empty() ? -1 : TrimmedMean(periods);
  return summary;
}

std::vector<PairTrip> PairTrips(const std::vector<std::vector<OpPhases>>& ranks) {
  constexpr int kSent = static_cast<int>(OneTripPhase::kSent);
  constexpr int kSeen = static_cast<int>(OneTripPhase::kLastArrived);
  std::vector<PairTrip> trips;
  if (ranks.empty()) return trips;
  std::map<uint64_t, const OpPhases*> zero;
  for (const OpPhases& op : ranks[0]) zero[op.op] = &op;
  for (size_t r = 1; r < ranks.size(); ++r) {
    std::vector<double> round_trips, offsets;
    for (const OpPhases& theirs : ranks[r]) {
      const auto found = zero.find(theirs.op);
      if (found == zero.end()) continue;
      const OpPhases& mine = *found->second;
      if (mine.latest[kSent] == 0 || mine.latest[kSeen] == 0 || theirs.latest[kSent] == 0 ||
          theirs.latest[kSeen] == 0) {
        continue;
      }
      const double there = Us(static_cast<int64_t>(theirs.latest[kSeen] - mine.latest[kSent]));
      const double back = Us(static_cast<int64_t>(mine.latest[kSeen] - theirs.latest[kSent]));
      round_trips.push_back(there + back);
      offsets.push_back((there - back) / 2);
    }
    trips.push_back(PairTrip{static_cast<int>(r), static_cast<int>(round_trips.size()),
                             TrimmedMean(round_trips), TrimmedMean(offsets)});
  }
  return trips;
}

std::string PhaseLabel(OneTripPhase phase) {
  switch (phase) {
    case OneTripPhase::kStart:
      return "start (first block)";
    case OneTripPhase::kSent:
      return "sent";
    case OneTripPhase::kOwnCopied:
      return "own shard copied";
    case OneTripPhase::kHeadersChecked:
      return "headers checked (block 0)";
    case OneTripPhase::kLastArrived:
      return "last line arrived";
    case OneTripPhase::kUnpacked:
      return "unpacked";
    case OneTripPhase::kEnd:
      return "end (last block)";
  }
  return absl::StrCat("phase ", static_cast<int>(phase));
}

std::string FormatPhaseTable(const std::string& title, const std::vector<RankPhases>& ranks,
                             const std::vector<PairTrip>& trips) {
  std::string out = absl::StrCat("# ", title, "\n");
  std::string header = absl::StrFormat("%-34s", "# us after the op's first start");
  for (size_t rank = 0; rank < ranks.size(); ++rank) {
    absl::StrAppend(&header, absl::StrFormat(" %9s", absl::StrCat("rank", rank)));
  }
  absl::StrAppend(&out, header, "\n");
  absl::StrAppend(
      &out,
      Row("ops", Column(ranks, [](const RankPhases& r) { return static_cast<double>(r.ops); })));
  absl::StrAppend(&out, Row("blocks per op", Column(ranks, [](const RankPhases& r) {
                              return static_cast<double>(r.blocks);
                            })));
  absl::StrAppend(&out, Row("last block start", Column(ranks, [](const RankPhases& r) {
                              return r.last_block_start_us;
                            })));
  for (int phase = 1; phase < kOneTripPhaseCount; ++phase) {
    absl::StrAppend(&out, Row(PhaseLabel(static_cast<OneTripPhase>(phase)),
                              Column(ranks, [phase](const RankPhases& r) { return r.us[phase]; })));
  }
  absl::StrAppend(&out, Row("gap: previous end to start",
                            Column(ranks, [](const RankPhases& r) { return r.gap_us; })));
  absl::StrAppend(&out, Row("period: start to next start",
                            Column(ranks, [](const RankPhases& r) { return r.period_us; })));
  for (const PairTrip& trip : trips) {
    absl::StrAppend(
        &out, absl::StrFormat("# rank0<->rank%d: round trip (sent to peer's last line) <= %.2f "
                              "us, apparent clock offset %+.2f us (%d ops)\n",
                              trip.rank, trip.round_trip_us, trip.offset_us, trip.ops));
  }
  return out;
}

std::string FormatHostTable(const std::vector<HostStep>& parts, const HostStep& whole) {
  std::string out = absl::StrFormat("%-48s %9s\n", "# host step (median per call)", "us");
  double sum = 0;
  for (const HostStep& step : parts) {
    absl::StrAppend(&out, absl::StrFormat("%-48s %9.3f\n", step.name, step.us));
    sum += step.us;
  }
  absl::StrAppend(&out, absl::StrFormat("%-48s %9.3f\n", "sum of the steps", sum));
  absl::StrAppend(&out, absl::StrFormat("%-48s %9.3f\n", whole.name, whole.us));
  absl::StrAppend(
      &out, absl::StrFormat("%-48s %9.3f\n", "rest (not covered by the steps)", whole.us - sum));
  return out;
}

}  // namespace ltx
