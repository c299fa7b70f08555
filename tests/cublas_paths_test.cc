// Tests of where ltx_allgather looks for cuBLAS (tools/bench/cublas_paths.h): the order
// of the candidates, the site-packages patterns, and globbing over a temporary tree.
#include "tools/bench/cublas_paths.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ltx::tools {
namespace {

using ::testing::ElementsAre;

TEST(CublasCandidatesTest, FlagThenWheelsThenSoname) {
  EXPECT_THAT(CublasCandidates("/x/libcublas.so.13", "/env/libcublas.so.13", {"/site"}),
              ElementsAre("/x/libcublas.so.13", "/site/nvidia/cu13/lib/libcublas.so.13",
                          "/site/nvidia/cublas/lib/libcublas.so.13", "libcublas.so.13"));
}

TEST(CublasCandidatesTest, EnvironmentWhenNoFlag) {
  EXPECT_THAT(CublasCandidates("", "/env/libcublas.so.13", {}),
              ElementsAre("/env/libcublas.so.13", "libcublas.so.13"));
}

TEST(CublasCandidatesTest, NothingGivenIsTheSonameAloneAndNoDuplicates) {
  EXPECT_THAT(CublasCandidates("", "", {}), ElementsAre("libcublas.so.13"));
  EXPECT_THAT(CublasCandidates("libcublas.so.13", "", {"/a", "/a"}),
              ElementsAre("libcublas.so.13", "/a/nvidia/cu13/lib/libcublas.so.13",
                          "/a/nvidia/cublas/lib/libcublas.so.13"));
}

TEST(SitePackagePatternsTest, EnvironmentFirstThenSystemPlaces) {
  const std::vector<std::string> patterns =
      SitePackagePatterns(SiteEnvironment{"/home/u", "/venv", "/conda"});
  ASSERT_GE(patterns.size(), 4u);
  EXPECT_EQ(patterns[0], "/venv/lib/python3*/site-packages");
  EXPECT_EQ(patterns[1], "/conda/lib/python3*/site-packages");
  EXPECT_EQ(patterns[2], "/home/u/.local/lib/python3*/site-packages");
  EXPECT_THAT(patterns, testing::Contains("/usr/local/lib/python3*/dist-packages"));
  EXPECT_THAT(patterns, testing::Contains("/usr/lib/python3*/site-packages"));
}

TEST(SitePackagePatternsTest, PathBinDirectoriesArePrefixesWithoutRepeats) {
  const std::vector<std::string> patterns = SitePackagePatterns(
      SiteEnvironment{"", "/venv", "", "/venv/bin:/opt/py/bin:/sbin:/bin:/usr/local/bin:/tools"});
  EXPECT_EQ(patterns[0], "/venv/lib/python3*/site-packages");
  EXPECT_EQ(patterns[1], "/opt/py/lib/python3*/site-packages");
  EXPECT_EQ(patterns[2], "/usr/local/lib/python3*/site-packages");
  EXPECT_EQ(patterns[3], "/usr/local/lib/python3*/dist-packages");
  EXPECT_EQ(std::count(patterns.begin(), patterns.end(), "/usr/local/lib/python3*/site-packages"),
            1);
}

TEST(SitePackagePatternsTest, EmptyVariablesAddNothing) {
  const std::vector<std::string> patterns = SitePackagePatterns(SiteEnvironment{});
  for (const std::string& pattern : patterns) EXPECT_EQ(pattern[0], '/') << pattern;
  EXPECT_EQ(patterns[0], "/usr/local/lib/python3*/dist-packages");
}

TEST(DirectoryOfTest, PathsAndBareNames) {
  EXPECT_EQ(DirectoryOf("/a/b/libcublas.so.13"), "/a/b");
  EXPECT_EQ(DirectoryOf("libcublas.so.13"), "");
}

TEST(GlobDirectoriesTest, FindsExistingDirectoriesInPatternOrder) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string root = std::string(tmp != nullptr ? tmp : "/tmp") + "/globtest";
  for (const std::string& dir :
       {root, root + "/lib", root + "/lib/python3.12", root + "/lib/python3.10",
        root + "/lib/python3.12/site-packages", root + "/lib/python3.10/site-packages"}) {
    mkdir(dir.c_str(), 0755);
  }
  EXPECT_THAT(
      GlobDirectories({root + "/lib/python3*/site-packages", root + "/none/*"}),
      ElementsAre(root + "/lib/python3.10/site-packages", root + "/lib/python3.12/site-packages"));
}

}  // namespace
}  // namespace ltx::tools
