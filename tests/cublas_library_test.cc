// Tests of the run-time cuBLAS binding (tools/bench/cublas_library.h) without a GPU:
// every candidate that fails is reported, and a real libcublas.so.13 (the toolkit's, where one
// is installed) loads with every symbol the tool binds. Creating a handle needs a GPU.
#include "tools/bench/cublas_library.h"

#include <unistd.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ltx::tools {
namespace {

using ::testing::HasSubstr;

constexpr char kToolkitCublas[] = "/usr/local/cuda/lib64/libcublas.so.13";

TEST(CublasLibraryTest, NoCandidateLoadsIsNotFoundNamingEach) {
  const auto loaded = CublasLibrary::Load({"/nonexistent/libcublas.so.13", "libnotthere.so.13"});
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("/nonexistent/libcublas.so.13: "));
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("libnotthere.so.13: "));
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("--cublas=PATH"));
}

TEST(CublasLibraryTest, ALibraryWithoutTheSymbolsIsSkipped) {
  const auto loaded = CublasLibrary::Load({"libm.so.6"});
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("lacks symbol cublasCreate_v2"));
}

TEST(CublasLibraryTest, TheToolkitsCublasLoadsAfterAFailedCandidate) {
  if (access(kToolkitCublas, R_OK) != 0) {
    GTEST_SKIP() << "no " << kToolkitCublas << " on this machine";
  }
  const auto loaded = CublasLibrary::Load({"/nonexistent/libcublas.so.13", kToolkitCublas});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->path(), kToolkitCublas);
}

}  // namespace
}  // namespace ltx::tools
