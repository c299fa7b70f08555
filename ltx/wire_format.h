// WireFormat: how a collective's rows travel between GPUs. The native format moves the caller's
// bytes unchanged; FP8 moves each bf16 or fp16 row as fp8 e4m3 codes with one fp32 scale
// (kernels/wire/fp8_rows.h has the exact rule), about half the bytes, and the receiver writes
// the decoded values in the output's dtype.
#ifndef LTX_WIRE_FORMAT_H_
#define LTX_WIRE_FORMAT_H_

#include <cstdint>

namespace ltx {

enum class WireFormat : int32_t {
  kNative = 0,   // The caller's bytes, byte-exact.
  kFp8E4M3 = 1,  // Per row: e4m3 codes and an fp32 scale; a rank's own rows stay exact.
};

// "native" or "fp8_e4m3"; "unknown" for a value outside the enum. Thread-safe.
inline const char* WireFormatName(WireFormat wire) {
  switch (wire) {
    case WireFormat::kNative:
      return "native";
    case WireFormat::kFp8E4M3:
      return "fp8_e4m3";
  }
  return "unknown";
}

}  // namespace ltx

#endif  // LTX_WIRE_FORMAT_H_
