// Where ltx_allgather looks for cuBLAS at run time: a path given on the command line or in
// LTX_CUBLAS, the wheels of PyTorch for CUDA 13 under Python's site-packages (which carry
// libcublas.so.13), and the plain soname for the loader's own search. Pure logic: the
// file-system globbing is the only thing that touches the system.
#ifndef TOOLS_BENCH_CUBLAS_PATHS_H_
#define TOOLS_BENCH_CUBLAS_PATHS_H_

#include <string>
#include <vector>

namespace ltx::tools {

// The soname of the cuBLAS the tool binds (CUDA 13).
inline constexpr char kCublasSoname[] = "libcublas.so.13";
// Its companion library, loaded first from the same directory when cuBLAS is found by path.
inline constexpr char kCublasLtSoname[] = "libcublasLt.so.13";

// The environment that decides where Python's site-packages may be.
struct SiteEnvironment {
  std::string home;          // $HOME, may be empty.
  std::string virtual_env;   // $VIRTUAL_ENV, may be empty.
  std::string conda_prefix;  // $CONDA_PREFIX, may be empty.
  std::string path;          // $PATH: each "PREFIX/bin" in it may be a Python's prefix.
};

// Glob patterns (fnmatch syntax) of the site-packages and dist-packages directories of the
// Python 3 installations `env` points at and of the usual system places, most specific first
// (virtualenv, conda, the prefixes of PATH's bin directories, user site, /usr/local, /usr,
// /opt/conda), without repeats. Empty variables add nothing.
std::vector<std::string> SitePackagePatterns(const SiteEnvironment& env);

// The files to try, in order: `flag_path` if not empty, else `env_path` (LTX_CUBLAS) if not
// empty; then, for each directory of `site_dirs`, nvidia/cu13/lib/libcublas.so.13 and
// nvidia/cublas/lib/libcublas.so.13 under it; finally the plain soname. No duplicates.
std::vector<std::string> CublasCandidates(const std::string& flag_path, const std::string& env_path,
                                          const std::vector<std::string>& site_dirs);

// The directory part of `path` ("" for a bare name).
std::string DirectoryOf(const std::string& path);

// The existing directories matching `patterns`, in pattern order, each pattern's matches
// sorted. Reads the file system; thread-compatible.
std::vector<std::string> GlobDirectories(const std::vector<std::string>& patterns);

}  // namespace ltx::tools

#endif  // TOOLS_BENCH_CUBLAS_PATHS_H_
