// The phase breakdown of the one-trip or the direct all-to-all: the production kernel's time per
// call, then the timed kernel's phases.
#include "tools/ltx_alltoall/alltoall_breakdown.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ltx/status_macros.h"
#include "tools/bench/bench_table.h"
#include "tools/bench/bench_timing.h"
#include "tools/bench/breakdown_calls.h"
#include "tools/bench/breakdown_phases.h"
#include "tools/bench/launch_floor.h"
#include "tools/bench/phase_records.h"
#include "tools/testing/alltoall_harness.h"

namespace ltx {
namespace {

constexpr uint64_t kSeed = 11;
// Ops whose records each rank keeps (the latest ones).
constexpr int kSamples = 512;

// What every configuration of one run shares.
struct Session {
  Runtime* runtime = nullptr;
  const AllToAllBreakdownConfig* config = nullptr;
  AllToAllHarness* harness = nullptr;
  PhaseRecords* records = nullptr;
  PhaseLayout layout;  // Of config->protocol's timed kernel.
  TimedRanks ranks;
};

// The options of rank `rank`'s calls in `c`.
CallOptions OptionsOf(const Session& s, const BreakdownCalls& c, int rank) {
  return BreakdownCallOptions(s.config->protocol, c, *s.records, rank);
}

absl::StatusOr<Measured> MeasureCalls(const Session& s, const BreakdownCalls& c) {
  const AllToAllShape shape = s.harness->current_case().Shape();
  return MeasureBreakdownCalls(s.config->timing, s.ranks, s.runtime->world_size(), c,
                               [&](int rank) {
                                 return s.runtime->AllToAllRank(rank, shape,
                                                                s.harness->Buffers(rank),
                                                                OptionsOf(s, c, rank));
                               });
}

// Measures `c` untimed, then timed, and prints the phase table.
absl::Status PhaseTable(const Session& s, BreakdownCalls c, const std::string& what) {
  LTX_ASSIGN_OR_RETURN(const Measured untimed, MeasureCalls(s, c));
  LTX_RETURN_IF_ERROR(s.records->Clear());
  c.timed = true;
  LTX_ASSIGN_OR_RETURN(const Measured timed, MeasureCalls(s, c));
  LTX_RETURN_IF_ERROR(s.harness->SynchronizeStreams());
  const std::string title = PhaseTableTitle(s.config->protocol, what, c, untimed, timed);
  LTX_ASSIGN_OR_RETURN(const std::string table, s.records->Table(title, s.layout));
  absl::PrintF("%s", table);
  std::fflush(stdout);
  return absl::OkStatus();
}

// Both call styles of one block count and early start; returns whether the output was wrong
// (after the last timed calls, and after one call on fresh inputs).
absl::StatusOr<bool> RunBlocks(const Session& s, int blocks, bool early, const std::string& what) {
  std::fprintf(stderr, "ltx_alltoall: breakdown, %s, blocks %d%s ...\n", what.c_str(), blocks,
               early ? ", early start" : "");
  for (const bool graph : {true, false}) {
    LTX_RETURN_IF_ERROR(
        PhaseTable(s, BreakdownCalls{blocks, early, /*timed=*/false, graph}, what));
  }
  bool wrong = !s.harness->Verify().ok();
  LTX_RETURN_IF_ERROR(s.harness->RefreshInputs());
  LTX_RETURN_IF_ERROR(s.runtime->AllToAllAndWait(s.harness->current_case().Shape(),
                                                 s.harness->AllBuffers(), absl::Seconds(60),
                                                 OptionsOf(s, BreakdownCalls{blocks, early}, 0)));
  if (!s.harness->Verify().ok()) wrong = true;
  return wrong;
}

}  // namespace

absl::StatusOr<int> RunAllToAllBreakdown(Runtime& runtime,
                                         const AllToAllBreakdownConfig& config) {
  if (config.protocol != Protocol::kOneTrip && config.protocol != Protocol::kDirect) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--protocol=%s: the breakdown times the one_trip or the direct kernel",
                        ProtocolName(config.protocol)));
  }
  const std::vector<int> devices = runtime.devices();
  const int world = runtime.world_size();
  const int64_t token_bytes = config.heads * config.head_dim * ElementSize(config.dtype);
  const int64_t tokens = std::max<int64_t>(1, config.per_rank_bytes * world / token_bytes);
  const int64_t capacity = (tokens / world + 1) * token_bytes;
  LTX_ASSIGN_OR_RETURN(std::unique_ptr<AllToAllHarness> harness,
                       AllToAllHarness::Create(devices, capacity, capacity, kSeed));
  LTX_ASSIGN_OR_RETURN(const int max_blocks, FloorBlocks(devices, 0, runtime.options().max_blocks));
  LTX_ASSIGN_OR_RETURN(std::unique_ptr<PhaseRecords> records,
                       PhaseRecords::Create(devices, kSamples, max_blocks));
  LTX_ASSIGN_OR_RETURN(EventPairs events, EventPairs::Create(devices));
  Session s;
  s.runtime = &runtime;
  s.config = &config;
  s.harness = harness.get();
  s.records = records.get();
  s.layout = PhaseLayoutOf(config.protocol);
  s.ranks.devices = devices;
  s.ranks.events = &events;
  int wrong = 0;
  for (const AllToAllDirection direction : config.directions) {
    AllToAllCase c;
    c.dtype = config.dtype;
    c.heads = config.heads;
    c.head_dim = config.head_dim;
    for (int r = 0; r < world; ++r) {
      c.token_counts.push_back(tokens / world + (r < tokens % world ? 1 : 0));
    }
    c.direction = direction;
    LTX_RETURN_IF_ERROR(harness->Prepare(c));
    s.ranks.streams.clear();
    for (int r = 0; r < world; ++r) s.ranks.streams.push_back(harness->Buffers(r).stream);
    const std::string what = absl::StrFormat(
        "%s per rank, %s", FormatBytes(harness->layout().InputBytes(0)), c.ToString());
    // Early start (one-trip only) last: whatever it does, everything else is printed by then.
    for (const bool early : {false, true}) {
      if (early && config.protocol != Protocol::kOneTrip) break;
      for (const int blocks : config.blocks) {
        LTX_ASSIGN_OR_RETURN(const bool failed, RunBlocks(s, blocks, early, what));
        if (failed) ++wrong;
      }
    }
  }
  return wrong;
}

}  // namespace ltx
