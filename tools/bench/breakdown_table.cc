// Reducing a timed kernel's phase records to means per rank, and the breakdown tables.
#include "tools/bench/breakdown_table.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/bench/bench_timing.h"

namespace ltx {
namespace {

constexpr double kNsPerUs = 1e3;

double Us(int64_t ns) { return static_cast<double>(ns) / kNsPerUs; }

// Microseconds from `from` to `to`, ns of one clock.
double UsBetween(uint64_t from, uint64_t to) { return Us(static_cast<int64_t>(to - from)); }

// Mean of `values` without their lowest and highest tenth: robust to the odd slow op (a window
// boundary), and finer than the timer's tick, since ops start at every phase of it. -1 when
// there are no values.
double TrimmedMean(std::vector<double> values) {
  if (values.empty()) return -1;
  std::sort(values.begin(), values.end());
  const size_t cut = values.size() / 10;
  double sum = 0;
  for (size_t i = cut; i < values.size() - cut; ++i) sum += values[i];
  return sum / static_cast<double>(values.size() - 2 * cut);
}

// The latest block's end: the last phase any block reached.
uint64_t EndOf(const OpPhases& op) {
  for (int phase = kMaxPhaseCount - 1; phase > 0; --phase) {
    if (op.latest[phase] != 0) return op.latest[phase];
  }
  return op.first_start;
}

// Folds one block's record into its op's stores: the earliest and latest stores done, the
// latest block, the shortest and longest store time.
void AddStores(const PhaseTimestampRecord& record, int block, const PhaseLayout& layout,
               OpPhases* op) {
  const uint64_t done = record.ns[layout.store_end];
  if (done == 0) return;
  if (op->first_stores_done == 0 || done < op->first_stores_done) op->first_stores_done = done;
  if (done >= op->last_stores_done) {
    op->last_stores_done = done;
    op->last_storing_block = block;
  }
  const uint64_t begin = record.ns[layout.store_begin];
  if (begin == 0 || begin > done) return;
  const uint64_t took = done - begin;
  if (op->shortest_stores_ns == 0 || took < op->shortest_stores_ns) op->shortest_stores_ns = took;
  op->longest_stores_ns = std::max(op->longest_stores_ns, took);
}

// The block most often in `blocks` (the lowest on a tie) and its share; -1 and 0 when empty.
std::pair<int, double> MostFrequent(const std::vector<int>& blocks) {
  if (blocks.empty()) return {-1, 0.0};
  std::map<int, int> counts;
  for (int block : blocks) ++counts[block];
  std::pair<int, int> best = {-1, 0};
  for (const auto& entry : counts) {
    if (entry.second > best.second) best = entry;
  }
  return {best.first, static_cast<double>(best.second) / static_cast<double>(blocks.size())};
}

// "  1.23" per value, "     -" for a negative one.
std::string Cells(const std::vector<double>& values, int decimals) {
  std::string cells;
  for (double value : values) {
    absl::StrAppend(&cells, value < 0 ? absl::StrFormat(" %9s", "-")
                                      : absl::StrFormat(" %9.*f", decimals, value));
  }
  return cells;
}

std::string Row(const std::string& label, const std::vector<double>& values, int decimals = 2) {
  return absl::StrFormat("%-44s%s\n", label, Cells(values, decimals));
}

// One quantity per rank.
template <typename Get>
std::vector<double> Column(const std::vector<RankPhases>& ranks, Get get) {
  std::vector<double> values;
  for (const RankPhases& rank : ranks) values.push_back(get(rank));
  return values;
}

// The rows of the blocks' stores.
std::string StoreRows(const std::vector<RankPhases>& ranks) {
  std::string out;
  absl::StrAppend(&out, Row("stores done (first block)", Column(ranks, [](const RankPhases& r) {
                              return r.first_stores_done_us;
                            })));
  absl::StrAppend(&out,
                  Row("stores done: last block - first block",
                      Column(ranks, [](const RankPhases& r) { return r.stores_done_spread_us; })));
  absl::StrAppend(&out,
                  Row("store time, first store to done: shortest",
                      Column(ranks, [](const RankPhases& r) { return r.shortest_stores_us; })));
  absl::StrAppend(&out,
                  Row("store time, first store to done: longest",
                      Column(ranks, [](const RankPhases& r) { return r.longest_stores_us; })));
  absl::StrAppend(
      &out,
      Row("block most often last to finish storing",
          Column(ranks,
                 [](const RankPhases& r) { return static_cast<double>(r.last_storing_block); }),
          /*decimals=*/0));
  absl::StrAppend(&out, Row("  share of ops in which it was (%)",
                            Column(ranks,
                                   [](const RankPhases& r) {
                                     return r.last_storing_block < 0 ? -1
                                                                     : 100 * r.last_storing_share;
                                   }),
                            /*decimals=*/0));
  return out;
}

}  // namespace

std::vector<OpPhases> OpsOfRecords(const std::vector<PhaseTimestampRecord>& records, int samples,
                                   int max_blocks, const PhaseLayout& layout) {
  std::map<uint64_t, OpPhases> by_op;
  for (int sample = 0; sample < samples; ++sample) {
    for (int block = 0; block < max_blocks; ++block) {
      const PhaseTimestampRecord& record = records[sample * max_blocks + block];
      if (record.op == 0) continue;
      OpPhases& op = by_op[record.op];
      const uint64_t start = record.ns[0];
      op.op = record.op;
      op.first_start = op.blocks == 0 ? start : std::min(op.first_start, start);
      op.last_start = std::max(op.last_start, start);
      ++op.blocks;
      if (layout.store_end >= 0) AddStores(record, block, layout, &op);
      for (int phase = 0; phase < layout.phases; ++phase) {
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
  std::vector<double> blocks, spread, gaps, periods, first_done, done_spread, shortest, longest;
  std::vector<int> last_storing;
  std::array<std::vector<double>, kMaxPhaseCount> phases;
  for (size_t i = 0; i < ops.size(); ++i) {
    const OpPhases& op = ops[i];
    blocks.push_back(op.blocks);
    spread.push_back(UsBetween(op.first_start, op.last_start));
    for (int phase = 0; phase < kMaxPhaseCount; ++phase) {
      if (op.latest[phase] != 0) {
        phases[phase].push_back(UsBetween(op.first_start, op.latest[phase]));
      }
    }
    if (op.last_storing_block >= 0) {
      last_storing.push_back(op.last_storing_block);
      first_done.push_back(UsBetween(op.first_start, op.first_stores_done));
      done_spread.push_back(UsBetween(op.first_stores_done, op.last_stores_done));
    }
    if (op.longest_stores_ns != 0) {
      shortest.push_back(Us(static_cast<int64_t>(op.shortest_stores_ns)));
      longest.push_back(Us(static_cast<int64_t>(op.longest_stores_ns)));
    }
    if (i == 0 || ops[i - 1].op + 1 != op.op) continue;
    gaps.push_back(UsBetween(EndOf(ops[i - 1]), op.first_start));
    periods.push_back(UsBetween(ops[i - 1].first_start, op.first_start));
  }
  summary.blocks = static_cast<int>(Median(blocks));
  summary.last_block_start_us = std::max(0.0, TrimmedMean(spread));
  for (int phase = 0; phase < kMaxPhaseCount; ++phase) {
    summary.us[phase] = TrimmedMean(phases[phase]);
  }
  summary.gap_us = TrimmedMean(gaps);
  summary.period_us = TrimmedMean(periods);
  summary.first_stores_done_us = TrimmedMean(first_done);
  summary.stores_done_spread_us = TrimmedMean(done_spread);
  summary.shortest_stores_us = TrimmedMean(shortest);
  summary.longest_stores_us = TrimmedMean(longest);
  std::tie(summary.last_storing_block, summary.last_storing_share) = MostFrequent(last_storing);
  return summary;
}

std::vector<PairTrip> PairTrips(const std::vector<std::vector<OpPhases>>& ranks,
                                const PhaseLayout& layout) {
  std::vector<PairTrip> trips;
  if (ranks.empty()) return trips;
  std::map<uint64_t, const OpPhases*> zero;
  for (const OpPhases& op : ranks[0]) zero[op.op] = &op;
  for (const TripPhases& trip : layout.trips) {
    for (size_t r = 1; r < ranks.size(); ++r) {
      std::vector<double> round_trips, offsets;
      for (const OpPhases& theirs : ranks[r]) {
        const auto found = zero.find(theirs.op);
        if (found == zero.end()) continue;
        const OpPhases& mine = *found->second;
        if (mine.latest[trip.sent] == 0 || mine.latest[trip.seen] == 0 ||
            theirs.latest[trip.sent] == 0 || theirs.latest[trip.seen] == 0) {
          continue;
        }
        const double there = UsBetween(mine.latest[trip.sent], theirs.latest[trip.seen]);
        const double back = UsBetween(theirs.latest[trip.sent], mine.latest[trip.seen]);
        round_trips.push_back(there + back);
        offsets.push_back((there - back) / 2);
      }
      trips.push_back(PairTrip{trip.name, static_cast<int>(r), static_cast<int>(round_trips.size()),
                               TrimmedMean(round_trips), TrimmedMean(offsets)});
    }
  }
  return trips;
}

std::string FormatPhaseTable(const std::string& title, const PhaseLayout& layout,
                             const std::vector<RankPhases>& ranks,
                             const std::vector<PairTrip>& trips) {
  std::string out = absl::StrCat("# ", title, "\n");
  std::string header = absl::StrFormat("%-44s", "# us after the first start (latest block)");
  for (size_t rank = 0; rank < ranks.size(); ++rank) {
    absl::StrAppend(&header, absl::StrFormat(" %9s", absl::StrCat("rank", rank)));
  }
  absl::StrAppend(&out, header, "\n");
  absl::StrAppend(
      &out,
      Row("ops", Column(ranks, [](const RankPhases& r) { return static_cast<double>(r.ops); }),
          /*decimals=*/0));
  absl::StrAppend(
      &out, Row("blocks per op",
                Column(ranks, [](const RankPhases& r) { return static_cast<double>(r.blocks); }),
                /*decimals=*/0));
  absl::StrAppend(&out, Row("last block start", Column(ranks, [](const RankPhases& r) {
                              return r.last_block_start_us;
                            })));
  for (int phase = 1; phase < layout.phases; ++phase) {
    absl::StrAppend(&out, Row(layout.labels[phase],
                              Column(ranks, [phase](const RankPhases& r) { return r.us[phase]; })));
  }
  if (layout.store_end >= 0) absl::StrAppend(&out, StoreRows(ranks));
  absl::StrAppend(&out, Row("gap: previous end to start",
                            Column(ranks, [](const RankPhases& r) { return r.gap_us; })));
  absl::StrAppend(&out, Row("period: start to next start",
                            Column(ranks, [](const RankPhases& r) { return r.period_us; })));
  for (const PairTrip& trip : trips) {
    absl::StrAppend(
        &out, absl::StrFormat("# rank0<->rank%d: round trip (%s) <= %.2f us, apparent "
                              "clock offset %+.2f us (%d ops)\n",
                              trip.rank, trip.name, trip.round_trip_us, trip.offset_us, trip.ops));
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
