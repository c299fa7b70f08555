// One host thread per rank, released together by a spin on a start counter.
#include "tools/testing/rank_threads.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/strings/match.h"

namespace ltx {

absl::Status RunOnRankThreads(int world, const std::function<absl::Status(int rank)>& body) {
  std::vector<absl::Status> results(world);
  std::atomic<int> started{0};
  std::vector<std::thread> threads;
  threads.reserve(world);
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      started.fetch_add(1);
      while (started.load() < world) {
      }
      results[rank] = body(rank);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& result : results) {
    if (!result.ok()) return result;
  }
  return absl::OkStatus();
}

bool LaunchedOrRefusedForTheDisagreement(const absl::Status& launched) {
  return launched.ok() ||
         ((absl::IsInvalidArgument(launched) || absl::IsFailedPrecondition(launched)) &&
          absl::StrContains(launched.message(), "disagree"));
}

}  // namespace ltx
