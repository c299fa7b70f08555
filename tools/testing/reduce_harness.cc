// Reduction cases on the shared GPU areas: shapes, random inputs, calls and bitwise checks.
#include "tools/testing/reduce_harness.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ltx/status_macros.h"
#include "tools/testing/rank_threads.h"
#include "tools/testing/reduce_reference.h"

namespace ltx {

AllReduceShape ReduceCase::AllReduceShapeOf() const {
  AllReduceShape shape;
  shape.dtype = dtype;
  shape.count = count;
  shape.reduction = reduction;
  return shape;
}

ReduceScatterShape ReduceCase::ReduceScatterShapeOf() const {
  ReduceScatterShape shape;
  shape.dtype = dtype;
  shape.batch = batch;
  shape.hidden = hidden;
  shape.token_counts = token_counts;
  shape.reduction = reduction;
  return shape;
}

std::string ReduceCase::ToString() const {
  const std::string shape =
      collective == Collective::kAllReduce
          ? absl::StrFormat("count=%d", count)
          : absl::StrFormat("batch=%d hidden=%d counts=[%s]", batch, hidden,
                            absl::StrJoin(token_counts, ","));
  return absl::StrFormat("%s %s %s %s misalign=%d/%d%s", CollectiveName(collective),
                         DataTypeName(dtype), ReductionName(reduction), shape, input_misalignment,
                         output_misalignment, in_place ? " in-place" : "");
}

ReduceHarness::ReduceHarness(std::unique_ptr<RankAreas> areas, uint64_t seed)
    : areas_(std::move(areas)), random_(seed) {}

absl::StatusOr<std::unique_ptr<ReduceHarness>> ReduceHarness::Create(std::vector<int> devices,
                                                                     int64_t capacity,
                                                                     uint64_t seed) {
  LTX_ASSIGN_OR_RETURN(std::unique_ptr<RankAreas> areas,
                       RankAreas::Create(std::move(devices), capacity, capacity, seed));
  return std::unique_ptr<ReduceHarness>(new ReduceHarness(std::move(areas), seed));
}

absl::Status ReduceHarness::Prepare(const ReduceCase& c) {
  case_ = c;
  if (c.collective == Collective::kAllReduce) {
    LTX_ASSIGN_OR_RETURN(layout_, ComputeAllReduceLayout(c.AllReduceShapeOf(), world_size()));
  } else {
    LTX_ASSIGN_OR_RETURN(layout_,
                         ComputeReduceScatterLayout(c.ReduceScatterShapeOf(), world_size()));
  }
  LTX_RETURN_IF_ERROR(RankAreas::CheckMisalignment(c.input_misalignment, c.output_misalignment));
  if (c.in_place && layout_.InPlaceOffset(0) == kNotInPlace) {
    return absl::InvalidArgumentError(
        absl::StrFormat("case %s: only the AllReduce is in place", c.ToString()));
  }
  if (layout_.InputBytes() > areas_->input_capacity()) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "case %s needs %d bytes per rank, the harness holds %d", c.ToString(),
        layout_.InputBytes(), areas_->input_capacity()));
  }
  return RefreshInputs();
}

absl::Status ReduceHarness::RefreshInputs() {
  inputs_.clear();
  for (int rank = 0; rank < world_size(); ++rank) {
    inputs_.push_back(
        RandomReduceValues(case_.dtype, layout_.InputBytes() / layout_.element_size, random_));
  }
  LTX_RETURN_IF_ERROR(areas_->UploadAndPoison(inputs_, case_.input_misalignment));
  if (!case_.in_place) return absl::OkStatus();
  // The poisoned output takes the input, where the calls will find it.
  for (int rank = 0; rank < world_size(); ++rank) {
    LTX_RETURN_IF_ERROR(areas_->CopyInputIntoOutput(rank, case_.input_misalignment,
                                                    case_.output_misalignment,
                                                    /*output_offset=*/0, layout_.InputBytes()));
  }
  return absl::OkStatus();
}

RankBuffers ReduceHarness::Buffers(int rank) const {
  RankBuffers buffers = areas_->Buffers(rank, case_.input_misalignment, case_.output_misalignment);
  if (case_.in_place) buffers.input = buffers.output;
  return buffers;
}

std::vector<RankBuffers> ReduceHarness::AllBuffers() const {
  std::vector<RankBuffers> all;
  for (int rank = 0; rank < world_size(); ++rank) all.push_back(Buffers(rank));
  return all;
}

absl::Status ReduceHarness::RankCall(Runtime& runtime, int rank, const CallOptions& call) {
  if (case_.collective == Collective::kAllReduce) {
    return runtime.AllReduceRank(rank, case_.AllReduceShapeOf(), Buffers(rank), call);
  }
  return runtime.ReduceScatterRank(rank, case_.ReduceScatterShapeOf(), Buffers(rank), call);
}

absl::Status ReduceHarness::Launch(Runtime& runtime, CallStyle style, const CallOptions& call,
                                   std::vector<int> ranks) {
  if (style == CallStyle::kCoordinated && ranks.empty()) {
    const std::vector<RankBuffers> buffers = AllBuffers();
    const absl::StatusOr<CollectiveHandle> handle =
        case_.collective == Collective::kAllReduce
            ? runtime.AllReduce(case_.AllReduceShapeOf(), buffers, call)
            : runtime.ReduceScatter(case_.ReduceScatterShapeOf(), buffers, call);
    return handle.status();
  }
  if (ranks.empty()) {
    for (int rank = 0; rank < world_size(); ++rank) ranks.push_back(rank);
  }
  return RunOnRankThreads(static_cast<int>(ranks.size()), [&](int index) {
    return RankCall(runtime, ranks[index], call);
  });
}

absl::Status ReduceHarness::Verify() {
  const int size = layout_.element_size;
  for (int rank = 0; rank < world_size(); ++rank) {
    const std::vector<uint8_t> expected = ReduceReference(layout_, rank, inputs_);
    auto describe = [size](int64_t offset) {
      return absl::StrFormat("element %d", offset / size);
    };
    LTX_RETURN_IF_ERROR(areas_->CheckArea(RankAreas::Area::kOutput, rank,
                                          case_.output_misalignment, expected,
                                          /*check_data=*/true, case_.ToString(), describe));
    LTX_RETURN_IF_ERROR(areas_->CheckInput(RankAreas::Area::kInput, rank,
                                           case_.input_misalignment, inputs_[rank],
                                           case_.ToString()));
  }
  return absl::OkStatus();
}

absl::Status RunAndVerify(Runtime& runtime, ReduceHarness& harness, const ReduceCase& c,
                          CallStyle style, const CallOptions& call) {
  LTX_RETURN_IF_ERROR(harness.Prepare(c));
  LTX_RETURN_IF_ERROR(harness.Launch(runtime, style, call));
  LTX_RETURN_IF_ERROR(runtime.Synchronize(kTestWait));
  return harness.Verify();
}

}  // namespace ltx
