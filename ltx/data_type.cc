// Element sizes and names of ltx::DataType.
#include "ltx/data_type.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ltx {

namespace {

struct TypeInfo {
  DataType type;
  int size;
  const char* name;
};

// Every type's size and name, in enum order.
constexpr TypeInfo kTypes[] = {
    {DataType::kBFloat16, 2, "bf16"},       {DataType::kFloat16, 2, "fp16"},
    {DataType::kFloat32, 4, "fp32"},        {DataType::kFloat8E4M3, 1, "fp8_e4m3"},
    {DataType::kFloat8E5M2, 1, "fp8_e5m2"}, {DataType::kInt8, 1, "int8"},
    {DataType::kUint8, 1, "uint8"},         {DataType::kInt16, 2, "int16"},
    {DataType::kUint16, 2, "uint16"},       {DataType::kInt32, 4, "int32"},
    {DataType::kUint32, 4, "uint32"},       {DataType::kInt64, 8, "int64"},
    {DataType::kUint64, 8, "uint64"},       {DataType::kFloat64, 8, "fp64"},
    {DataType::kBool, 1, "bool"},           {DataType::kComplex64, 8, "complex64"},
    {DataType::kComplex128, 16, "complex128"},
};
static_assert(sizeof(kTypes) / sizeof(kTypes[0]) == sizeof(kAllDataTypes) / sizeof(DataType),
              "one entry per DataType");

const TypeInfo* InfoOf(DataType type) {
  for (const TypeInfo& info : kTypes) {
    if (info.type == type) return &info;
  }
  return nullptr;
}

}  // namespace

int ElementSize(DataType type) {
  const TypeInfo* info = InfoOf(type);
  return info != nullptr ? info->size : 0;
}

std::string DataTypeName(DataType type) {
  const TypeInfo* info = InfoOf(type);
  if (info != nullptr) return info->name;
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
  if (lower == "float64" || lower == "double") return DataType::kFloat64;
  std::vector<std::string> names;
  for (const TypeInfo& info : kTypes) names.push_back(info.name);
  return absl::InvalidArgumentError(absl::StrCat("unknown dtype '", name, "'; expected one of ",
                                                 absl::StrJoin(names, ", ")));
}

}  // namespace ltx
