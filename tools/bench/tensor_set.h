// The buffers of a benchmark whose calls move several tensors of one shape in one op
// (AllToAllShape::tensors, AllGatherShape::tensors): one harness per tensor (its own random
// input, poisoned output and host reference) over the same GPUs, tensor j's buffers passed as
// RankBuffers' tensor j (input/output for tensor 0, more_inputs/more_outputs[j - 1] after it),
// every tensor checked byte-exact. `Harness` is a collective's harness of tools/testing
// (AllGatherHarness, AllToAllHarness). Not thread-safe.
#ifndef TOOLS_BENCH_TENSOR_SET_H_
#define TOOLS_BENCH_TENSOR_SET_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ltx/rank_buffers.h"
#include "ltx/status_macros.h"
#include "tools/testing/harness_set.h"

namespace ltx {

// Every rank's buffers of one call of several tensors: tensors[j] (every rank's buffers of
// tensor j, 1 <= tensors.size() <= kMaxTensors, all of the same ranks) as tensor j, on tensor
// 0's streams. Thread-safe (pure).
std::vector<RankBuffers> JoinTensors(const std::vector<std::vector<RankBuffers>>& tensors);

template <typename Harness>
class TensorSet {
 public:
  // `tensors` harnesses (1..kMaxTensors) on `devices`, each with the capacities of
  // Harness::Create; tensor j's data from seed + j; all on tensor 0's streams (HarnessSet).
  // Errors: as Harness::Create reports them.
  static absl::StatusOr<TensorSet> Create(const std::vector<int>& devices, int tensors,
                                          int64_t input_capacity, int64_t output_capacity,
                                          uint64_t seed) {
    TensorSet set;
    LTX_ASSIGN_OR_RETURN(set.harnesses_,
                         HarnessSet<Harness>::Create(devices, tensors, input_capacity,
                                                     output_capacity,
                                                     [seed](int tensor) { return seed + tensor; }));
    return set;
  }

  int count() const { return harnesses_.size(); }
  // Tensor `tensor`'s harness; tensor 0's streams are every call's.
  Harness& at(int tensor) const { return harnesses_[tensor]; }

  // Makes `c` current in every tensor (fresh inputs, poisoned outputs), as Harness::Prepare.
  template <typename Case>
  absl::Status Prepare(const Case& c) {
    for (int tensor = 0; tensor < count(); ++tensor) {
      LTX_RETURN_IF_ERROR(harnesses_[tensor].Prepare(c));
    }
    return absl::OkStatus();
  }

  // Fresh inputs and poisoned outputs in every tensor, as Harness::RefreshInputs.
  absl::Status RefreshInputs() {
    for (int tensor = 0; tensor < count(); ++tensor) {
      LTX_RETURN_IF_ERROR(harnesses_[tensor].RefreshInputs());
    }
    return absl::OkStatus();
  }

  // Every rank's buffers of a single-tensor call of tensor `tensor`, on tensor 0's streams (the
  // streams every call is timed on).
  std::vector<RankBuffers> TensorBuffers(int tensor) const {
    return harnesses_[tensor].AllBuffers();
  }

  // Every rank's buffers of one call of every tensor (JoinTensors).
  std::vector<RankBuffers> AllBuffers() const {
    std::vector<std::vector<RankBuffers>> tensors;
    for (int tensor = 0; tensor < count(); ++tensor) {
      tensors.push_back(harnesses_[tensor].AllBuffers());
    }
    return JoinTensors(tensors);
  }

  // Checks every tensor as Harness::Verify; the first error, prefixed with "tensor j: ".
  absl::Status Verify() {
    for (int tensor = 0; tensor < count(); ++tensor) {
      const absl::Status status = harnesses_[tensor].Verify();
      if (!status.ok()) {
        return absl::Status(status.code(), absl::StrCat("tensor ", tensor, ": ", status.message()));
      }
    }
    return absl::OkStatus();
  }

 private:
  HarnessSet<Harness> harnesses_;
};

}  // namespace ltx

#endif  // TOOLS_BENCH_TENSOR_SET_H_
