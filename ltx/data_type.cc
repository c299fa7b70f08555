// Element sizes and names of ltx::DataType.
#include "ltx/data_type.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ltx {

int ElementSize(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return 4;
    case DataType::kBFloat16:
    case DataType::kFloat16:
      return 2;
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2:
    case DataType::kInt8:
    case DataType::kUint8:
      return 1;
  }
  return 0;
}

std::string DataTypeName(DataType type) {
  switch (type) {
    case DataType::kBFloat16:
      return "bf16";
    case DataType::kFloat16:
      return "fp16";
    case DataType::kFloat32:
      return "fp32";
    case DataType::kFloat8E4M3:
      return "fp8_e4m3";
    case DataType::kFloat8E5M2:
      return "fp8_e5m2";
    case DataType::kInt8:
      return "int8";
    case DataType::kUint8:
      return "uint8";
  }
  return absl::StrCat("unknown(", static_cast<int32_t>(type), ")");
}

absl::StatusOr<DataType> ParseDataType(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  for (DataType type : kAllDataTypes) {
    if (lower == DataTypeName(type)) return type;
  }
  if (lower == "bfloat16") return DataType::kBFloat16;
  if (lower == "float16" || lower == "half") return DataType::kFloat16;
  if (lower == "float32" || lower == "float") return DataType::kFloat32;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype '", name,
                   "'; expected one of bf16, fp16, fp32, fp8_e4m3, fp8_e5m2, int8, uint8"));
}

}  // namespace ltx
