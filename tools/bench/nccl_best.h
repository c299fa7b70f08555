// NCCL three ways, as every benchmark shows it: on plain cudaMalloc buffers, on buffers of
// symmetric windows, and with its copy-engine collectives; what each measured on one row, or why
// it did not run; the best of them and ltx's speedup over it; and their cells in the tables and
// the JSON files. Pure (no GPU).
#ifndef TOOLS_BENCH_NCCL_BEST_H_
#define TOOLS_BENCH_NCCL_BEST_H_

#include <array>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace ltx {

// How NCCL runs a collective.
enum class NcclMode {
  kPlain,       // Buffers from cudaMalloc, NCCL's default kernels.
  kWindows,     // Buffers from ncclMemAlloc registered as symmetric windows (2.27+).
  kCopyEngine,  // Windows on communicators with a zero-CTA policy: copy engines (2.28+).
};
inline constexpr int kNcclModeCount = 3;
inline constexpr std::array<NcclMode, kNcclModeCount> kNcclModes = {
    NcclMode::kPlain, NcclMode::kWindows, NcclMode::kCopyEngine};

// "plain", "window" or "ce": the column titles and JSON keys.
std::string NcclModeName(NcclMode mode);

// What one mode measured on one row.
struct NcclTime {
  double us = -1;  // Device time per call; <= 0: not measured.
  double busbw = -1;
  // Why it was not measured, e.g. "NCCL 2.21.5 has no symmetric windows (they need 2.27)";
  // empty with no time: NCCL was not loaded at all.
  std::string why_not;

  bool measured() const { return us > 0; }
};

// One row's times, indexed by NcclMode.
using NcclTimes = std::array<NcclTime, kNcclModeCount>;

// The time of `mode` in `times`.
NcclTime& At(NcclTimes& times, NcclMode mode);
const NcclTime& At(const NcclTimes& times, NcclMode mode);

// The fastest measured mode of a row.
struct NcclBest {
  std::optional<NcclMode> mode;  // None: no mode measured.
  double us = -1;
  double busbw = -1;
};

// The measured mode with the least time (the first of equal ones); none if none was measured.
NcclBest BestNccl(const NcclTimes& times);

// ltx's speedup over the best NCCL: best.us / ltx_us (above 1: ltx is faster); -1 when either
// side was not measured.
double SpeedupOverBest(double ltx_us, const NcclBest& best);

// A table cell `width` characters wide: the time with two decimals; "n/a" when the mode did not
// run and says why; "-" when NCCL was not loaded.
std::string NcclCell(const NcclTime& time, int width);

// A speedup cell `width` characters wide: "1.23x", or "-" without one.
std::string SpeedupCell(double speedup, int width);

// The NCCL part of a table row: the three modes' times (NcclCell), then the best's time, busbw
// and mode, then ltx's speedup over it, e.g.
//   "     8.85       n/a      6.10 |      6.10     3.70     ce |   1.03x"
std::string NcclCells(const NcclTimes& times, double ltx_us);
// The titles over NcclCells, in the same widths.
std::string NcclColumnTitles();

// The JSON members of one row's NCCL figures (no braces around them), e.g.
//   "nccl": {"plain": {"us": 8.850, "busbw_gbps": 3.700}, "window": {"unavailable": "why"},
//   "ce": {...}}, "best_nccl": "plain", "best_nccl_us": 8.850, "ltx_vs_best_nccl": 1.500
// "best_nccl" is null and the numbers -1 when no mode was measured.
std::string NcclJsonMembers(const NcclTimes& times, double ltx_us);

// `text` as a JSON string literal, quotes included.
std::string JsonString(absl::string_view text);

}  // namespace ltx

#endif  // TOOLS_BENCH_NCCL_BEST_H_
