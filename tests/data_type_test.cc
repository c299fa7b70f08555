// Tests of ltx::DataType helpers (ltx/data_type.h): element sizes, names, and parsing.
#include "ltx/data_type.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;

TEST(DataTypeTest, ElementSizeOfEachType) {
  EXPECT_EQ(ElementSize(DataType::kBFloat16), 2);
  EXPECT_EQ(ElementSize(DataType::kFloat16), 2);
  EXPECT_EQ(ElementSize(DataType::kFloat32), 4);
  EXPECT_EQ(ElementSize(DataType::kFloat8E4M3), 1);
  EXPECT_EQ(ElementSize(DataType::kFloat8E5M2), 1);
  EXPECT_EQ(ElementSize(DataType::kInt8), 1);
  EXPECT_EQ(ElementSize(DataType::kUint8), 1);
}

TEST(DataTypeTest, NamesOfEachType) {
  EXPECT_EQ(DataTypeName(DataType::kBFloat16), "bf16");
  EXPECT_EQ(DataTypeName(DataType::kFloat16), "fp16");
  EXPECT_EQ(DataTypeName(DataType::kFloat32), "fp32");
  EXPECT_EQ(DataTypeName(DataType::kFloat8E4M3), "fp8_e4m3");
  EXPECT_EQ(DataTypeName(DataType::kFloat8E5M2), "fp8_e5m2");
  EXPECT_EQ(DataTypeName(DataType::kInt8), "int8");
  EXPECT_EQ(DataTypeName(DataType::kUint8), "uint8");
}

TEST(DataTypeTest, AllDataTypesListsEveryTypeInEnumOrder) {
  int expected = 1;
  for (DataType type : kAllDataTypes) {
    EXPECT_EQ(static_cast<int>(type), expected);
    ++expected;
  }
  EXPECT_EQ(expected, 8);
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
}

TEST(DataTypeTest, UnknownNameIsInvalidArgumentListingTheAcceptedNames) {
  for (const char* name : {"", "fp64", "bf16 ", "int4", "unknown(3)"}) {
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
