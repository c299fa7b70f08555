// Runs one piece of work per rank on its own host thread, all released at once: how a server
// with one thread per GPU issues per-rank calls, and how the tools time them.
#ifndef LTX_TOOLS_TESTING_RANK_THREADS_H_
#define LTX_TOOLS_TESTING_RANK_THREADS_H_

#include <functional>

#include "absl/status/status.h"

namespace ltx {

// Starts `world` threads; each waits until all have started, then runs `body(rank)`. Returns
// when every thread has finished: the first non-OK status in rank order, or OK. `body` runs
// concurrently with itself and must be thread-safe across ranks; it selects its own device.
absl::Status RunOnRankThreads(int world, const std::function<absl::Status(int rank)>& body);

// Whether per-rank calls whose ranks disagree launched as they should: OK, or the disagreement
// itself (INVALID_ARGUMENT, or FAILED_PRECONDITION naming it), which a rank whose call comes
// after a peer's kernel has found it gets at once. Any other error is not.
bool LaunchedOrRefusedForTheDisagreement(const absl::Status& launched);

}  // namespace ltx

#endif  // LTX_TOOLS_TESTING_RANK_THREADS_H_
