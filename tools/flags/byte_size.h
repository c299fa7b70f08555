// Byte sizes on the tools' command lines (-b, -e): a number with an optional K, M or G suffix.
#ifndef LTX_TOOLS_FLAGS_BYTE_SIZE_H_
#define LTX_TOOLS_FLAGS_BYTE_SIZE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace ltx {

// "4096", "16K", "1M", "2G" (K/M/G = 2^10/2^20/2^30, either case) as bytes >= 1; else
// InvalidArgument quoting the text. Thread-safe (pure).
absl::StatusOr<int64_t> ParseBytes(const std::string& text);

}  // namespace ltx

#endif  // LTX_TOOLS_FLAGS_BYTE_SIZE_H_
