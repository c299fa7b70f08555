// NCCL's version as its ncclGetVersion code says, and the releases the benchmarks' NCCL modes
// need: symmetric windows (2.27) and copy-engine collectives with ncclAlltoAll (2.28).
#ifndef TOOLS_BENCH_NCCL_VERSION_H_
#define TOOLS_BENCH_NCCL_VERSION_H_

#include <string>

namespace ltx::tools {

struct NcclVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;

  // "2.28.3".
  std::string ToString() const;
  // Whether this release is major.minor or later.
  bool AtLeast(int at_least_major, int at_least_minor) const;
};

// Decodes ncclGetVersion's code: major*10000 + minor*100 + patch since 2.9, major*1000 +
// minor*100 + patch before (2.8.4 is 2804, 2.28.3 is 22803).
NcclVersion DecodeNcclVersion(int code);

// The first releases with each feature.
inline constexpr NcclVersion kNcclWindowsSince = {2, 27, 0};
inline constexpr NcclVersion kNcclCopyEngineSince = {2, 28, 0};

}  // namespace ltx::tools

#endif  // TOOLS_BENCH_NCCL_VERSION_H_
