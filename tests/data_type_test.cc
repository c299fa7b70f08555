// Tests of ltx::DataType helpers (ltx/data_type.h): element sizes, names, and parsing.
#include "ltx/data_type.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;

TEST(DataTypeTest, SizeAndNameOfEachType) {
  const struct {
    DataType type;
    int size;
    const char* name;
  } expected[] = {
      {DataType::kBFloat16, 2, "bf16"},      {DataType::kFloat16, 2, "fp16"},
      {DataType::kFloat32, 4, "fp32"},       {DataType::kFloat8E4M3, 1, "fp8_e4m3"},
      {DataType::kFloat8E5M2, 1, "fp8_e5m2"}, {DataType::kInt8, 1, "int8"},
      {DataType::kUint8, 1, "uint8"},        {DataType::kInt16, 2, "int16"},
      {DataType::kUint16, 2, "uint16"},      {DataType::kInt32, 4, "int32"},
      {DataType::kUint32, 4, "uint32"},      {DataType::kInt64, 8, "int64"},
      {DataType::kUint64, 8, "uint64"},      {DataType::kFloat64, 8, "fp64"},
      {DataType::kBool, 1, "bool"},          {DataType::kComplex64, 8, "complex64"},
      {DataType::kComplex128, 16, "complex128"},
  };
  for (const auto& e : expected) {
    EXPECT_EQ(ElementSize(e.type), e.size) << e.name;
    EXPECT_EQ(DataTypeName(e.type), e.name);
  }
}

TEST(DataTypeTest, AllDataTypesListsEveryTypeInEnumOrder) {
  int expected = 1;
  for (DataType type : kAllDataTypes) {
    EXPECT_EQ(static_cast<int>(type), expected);
    ++expected;
  }
  EXPECT_EQ(expected, 18);
}

TEST(DataTypeTest, EveryNameParsesBackToItsType) {
  for (DataType type : kAllDataTypes) {
    const absl::StatusOr<DataType> parsed = ParseDataType(DataTypeName(type));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, type) << DataTypeName(type);
  }
}

TEST(DataTypeTest, ParsingIgnoresCase) {
  const absl::StatusOr<DataType> parsed = ParseDataType("BF16");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, DataType::kBFloat16);
  const absl::StatusOr<DataType> fp8 = ParseDataType("FP8_E4M3");
  ASSERT_TRUE(fp8.ok()) << fp8.status();
  EXPECT_EQ(*fp8, DataType::kFloat8E4M3);
}

TEST(DataTypeTest, AliasesParse) {
  EXPECT_EQ(ParseDataType("bfloat16").value(), DataType::kBFloat16);
  EXPECT_EQ(ParseDataType("float16").value(), DataType::kFloat16);
  EXPECT_EQ(ParseDataType("half").value(), DataType::kFloat16);
  EXPECT_EQ(ParseDataType("float32").value(), DataType::kFloat32);
  EXPECT_EQ(ParseDataType("float").value(), DataType::kFloat32);
  EXPECT_EQ(ParseDataType("float64").value(), DataType::kFloat64);
  EXPECT_EQ(ParseDataType("double").value(), DataType::kFloat64);
}

TEST(DataTypeTest, UnknownNameIsInvalidArgumentListingTheAcceptedNames) {
  for (const char* name : {"", "fp128", "bf16 ", "int4", "unknown(3)"}) {
    const absl::StatusOr<DataType> parsed = ParseDataType(name);
    ASSERT_FALSE(parsed.ok()) << name;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(parsed.status().message());
    for (DataType type : kAllDataTypes) {
      EXPECT_THAT(message, HasSubstr(DataTypeName(type))) << name;
    }
    EXPECT_THAT(message, HasSubstr(std::string("'") + name + "'"));
  }
}

TEST(DataTypeTest, OutOfRangeValueHasSizeZeroAndAnUnknownName) {
  EXPECT_EQ(ElementSize(static_cast<DataType>(0)), 0);
  EXPECT_EQ(ElementSize(static_cast<DataType>(99)), 0);
  EXPECT_EQ(ElementSize(static_cast<DataType>(-1)), 0);
  EXPECT_EQ(DataTypeName(static_cast<DataType>(99)), "unknown(99)");
  EXPECT_EQ(DataTypeName(static_cast<DataType>(0)), "unknown(0)");
  EXPECT_EQ(DataTypeName(static_cast<DataType>(-1)), "unknown(-1)");
}

}  // namespace
}  // namespace ltx
