// Loading NCCL for the benchmarks, and the type mapping.
#include "tools/bench/nccl_side.h"

#include <utility>

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

NcclSide LoadNccl(const std::string& path, const std::vector<int>& devices) {
  NcclSide nccl;
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

}  // namespace ltx
