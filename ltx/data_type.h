// Element types of every collective. The copies (AllGather, all-to-all) are byte-exact, so for
// them a type only fixes the element size (and is checked to agree across ranks); the
// reductions (AllReduce, ReduceScatter, the RMSNorm epilogue) compute on bf16, fp16 and fp32
// only, in fp32 (ltx/reduction.h).
#ifndef LTX_DATA_TYPE_H_
#define LTX_DATA_TYPE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ltx {

// The element types of a tensor. Values are stable: they travel between GPUs.
enum class DataType : int32_t {
  kBFloat16 = 1,
  kFloat16 = 2,
  kFloat32 = 3,
  kFloat8E4M3 = 4,
  kFloat8E5M2 = 5,
  kInt8 = 6,
  kUint8 = 7,
  kInt16 = 8,
  kUint16 = 9,
  kInt32 = 10,
  kUint32 = 11,
  kInt64 = 12,
  kUint64 = 13,
  kFloat64 = 14,
  kBool = 15,       // One byte per element, as PyTorch stores it.
  kComplex64 = 16,  // Two fp32.
  kComplex128 = 17, // Two fp64.
};

// Size of one element in bytes, or 0 for a value outside the enum.
int ElementSize(DataType type);

// Short lower-case name ("bf16", "fp16", "fp32", "fp8_e4m3", "fp8_e5m2", "int8", "uint8",
// "int16", "uint16", "int32", "uint32", "int64", "uint64", "fp64", "bool", "complex64",
// "complex128"), or "unknown(N)" for a value outside the enum.
std::string DataTypeName(DataType type);

// Parses a name as printed by DataTypeName (also accepts "bfloat16", "float16", "float32",
// "half", "float", "float64", "double"). InvalidArgument lists the accepted names.
absl::StatusOr<DataType> ParseDataType(absl::string_view name);

// Every DataType, in enum order.
inline constexpr DataType kAllDataTypes[] = {
    DataType::kBFloat16, DataType::kFloat16,   DataType::kFloat32,   DataType::kFloat8E4M3,
    DataType::kFloat8E5M2, DataType::kInt8,    DataType::kUint8,     DataType::kInt16,
    DataType::kUint16,   DataType::kInt32,     DataType::kUint32,    DataType::kInt64,
    DataType::kUint64,   DataType::kFloat64,   DataType::kBool,      DataType::kComplex64,
    DataType::kComplex128,
};

}  // namespace ltx

#endif  // LTX_DATA_TYPE_H_
