// One op of several tensors against as many calls: timing unit, cells and JSON.
#include "tools/bench/tensor_calls.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "ltx/status_macros.h"

namespace ltx {

LtxCall InTurn(std::vector<LtxCall> calls) {
  LtxCall in_turn;
  in_turn.rank = [calls](int rank) {
    for (const LtxCall& call : calls) LTX_RETURN_IF_ERROR(call.rank(rank));
    return absl::OkStatus();
  };
  in_turn.coordinated = [calls = std::move(calls)] {
    for (const LtxCall& call : calls) LTX_RETURN_IF_ERROR(call.coordinated());
    return absl::OkStatus();
  };
  return in_turn;
}

double OpOverCalls(const TensorCalls& t) {
  return t.op_us > 0 && t.calls_us > 0 ? t.op_us / t.calls_us : -1;
}

std::string TensorCallsTitles(int tensors) {
  if (tensors == 1) return "";
  return absl::StrFormat(" | %9s %10s %8s", absl::StrFormat("op(%d)us", tensors),
                         absl::StrFormat("calls(%d)us", tensors), "op/calls");
}

std::string TensorCallsCells(const TensorCalls& t) {
  if (t.tensors == 1) return "";
  return absl::StrFormat(" | %9.2f %10.2f %8.3f", t.op_us, t.calls_us, OpOverCalls(t));
}

double LtxUsAgainstNccl(const TensorCalls& t) { return t.tensors == 1 ? t.op_us : -1; }

std::string TensorCallsNote(int tensors) {
  if (tensors == 1) return "";
  return absl::StrFormat(
      "# (ltx: one op of %d tensors of the shape, its algbw and busbw over every tensor's bytes; "
      "size, count and NCCL: one tensor, so no speedup over NCCL; calls(%d)us: %d calls of one "
      "tensor each, one after another; op/calls: their ratio)\n",
      tensors, tensors, tensors);
}

JsonMembers TensorCallsJson(const TensorCalls& t) {
  if (t.tensors == 1) return JsonMembers();
  return JsonMembers()
      .Int("tensors", t.tensors)
      .Number("calls_us", t.calls_us)
      .Number("op_vs_calls", OpOverCalls(t));
}

}  // namespace ltx
