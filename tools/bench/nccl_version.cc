// Decoding NCCL's version code.
#include "tools/bench/nccl_version.h"

#include "absl/strings/str_format.h"

namespace ltx::tools {

std::string NcclVersion::ToString() const {
  return absl::StrFormat("%d.%d.%d", major, minor, patch);
}

bool NcclVersion::AtLeast(int at_least_major, int at_least_minor) const {
  return major != at_least_major ? major > at_least_major : minor >= at_least_minor;
}

NcclVersion DecodeNcclVersion(int code) {
  const int major_scale = code >= 10000 ? 10000 : 1000;
  return NcclVersion{code / major_scale, code % major_scale / 100, code % 100};
}

}  // namespace ltx::tools
