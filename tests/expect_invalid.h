// The CPU tests' check of a refusal: InvalidArgument whose message names what was wrong.
#ifndef LTX_TESTS_EXPECT_INVALID_H_
#define LTX_TESTS_EXPECT_INVALID_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ltx {

// Expects `status` to be InvalidArgument with `argument` in its message.
inline void ExpectInvalid(const absl::Status& status, const char* argument) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr(argument));
}

// Expects `result` to hold no value but an InvalidArgument status with `argument` in its message.
template <typename T>
void ExpectInvalid(const absl::StatusOr<T>& result, const char* argument) {
  ExpectInvalid(result.status(), argument);
}

}  // namespace ltx

#endif  // LTX_TESTS_EXPECT_INVALID_H_
