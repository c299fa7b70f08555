// AllGather cases on the shared GPU areas: shapes, expected outputs and checks.
#include "tools/testing/allgather_harness.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ltx/status_macros.h"
#include "tools/testing/fp8_reference.h"

namespace ltx {

AllGatherShape AllGatherCase::Shape() const {
  AllGatherShape shape;
  shape.dtype = dtype;
  shape.batch = batch;
  shape.hidden = hidden;
  shape.token_counts = token_counts;
  shape.wire = wire;
  return shape;
}

std::string AllGatherCase::ToString() const {
  return absl::StrFormat("%s batch=%d hidden=%d counts=[%s] misalign=%d/%d%s%s",
                         DataTypeName(dtype), batch, hidden, absl::StrJoin(token_counts, ","),
                         input_misalignment, output_misalignment, in_place ? " in-place" : "",
                         wire == WireFormat::kNative ? "" : " wire=fp8_e4m3");
}

AllGatherHarness::AllGatherHarness(std::unique_ptr<RankAreas> areas) : areas_(std::move(areas)) {}

AllGatherHarness::~AllGatherHarness() = default;

absl::StatusOr<std::unique_ptr<AllGatherHarness>> AllGatherHarness::Create(
    std::vector<int> devices, int64_t input_capacity, int64_t output_capacity, uint64_t seed,
    const std::vector<cudaStream_t>& streams) {
  LTX_ASSIGN_OR_RETURN(
      std::unique_ptr<RankAreas> areas,
      RankAreas::Create(std::move(devices), input_capacity, output_capacity, seed, streams));
  return std::unique_ptr<AllGatherHarness>(new AllGatherHarness(std::move(areas)));
}

absl::Status AllGatherHarness::Prepare(const AllGatherCase& c) {
  case_ = c;
  LTX_ASSIGN_OR_RETURN(layout_, ComputeAllGatherLayout(case_.Shape(), world_size()));
  LTX_RETURN_IF_ERROR(RankAreas::CheckMisalignment(c.input_misalignment, c.output_misalignment));
  if (c.in_place && layout_.InPlaceOffset(0) == kNotInPlace) {
    return absl::InvalidArgumentError(
        absl::StrFormat("case %s: in-place inputs need batch 1", c.ToString()));
  }
  if (layout_.output_bytes > areas_->output_capacity()) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("case %s needs %d output bytes, the harness holds %d", c.ToString(),
                        layout_.output_bytes, areas_->output_capacity()));
  }
  for (int rank = 0; rank < world_size(); ++rank) {
    if (layout_.InputBytes(rank) > areas_->input_capacity()) {
      return absl::ResourceExhaustedError(
          absl::StrFormat("case %s needs %d input bytes on rank %d, the harness holds %d",
                          c.ToString(), layout_.InputBytes(rank), rank, areas_->input_capacity()));
    }
  }
  return RefreshInputs();
}

absl::Status AllGatherHarness::RefreshInputs() {
  const int64_t row = layout_.row_bytes;
  expected_.assign(layout_.output_bytes, 0);
  inputs_.assign(world_size(), {});
  for (int rank = 0; rank < world_size(); ++rank) {
    inputs_[rank].resize(layout_.InputBytes(rank));
    areas_->FillRandom(&inputs_[rank]);
    const int64_t slice = layout_.token_counts[rank] * row;
    for (int64_t b = 0; b < layout_.batch; ++b) {
      std::memcpy(expected_.data() + (b * layout_.total_tokens + layout_.prefix_tokens[rank]) * row,
                  inputs_[rank].data() + b * slice, slice);
    }
  }
  expected_by_rank_.clear();
  if (case_.wire == WireFormat::kFp8E4M3) {
    // Every rank's peers' rows as they arrive decoded; its own stay exact.
    const int64_t hidden = row / ElementSize(case_.dtype);
    std::vector<uint8_t> decoded = expected_;
    for (int64_t offset = 0; offset < layout_.output_bytes; offset += row) {
      Fp8WireRow(case_.dtype, expected_.data() + offset, hidden, decoded.data() + offset);
    }
    for (int rank = 0; rank < world_size(); ++rank) {
      std::vector<uint8_t> mine = decoded;
      const int64_t slice = layout_.token_counts[rank] * row;
      for (int64_t b = 0; b < layout_.batch; ++b) {
        const int64_t at = (b * layout_.total_tokens + layout_.prefix_tokens[rank]) * row;
        std::memcpy(mine.data() + at, expected_.data() + at, slice);
      }
      expected_by_rank_.push_back(std::move(mine));
    }
  }
  LTX_RETURN_IF_ERROR(areas_->UploadAndPoison(inputs_, case_.input_misalignment));
  if (!case_.in_place) return absl::OkStatus();
  // The poisoned output's own slot takes the input, where the calls will find it.
  for (int rank = 0; rank < world_size(); ++rank) {
    LTX_RETURN_IF_ERROR(areas_->CopyInputIntoOutput(
        rank, case_.input_misalignment, case_.output_misalignment, layout_.InPlaceOffset(rank),
        layout_.InputBytes(rank)));
  }
  return absl::OkStatus();
}

RankBuffers AllGatherHarness::Buffers(int rank) const {
  RankBuffers buffers = areas_->Buffers(rank, case_.input_misalignment, case_.output_misalignment);
  if (case_.in_place) {
    buffers.input = static_cast<const uint8_t*>(buffers.output) + layout_.InPlaceOffset(rank);
  }
  return buffers;
}

std::vector<RankBuffers> AllGatherHarness::AllBuffers() const {
  std::vector<RankBuffers> all;
  for (int rank = 0; rank < world_size(); ++rank) all.push_back(Buffers(rank));
  return all;
}

absl::Status AllGatherHarness::SynchronizeStreams() { return areas_->SynchronizeStreams(); }

absl::Status AllGatherHarness::Verify() { return Check(/*check_data=*/true); }

absl::Status AllGatherHarness::VerifyGuards() { return Check(/*check_data=*/false); }

absl::Status AllGatherHarness::Check(bool check_data) {
  auto describe = [this](int64_t offset) {
    const int64_t token = offset / layout_.row_bytes % layout_.total_tokens;
    int source = 0;
    while (source + 1 < world_size() && layout_.prefix_tokens[source + 1] <= token) ++source;
    return absl::StrFormat("batch %d, token %d from rank %d",
                           offset / (layout_.row_bytes * layout_.total_tokens), token, source);
  };
  for (int rank = 0; rank < world_size(); ++rank) {
    LTX_RETURN_IF_ERROR(areas_->CheckArea(
        RankAreas::Area::kOutput, rank, case_.output_misalignment,
        expected_by_rank_.empty() ? expected_ : expected_by_rank_[rank], check_data,
        case_.ToString(), describe));
    LTX_RETURN_IF_ERROR(areas_->CheckInput(RankAreas::Area::kInput, rank, case_.input_misalignment,
                                           inputs_[rank], case_.ToString()));
  }
  return absl::OkStatus();
}

}  // namespace ltx
