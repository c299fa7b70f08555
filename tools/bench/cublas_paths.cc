// Candidate paths of libcublas.so.13 for the run-time cuBLAS loader.
#include "tools/bench/cublas_paths.h"

#include <glob.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ltx::tools {
namespace {

// Where the NVIDIA wheels put cuBLAS under site-packages: the CUDA 13 layout, then the older one.
constexpr const char* kWheelDirs[] = {"nvidia/cu13/lib", "nvidia/cublas/lib"};

void AddOnce(const std::string& path, std::vector<std::string>* paths) {
  if (std::find(paths->begin(), paths->end(), path) == paths->end()) paths->push_back(path);
}

}  // namespace

std::vector<std::string> SitePackagePatterns(const SiteEnvironment& env) {
  std::vector<std::string> prefixes = {env.virtual_env, env.conda_prefix};
  for (absl::string_view dir : absl::StrSplit(env.path, ':', absl::SkipEmpty())) {
    if (absl::ConsumeSuffix(&dir, "/bin") && !dir.empty()) prefixes.emplace_back(dir);
  }
  std::vector<std::string> patterns;
  for (const std::string& prefix : prefixes) {
    if (!prefix.empty()) AddOnce(absl::StrCat(prefix, "/lib/python3*/site-packages"), &patterns);
  }
  if (!env.home.empty()) {
    patterns.push_back(absl::StrCat(env.home, "/.local/lib/python3*/site-packages"));
  }
  for (const char* prefix : {"/usr/local/lib", "/usr/lib"}) {
    AddOnce(absl::StrCat(prefix, "/python3*/dist-packages"), &patterns);
    AddOnce(absl::StrCat(prefix, "/python3*/site-packages"), &patterns);
  }
  AddOnce("/opt/conda/lib/python3*/site-packages", &patterns);
  return patterns;
}

std::vector<std::string> CublasCandidates(const std::string& flag_path, const std::string& env_path,
                                          const std::vector<std::string>& site_dirs) {
  std::vector<std::string> paths;
  if (!flag_path.empty()) {
    paths.push_back(flag_path);
  } else if (!env_path.empty()) {
    paths.push_back(env_path);
  }
  for (const std::string& dir : site_dirs) {
    for (const char* wheel_dir : kWheelDirs) {
      AddOnce(absl::StrCat(dir, "/", wheel_dir, "/", kCublasSoname), &paths);
    }
  }
  AddOnce(kCublasSoname, &paths);
  return paths;
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::vector<std::string> GlobDirectories(const std::vector<std::string>& patterns) {
  std::vector<std::string> dirs;
  for (const std::string& pattern : patterns) {
    glob_t matches{};
    if (glob(pattern.c_str(), GLOB_ONLYDIR, nullptr, &matches) == 0) {
      for (size_t i = 0; i < matches.gl_pathc; ++i) AddOnce(matches.gl_pathv[i], &dirs);
    }
    globfree(&matches);
  }
  return dirs;
}

}  // namespace ltx::tools
