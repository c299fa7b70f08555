// The phase layouts of the one-trip and the direct kernel.
#include "tools/bench/breakdown_phases.h"

#include "kernels/wire/phase_timestamps.h"

namespace ltx {
namespace {

template <typename Phase>
constexpr int Index(Phase phase) {
  return static_cast<int>(phase);
}

PhaseLayout OneTripLayout() {
  PhaseLayout layout;
  layout.phases = kPhaseCount<OneTripPhase>;
  layout.labels = {
      "start (first block)", "sent",     "own shard copied", "headers checked (block 0)",
      "last line arrived",   "unpacked", "end (last block)"};
  layout.trips = {
      {"sent to peer's last line", Index(OneTripPhase::kSent), Index(OneTripPhase::kLastArrived)}};
  return layout;
}

PhaseLayout DirectLayout() {
  PhaseLayout layout;
  layout.phases = kPhaseCount<DirectPhase>;
  layout.labels = {
      "start (first block)", "entry published, stores claimed", "first lane's target entry seen",
      "first store issued",  "stores done (last block)",        "system fence done",
      "blocks_done counted", "exit flags stored (last block)",  "every peer's exit flag seen",
      "end (last block)"};
  layout.store_begin = Index(DirectPhase::kFirstStore);
  layout.store_end = Index(DirectPhase::kStoresDone);
  layout.trips = {{"entry published to peer's target entry seen",
                   Index(DirectPhase::kEntryPublished), Index(DirectPhase::kTargetSeen)},
                  {"exit flags stored to peer's exit flags seen",
                   Index(DirectPhase::kExitFlagsStored), Index(DirectPhase::kExitFlagsSeen)}};
  return layout;
}

}  // namespace

PhaseLayout PhaseLayoutOf(Protocol protocol) {
  switch (protocol) {
    case Protocol::kOneTrip:
      return OneTripLayout();
    case Protocol::kDirect:
      return DirectLayout();
    default:
      return PhaseLayout();
  }
}

}  // namespace ltx
