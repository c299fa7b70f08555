// All-to-all cases on the shared GPU areas: shapes, the host reference and checks.
#include "tools/testing/alltoall_harness.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ltx/data_type.h"
#include "ltx/status_macros.h"
#include "tools/testing/fp8_reference.h"

namespace ltx {

AllToAllShape AllToAllCase::Shape() const {
  AllToAllShape shape;
  shape.dtype = dtype;
  shape.batch = batch;
  shape.heads = heads;
  shape.head_dim = head_dim;
  shape.token_counts = token_counts;
  shape.direction = direction;
  shape.head_counts = head_counts;
  shape.wire = wire;
  return shape;
}

std::string AllToAllCase::ToString() const {
  const std::string split =
      head_counts.empty() ? ""
                          : absl::StrFormat(" head_counts=[%s]", absl::StrJoin(head_counts, ","));
  return absl::StrFormat("%s %s batch=%d heads=%d head_dim=%d counts=[%s]%s misalign=%d/%d%s",
                         direction == AllToAllDirection::kSeqToHeads ? "seq->heads" : "heads->seq",
                         DataTypeName(dtype), batch, heads, head_dim,
                         absl::StrJoin(token_counts, ","), split, input_misalignment,
                         output_misalignment,
                         wire == WireFormat::kNative ? "" : " wire=fp8_e4m3");
}

std::vector<std::vector<uint8_t>> AllToAllReference(
    const AllToAllLayout& layout, const std::vector<std::vector<uint8_t>>& inputs) {
  const AllToAllGeometry& g = layout.geometry;
  const int world = layout.world_size;
  const int64_t head_bytes = layout.head_dim * ElementSize(layout.dtype);
  std::vector<std::vector<uint8_t>> outputs(world);
  for (int r = 0; r < world; ++r) outputs[r].resize(layout.OutputBytes(r));
  for (int s = 0; s < world; ++s) {    // The rank that holds the tokens on the sequence side.
    for (int h = 0; h < world; ++h) {  // The rank that holds head group h on the heads side.
      // head_counts[h] heads after those of the ranks before h: one token's bytes of them.
      int64_t heads_before = 0;
      for (int k = 0; k < h; ++k) heads_before += layout.head_counts[k];
      const int64_t group = layout.head_counts[h] * head_bytes;
      if (group == 0) continue;
      for (int64_t b = 0; b < g.batch; ++b) {
        for (int64_t i = 0; i < g.token_counts[s]; ++i) {
          // [batch, count_s, heads, head_dim] and [batch, total, head_counts[h], head_dim].
          const int64_t sequence =
              (b * g.token_counts[s] + i) * g.token_bytes + heads_before * head_bytes;
          const int64_t heads = (b * g.total_tokens + g.prefix_tokens[s] + i) * group;
          uint8_t* to = g.heads_to_seq ? outputs[s].data() + sequence : outputs[h].data() + heads;
          const uint8_t* from =
              g.heads_to_seq ? inputs[h].data() + heads : inputs[s].data() + sequence;
          std::memcpy(to, from, group);
          if (layout.wire == WireFormat::kFp8E4M3 && s != h) {
            for (int64_t head = 0; head < layout.head_counts[h]; ++head) {
              uint8_t* vector = to + head * head_bytes;
              Fp8WireRow(layout.dtype, vector, layout.head_dim, vector);
            }
          }
        }
      }
    }
  }
  return outputs;
}

AllToAllHarness::AllToAllHarness(std::unique_ptr<RankAreas> areas) : areas_(std::move(areas)) {}

absl::StatusOr<std::unique_ptr<AllToAllHarness>> AllToAllHarness::Create(
    std::vector<int> devices, int64_t input_capacity, int64_t output_capacity, uint64_t seed,
    const std::vector<cudaStream_t>& streams) {
  LTX_ASSIGN_OR_RETURN(
      std::unique_ptr<RankAreas> areas,
      RankAreas::Create(std::move(devices), input_capacity, output_capacity, seed, streams));
  return std::unique_ptr<AllToAllHarness>(new AllToAllHarness(std::move(areas)));
}

absl::Status AllToAllHarness::Prepare(const AllToAllCase& c) {
  case_ = c;
  swapped_ = false;
  LTX_ASSIGN_OR_RETURN(layout_, ComputeAllToAllLayout(case_.Shape(), world_size()));
  LTX_RETURN_IF_ERROR(RankAreas::CheckMisalignment(c.input_misalignment, c.output_misalignment));
  const int64_t capacity = std::min(areas_->input_capacity(), areas_->output_capacity());
  for (int rank = 0; rank < world_size(); ++rank) {
    const int64_t needed = std::max(layout_.InputBytes(rank), layout_.OutputBytes(rank));
    if (needed > capacity) {
      return absl::ResourceExhaustedError(
          absl::StrFormat("case %s needs %d bytes per buffer on rank %d, the harness holds %d",
                          c.ToString(), needed, rank, capacity));
    }
  }
  return RefreshInputs();
}

absl::Status AllToAllHarness::RefreshInputs() {
  swapped_ = false;  // Fresh inputs go to the input areas, whichever op is current.
  inputs_.assign(world_size(), {});
  for (int rank = 0; rank < world_size(); ++rank) {
    inputs_[rank].resize(layout_.InputBytes(rank));
    areas_->FillRandom(&inputs_[rank]);
  }
  expected_ = AllToAllReference(layout_, inputs_);
  return areas_->UploadAndPoison(inputs_, case_.input_misalignment);
}

absl::Status AllToAllHarness::PrepareInverse() {
  case_.direction = case_.direction == AllToAllDirection::kSeqToHeads
                        ? AllToAllDirection::kHeadsToSeq
                        : AllToAllDirection::kSeqToHeads;
  std::swap(case_.input_misalignment, case_.output_misalignment);
  LTX_ASSIGN_OR_RETURN(layout_, ComputeAllToAllLayout(case_.Shape(), world_size()));
  swapped_ = !swapped_;
  std::swap(inputs_, expected_);
  if (case_.wire != WireFormat::kNative) expected_ = AllToAllReference(layout_, inputs_);
  return areas_->Poison(swapped_ ? RankAreas::Area::kInput : RankAreas::Area::kOutput);
}

RankBuffers AllToAllHarness::Buffers(int rank) const {
  return areas_->Buffers(rank, case_.input_misalignment, case_.output_misalignment, swapped_);
}

std::vector<RankBuffers> AllToAllHarness::AllBuffers() const {
  std::vector<RankBuffers> all;
  for (int rank = 0; rank < world_size(); ++rank) all.push_back(Buffers(rank));
  return all;
}

absl::Status AllToAllHarness::Verify() { return Check(/*check_data=*/true); }

absl::Status AllToAllHarness::VerifyGuards() { return Check(/*check_data=*/false); }

absl::Status AllToAllHarness::Check(bool check_data) {
  for (int rank = 0; rank < world_size(); ++rank) {
    const int64_t row_bytes = case_.direction == AllToAllDirection::kSeqToHeads
                                  ? layout_.geometry.group_bytes[rank]
                                  : layout_.geometry.token_bytes;
    // An empty output has no rows to describe; 1 keeps the division defined.
    const int64_t token_row = std::max<int64_t>(row_bytes, 1);
    auto describe = [token_row](int64_t offset) {
      return absl::StrFormat("token row %d, byte %d of the row", offset / token_row,
                             offset % token_row);
    };
    LTX_RETURN_IF_ERROR(
        areas_->CheckArea(swapped_ ? RankAreas::Area::kInput : RankAreas::Area::kOutput, rank,
                          case_.output_misalignment, expected_[rank], check_data,
                          case_.ToString(), describe));
    LTX_RETURN_IF_ERROR(
        areas_->CheckInput(swapped_ ? RankAreas::Area::kOutput : RankAreas::Area::kInput, rank,
                           case_.input_misalignment, inputs_[rank], case_.ToString()));
  }
  return absl::OkStatus();
}

}  // namespace ltx
