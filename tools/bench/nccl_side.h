// NCCL as the benchmarks of ltx_allgather use it: loaded at run time with a clique over the
// run's GPUs when it can be, or left out with a note saying why; and ltx's data types as NCCL's.
#ifndef TOOLS_BENCH_NCCL_SIDE_H_
#define TOOLS_BENCH_NCCL_SIDE_H_

#include <memory>
#include <string>
#include <vector>

#include "ltx/data_type.h"
#include "tools/bench/nccl_library.h"

namespace ltx {

// The NCCL type of the same kind and size as `dtype`, or kUint8 (the bytes) where NCCL has none
// (int16, uint16, bool, complex): count NCCL's elements with NcclTypeSize.
tools::NcclType NcclTypeOf(DataType dtype);

// NCCL loaded at run time, or nothing.
struct NcclSide {
  std::unique_ptr<tools::NcclLibrary> library;
  std::unique_ptr<tools::NcclClique> clique;  // Null: no NCCL columns.
  std::string version = "none";
};

// The '#' line a benchmark prints when ranks share GPUs: the timings are of a correctness and
// development mode, not of separate GPUs, and NCCL (which refuses two ranks on one GPU) is not
// compared.
std::string SharedGpusNote(const std::vector<int>& devices);

// Loads `path` and makes a clique over `devices`; an empty path loads nothing. When ranks share
// GPUs, or loading or ncclCommInitAll fails, prints a '#' note on stdout saying why and returns
// no clique.
NcclSide LoadNccl(const std::string& path, const std::vector<int>& devices);

}  // namespace ltx

#endif  // TOOLS_BENCH_NCCL_SIDE_H_
