// One op of N tensors against N calls of one tensor each (--tensors N): the N calls as one
// timed unit, and the columns and JSON members both tools (ltx_allgather, ltx_alltoall) add to
// a row for N > 1: the op's time, the N calls' time and their ratio. The goal they measure: one
// op of N tensors clearly faster than N calls at small sizes.
#ifndef TOOLS_BENCH_TENSOR_CALLS_H_
#define TOOLS_BENCH_TENSOR_CALLS_H_

#include <string>
#include <vector>

#include "tools/bench/json_document.h"
#include "tools/bench/style_timing.h"

namespace ltx {

// The LtxCall that issues every call of `calls` (one per tensor) in turn: rank(r) each one's
// per-rank call of rank r, coordinated() each one's coordinated call; the first error stops it.
LtxCall InTurn(std::vector<LtxCall> calls);

// One row's op of `tensors` tensors (op_us) against `tensors` single-tensor calls (calls_us);
// times in us, -1: not measured.
struct TensorCalls {
  int tensors = 1;
  double op_us = -1;
  double calls_us = -1;
};

// op_us / calls_us (below 1: the one op is faster); -1 unless both were measured.
double OpOverCalls(const TensorCalls& t);

// The ltx time that the NCCL columns, which move one tensor, are set against (their speedup):
// op_us for one tensor; -1 (no speedup) for more, whose op moves every tensor's bytes.
// Thread-safe (pure).
double LtxUsAgainstNccl(const TensorCalls& t);

// The column titles, " | op(N)us calls(N)us op/calls", and a row's cells under them; both
// empty for one tensor. Thread-safe (pure).
std::string TensorCallsTitles(int tensors);
std::string TensorCallsCells(const TensorCalls& t);

// The header line that says what the columns mean for more than one tensor (ltx's time and
// bandwidths: the op of every tensor; size, count and NCCL: one tensor), ending in a newline;
// empty for one tensor. Thread-safe (pure).
std::string TensorCallsNote(int tensors);

// A row's JSON members for more than one tensor (none for one): "tensors", "calls_us" and
// "op_vs_calls" (OpOverCalls). Thread-safe (pure).
JsonMembers TensorCallsJson(const TensorCalls& t);

}  // namespace ltx

#endif  // TOOLS_BENCH_TENSOR_CALLS_H_
