// NCCL as the benchmarks use it: loaded at run time with a clique over the run's GPUs when it
// can be, or left out with a note saying why; its faster modes opened beside the plain one
// (symmetric windows on that clique; a second clique with a zero-CTA policy and its own windows
// for the copy-engine collectives), each with the reason when it cannot run; and ltx's data
// types as NCCL's.
#ifndef TOOLS_BENCH_NCCL_SIDE_H_
#define TOOLS_BENCH_NCCL_SIDE_H_

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "ltx/data_type.h"
#include "tools/bench/nccl_best.h"
#include "tools/bench/nccl_library.h"
#include "tools/bench/nccl_windows.h"

namespace ltx {

// The NCCL type of the same kind and size as `dtype`, or kUint8 (the bytes) where NCCL has none
// (int16, uint16, bool, complex): count NCCL's elements with NcclTypeSize.
tools::NcclType NcclTypeOf(DataType dtype);

// NCCL loaded at run time, or nothing. Members are destroyed in reverse order: windows before
// their cliques, cliques before the library.
struct NcclSide {
  std::unique_ptr<tools::NcclLibrary> library;
  std::unique_ptr<tools::NcclClique> clique;       // Null: no NCCL columns.
  std::unique_ptr<tools::NcclClique> ce_clique;    // Zero-CTA policy; null: not open.
  std::unique_ptr<tools::NcclWindows> windows;     // On `clique`; null: not open.
  std::unique_ptr<tools::NcclWindows> ce_windows;  // On `ce_clique`; null: not open.
  std::string version = "none";
  // Per NcclMode: why it cannot run this run ("" where it can, and for every mode when there is
  // no clique).
  std::array<std::string, kNcclModeCount> why_not;

  // Whether `mode` can run (a clique, and no reason against it).
  bool Runs(NcclMode mode) const;
};

// The '#' line a benchmark prints when ranks share GPUs: the timings are of a correctness and
// development mode, not of separate GPUs, and NCCL (which refuses two ranks on one GPU) is not
// compared.
std::string SharedGpusNote(const std::vector<int>& devices);

// Loads `path` and makes a clique over `devices`; an empty path loads nothing. When ranks share
// GPUs, or loading or ncclCommInitAll fails, prints a '#' note on stdout saying why and returns
// no clique. Sets NCCL_NVLS_ENABLE=0 in the environment first unless it is set (NVLS stays off
// in every comparison).
NcclSide LoadNccl(const std::string& path, const std::vector<int>& devices);

// Which of NCCL's faster modes a benchmark opens, and the buffers each rank needs in them.
struct NcclModeRequest {
  // Bytes of each buffer per rank (e.g. input and output), allocated in windows per mode.
  std::vector<size_t> buffer_bytes;
  // Why the benchmark does not use the mode at all (e.g. windows for point-to-point calls);
  // empty: it does, if the library can.
  std::string no_windows;
  std::string no_copy_engine;
};

// Opens what `request` asks on `nccl` (which has a clique): windows on its clique, and the
// copy-engine clique with its windows; records in nccl->why_not each mode that cannot run, with
// the reason (the benchmark's, the library's version, or NCCL's error). Nothing falls back: a
// mode either opens as asked or says why not. No-op without a clique.
void OpenNcclModes(const std::vector<int>& devices, const NcclModeRequest& request, NcclSide* nccl);

// The '#' lines that describe NCCL's modes on this run: what each column runs, or "n/a: why".
// Empty without a clique.
std::string NcclModesNote(const NcclSide& nccl);

}  // namespace ltx

#endif  // TOOLS_BENCH_NCCL_SIDE_H_
