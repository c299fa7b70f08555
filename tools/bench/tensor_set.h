// The buffers of a benchmark whose calls move several tensors of one shape in one op
// (AllToAllShape::tensors, AllGatherShape::tensors): one harness per tensor (its own random
// input, poisoned output and host reference) over the same GPUs, tensor j's buffers passed as
// RankBuffers' tensor j (input/output for tensor 0, more_inputs/more_outputs[j - 1] after it),
// every tensor checked byte-exact. `Harness` is a collective's harness of tools/testing
// (AllGatherHarness, AllToAllHarness). Not thread-safe.
#ifndef TOOLS_BENCH_TENSOR_SET_H_
#define TOOLS_BENCH_TENSOR_SET_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ltx/rank_buffers.h"
#include "ltx/status_macros.h"

namespace ltx {

// Every rank's buffers of one call of several tensors: tensors[j] (every rank's buffers of
// tensor j, 1 <= tensors.size() <= kMaxTensors, all of the same ranks) as tensor j, on tensor
// 0's streams. Thread-safe (pure).
std::vector<RankBuffers> JoinTensors(const std::vector<std::vector<RankBuffers>>& tensors);

template <typename Harness>
class TensorSet {
 public:
  // `tensors` harnesses (1..kMaxTensors) on `devices`, each with the capacities of
  // Harness::Create; tensor j's data from seed + j. The other tensors borrow tensor 0's streams
  // (few streams that carry work: kernels/PROTOCOL.md, "Ranks that share a GPU"). Errors: as
  // Harness::Create reports them.
  static absl::StatusOr<TensorSet> Create(const std::vector<int>& devices, int tensors,
                                          int64_t input_capacity, int64_t output_capacity,
                                          uint64_t seed) {
    TensorSet set;
    std::vector<cudaStream_t> streams;  // Tensor 0's, once it exists.
    for (int tensor = 0; tensor < tensors; ++tensor) {
      LTX_ASSIGN_OR_RETURN(
          std::unique_ptr<Harness> harness,
          Harness::Create(devices, input_capacity, output_capacity, seed + tensor, streams));
      if (tensor == 0) {
        for (int rank = 0; rank < harness->world_size(); ++rank) {
          streams.push_back(harness->Buffers(rank).stream);
        }
      }
      set.harnesses_.push_back(std::move(harness));
    }
    return set;
  }
  // No tensors, until one made by Create is moved in.
  TensorSet() = default;
  TensorSet(TensorSet&&) = default;
  TensorSet& operator=(TensorSet&& other) {
    Release();
    harnesses_ = std::move(other.harnesses_);
    return *this;
  }
  ~TensorSet() { Release(); }

  int count() const { return static_cast<int>(harnesses_.size()); }
  // Tensor `tensor`'s harness; tensor 0's streams are every call's.
  Harness& at(int tensor) const { return *harnesses_[tensor]; }

  // Makes `c` current in every tensor (fresh inputs, poisoned outputs), as Harness::Prepare.
  template <typename Case>
  absl::Status Prepare(const Case& c) {
    for (const auto& harness : harnesses_) LTX_RETURN_IF_ERROR(harness->Prepare(c));
    return absl::OkStatus();
  }

  // Fresh inputs and poisoned outputs in every tensor, as Harness::RefreshInputs.
  absl::Status RefreshInputs() {
    for (const auto& harness : harnesses_) LTX_RETURN_IF_ERROR(harness->RefreshInputs());
    return absl::OkStatus();
  }

  // Every rank's buffers of a single-tensor call of tensor `tensor`, on tensor 0's streams (the
  // streams every call is timed on).
  std::vector<RankBuffers> TensorBuffers(int tensor) const {
    std::vector<RankBuffers> buffers = harnesses_[tensor]->AllBuffers();
    const std::vector<RankBuffers> first = harnesses_[0]->AllBuffers();
    for (size_t rank = 0; rank < buffers.size(); ++rank) buffers[rank].stream = first[rank].stream;
    return buffers;
  }

  // Every rank's buffers of one call of every tensor (JoinTensors).
  std::vector<RankBuffers> AllBuffers() const {
    std::vector<std::vector<RankBuffers>> tensors;
    for (const auto& harness : harnesses_) tensors.push_back(harness->AllBuffers());
    return JoinTensors(tensors);
  }

  // Checks every tensor as Harness::Verify; the first error, prefixed with "tensor j: ".
  absl::Status Verify() {
    for (int tensor = 0; tensor < count(); ++tensor) {
      const absl::Status status = harnesses_[tensor]->Verify();
      if (!status.ok()) {
        return absl::Status(status.code(), absl::StrCat("tensor ", tensor, ": ", status.message()));
      }
    }
    return absl::OkStatus();
  }

 private:
  // Tensor 0, whose streams the others borrow, goes last.
  void Release() {
    while (!harnesses_.empty()) harnesses_.pop_back();
  }

  std::vector<std::unique_ptr<Harness>> harnesses_;
};

}  // namespace ltx

#endif  // TOOLS_BENCH_TENSOR_SET_H_
