// What the phase breakdown knows of each protocol's timed kernel (kernels/wire/phase_timestamps.h):
// how many phases a record holds, what the table calls each, between which phases a block
// stores, and which pairs of phases make a cross-GPU round trip. Plain data, no GPU.
#ifndef TOOLS_BENCH_BREAKDOWN_PHASES_H_
#define TOOLS_BENCH_BREAKDOWN_PHASES_H_

#include <string>
#include <vector>

#include "ltx/runtime_options.h"

namespace ltx {

// A round trip between two ranks: `sent` is when one rank told the other (on its clock), `seen`
// when the other saw it (on the other's clock).
struct TripPhases {
  std::string name;
  int sent = 0;
  int seen = 0;
};

// One protocol's phases, indexed as its phase enum (OneTripPhase, DirectPhase).
struct PhaseLayout {
  int phases = 0;                   // kPhaseCount of the enum.
  std::vector<std::string> labels;  // Per phase, as the table prints it.
  int store_begin = -1;             // The phase at which a block starts storing (-1: none).
  int store_end = -1;               // The phase by which its stores are done (-1: none).
  std::vector<TripPhases> trips;
};

// The layout of the timed kernel of `protocol`: kOneTrip (OneTripPhase) or kDirect
// (DirectPhase); any other protocol has no timed kernel and gets an empty layout (0 phases).
PhaseLayout PhaseLayoutOf(Protocol protocol);

}  // namespace ltx

#endif  // TOOLS_BENCH_BREAKDOWN_PHASES_H_
