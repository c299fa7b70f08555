// A small model of how an inference server embeds ltx: one host thread per GPU runs
//   compute (this step's activations) -> AllGather (the whole sequence) -> compute (a reduction)
// captured once into a CUDA graph per GPU and replayed every step, with no host
// synchronisation between the GPUs; each step's result is checked against the host's answer.
#ifndef LTX_TOOLS_SERVER_EXAMPLE_SERVER_EXAMPLE_H_
#define LTX_TOOLS_SERVER_EXAMPLE_SERVER_EXAMPLE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ltx {

struct ServerExampleOptions {
  std::vector<int> devices;      // Empty: every visible GPU.
  int steps = 200;               // Graph replays per GPU.
  int64_t tokens_per_rank = 96;  // Rank r holds tokens_per_rank + 16 * r tokens (uneven).
  int64_t hidden = 1024;         // bf16-sized elements per token.
};

struct ServerExampleReport {
  int world_size = 0;
  int steps = 0;
  absl::Duration elapsed;  // Time of the steps (without the host's checks), slowest GPU thread.
};

// Runs the loop; returns the first error (a checksum that differs is DataLoss naming the rank
// and step; it stops the Runtime, so the other ranks end at once). FailedPrecondition without
// GPUs or peer access.
absl::StatusOr<ServerExampleReport> RunServerExample(const ServerExampleOptions& options);

}  // namespace ltx

#endif  // LTX_TOOLS_SERVER_EXAMPLE_SERVER_EXAMPLE_H_
