// Loading NCCL and opening its modes for the benchmarks, and the type mapping.
#include "tools/bench/nccl_side.h"

#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ltx/runtime/rank_placement.h"

namespace ltx {

tools::NcclType NcclTypeOf(DataType dtype) {
  switch (dtype) {
    case DataType::kBFloat16:
      return tools::NcclType::kBfloat16;
    case DataType::kFloat16:
      return tools::NcclType::kFloat16;
    case DataType::kFloat32:
      return tools::NcclType::kFloat32;
    case DataType::kFloat8E4M3:
      return tools::NcclType::kFloat8E4M3;
    case DataType::kFloat8E5M2:
      return tools::NcclType::kFloat8E5M2;
    case DataType::kInt8:
      return tools::NcclType::kInt8;
    case DataType::kInt32:
      return tools::NcclType::kInt32;
    case DataType::kUint32:
      return tools::NcclType::kUint32;
    case DataType::kInt64:
      return tools::NcclType::kInt64;
    case DataType::kUint64:
      return tools::NcclType::kUint64;
    case DataType::kFloat64:
      return tools::NcclType::kFloat64;
    case DataType::kUint8:
    case DataType::kInt16:
    case DataType::kUint16:
    case DataType::kBool:
    case DataType::kComplex64:
    case DataType::kComplex128:
      break;
  }
  return tools::NcclType::kUint8;
}

std::string SharedGpusNote(const std::vector<int>& devices) {
  return absl::StrFormat(
      "# ranks share GPUs (devices %s): a correctness and development mode, not a fast one; "
      "these times are not those of separate GPUs, and NCCL, which refuses two ranks on one GPU, "
      "is not compared\n",
      absl::StrJoin(devices, ","));
}

bool NcclSide::Runs(NcclMode mode) const {
  return clique != nullptr && why_not[static_cast<int>(mode)].empty();
}

NcclSide LoadNccl(const std::string& path, const std::vector<int>& devices) {
  NcclSide nccl;
  setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
  if (RanksShareGpus(devices)) {
    absl::PrintF("%s", SharedGpusNote(devices));
    return nccl;
  }
  if (path.empty()) return nccl;
  auto loaded = tools::NcclLibrary::Load(path);
  if (!loaded.ok()) {
    absl::PrintF("# NCCL not available (%s); no NCCL comparison\n", loaded.status().ToString());
    return nccl;
  }
  nccl.library = std::move(*loaded);
  auto made = tools::NcclClique::Create(*nccl.library, devices);
  if (!made.ok()) {
    absl::PrintF("# NCCL %s loaded but ncclCommInitAll failed: %s; no NCCL comparison\n",
                 nccl.library->Version(), made.status().ToString());
    return nccl;
  }
  nccl.clique = std::move(*made);
  nccl.version = nccl.library->Version();
  return nccl;
}

void OpenNcclModes(const std::vector<int>& devices, const NcclModeRequest& request,
                   NcclSide* nccl) {
  if (nccl->clique == nullptr) return;
  std::string& no_windows = nccl->why_not[static_cast<int>(NcclMode::kWindows)];
  std::string& no_ce = nccl->why_not[static_cast<int>(NcclMode::kCopyEngine)];
  no_windows = request.no_windows;
  no_ce = request.no_copy_engine;
  if (no_windows.empty()) {
    auto windows =
        tools::NcclWindows::Create(*nccl->library, *nccl->clique, devices, request.buffer_bytes);
    if (windows.ok()) {
      nccl->windows = std::move(*windows);
    } else {
      no_windows = std::string(windows.status().message());
    }
  }
  if (!no_ce.empty()) return;
  tools::NcclCliqueOptions options;
  options.zero_cta_policy = true;
  auto ce_clique = tools::NcclClique::Create(*nccl->library, devices, options);
  if (!ce_clique.ok()) {
    no_ce = std::string(ce_clique.status().message());
    return;
  }
  nccl->ce_clique = std::move(*ce_clique);
  auto ce_windows =
      tools::NcclWindows::Create(*nccl->library, *nccl->ce_clique, devices, request.buffer_bytes);
  if (!ce_windows.ok()) {
    no_ce = std::string(ce_windows.status().message());
    return;
  }
  nccl->ce_windows = std::move(*ce_windows);
}

std::string NcclModesNote(const NcclSide& nccl) {
  if (nccl.clique == nullptr) return "";
  const char* nvls = std::getenv("NCCL_NVLS_ENABLE");
  std::string note = absl::StrFormat(
      "# NCCL %s, NCCL_NVLS_ENABLE=%s; best = its fastest mode on each row, speedup = best / "
      "ltx\n",
      nccl.version, nvls != nullptr ? nvls : "unset");
  const char* descriptions[kNcclModeCount] = {
      "cudaMalloc buffers, NCCL's default kernels",
      "ncclMemAlloc buffers registered once as symmetric windows (NCCL_WIN_COLL_SYMMETRIC), "
      "NCCL's symmetric kernels where its tuner picks them",
      "windows on communicators with NCCL_CTA_POLICY_ZERO: NCCL's copy-engine collectives"};
  for (NcclMode mode : kNcclModes) {
    const std::string& why = nccl.why_not[static_cast<int>(mode)];
    absl::StrAppendFormat(
        &note, "#   %-6s %s\n", NcclModeName(mode),
        why.empty() ? descriptions[static_cast<int>(mode)] : absl::StrCat("n/a: ", why));
  }
  if (const char* policy = std::getenv("NCCL_CTA_POLICY"); policy != nullptr) {
    absl::StrAppendFormat(&note,
                          "#   NCCL_CTA_POLICY=%s is set: NCCL applies it to every communicator, "
                          "the plain and window columns included\n",
                          policy);
  }
  return note;
}

}  // namespace ltx
