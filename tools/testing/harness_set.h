// Several harnesses of one collective (AllGatherHarness or AllToAllHarness) over the same ranks,
// all on the first one's streams: it creates a stream per rank and the others borrow them, so a
// process with many harnesses still has one stream per rank that carries work (which keeps
// ranks that share a GPU off each other's hardware queues: kernels/PROTOCOL.md, "Ranks that
// share a GPU"). The first harness, whose streams the others borrow, is destroyed last.
#ifndef LTX_TOOLS_TESTING_HARNESS_SET_H_
#define LTX_TOOLS_TESTING_HARNESS_SET_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ltx/status_macros.h"

namespace ltx {

template <typename Harness>
class HarnessSet {
 public:
  // `count` harnesses over `devices`, each as Harness::Create makes it with these capacities,
  // harness i's data from seed_of(i). Errors: those of Harness::Create.
  static absl::StatusOr<HarnessSet> Create(const std::vector<int>& devices, int count,
                                           int64_t input_capacity, int64_t output_capacity,
                                           const std::function<uint64_t(int)>& seed_of) {
    HarnessSet set;
    std::vector<cudaStream_t> streams;  // The first harness's, once it exists.
    for (int i = 0; i < count; ++i) {
      LTX_ASSIGN_OR_RETURN(
          std::unique_ptr<Harness> harness,
          Harness::Create(devices, input_capacity, output_capacity, seed_of(i), streams));
      if (i == 0) {
        for (int rank = 0; rank < harness->world_size(); ++rank) {
          streams.push_back(harness->Buffers(rank).stream);
        }
      }
      set.harnesses_.push_back(std::move(harness));
    }
    return set;
  }

  // No harness, until one made by Create is moved in.
  HarnessSet() = default;
  HarnessSet(HarnessSet&&) = default;
  HarnessSet& operator=(HarnessSet&& other) {
    Release();
    harnesses_ = std::move(other.harnesses_);
    return *this;
  }
  ~HarnessSet() { Release(); }

  int size() const { return static_cast<int>(harnesses_.size()); }
  // Harness `i`; every harness's buffers are on the same streams.
  Harness& operator[](int i) const { return *harnesses_[i]; }

 private:
  void Release() {
    while (!harnesses_.empty()) harnesses_.pop_back();
  }

  std::vector<std::unique_ptr<Harness>> harnesses_;
};

}  // namespace ltx

#endif  // LTX_TOOLS_TESTING_HARNESS_SET_H_
