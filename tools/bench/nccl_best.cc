// The best of NCCL's modes, and its table cells and JSON.
#include "tools/bench/nccl_best.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ltx {

std::string NcclModeName(NcclMode mode) {
  switch (mode) {
    case NcclMode::kPlain:
      return "plain";
    case NcclMode::kWindows:
      return "window";
    case NcclMode::kCopyEngine:
      return "ce";
  }
  return "unknown";
}

NcclTime& At(NcclTimes& times, NcclMode mode) { return times[static_cast<int>(mode)]; }

const NcclTime& At(const NcclTimes& times, NcclMode mode) { return times[static_cast<int>(mode)]; }

NcclBest BestNccl(const NcclTimes& times) {
  NcclBest best;
  for (NcclMode mode : kNcclModes) {
    const NcclTime& time = At(times, mode);
    if (!time.measured() || (best.mode.has_value() && time.us >= best.us)) continue;
    best.mode = mode;
    best.us = time.us;
    best.busbw = time.busbw;
  }
  return best;
}

double SpeedupOverBest(double ltx_us, const NcclBest& best) {
  if (ltx_us <= 0 || !best.mode.has_value()) return -1;
  return best.us / ltx_us;
}

std::string NcclCell(const NcclTime& time, int width) {
  if (time.measured()) return absl::StrFormat("%*.2f", width, time.us);
  return absl::StrFormat("%*s", width, time.why_not.empty() ? "-" : "n/a");
}

std::string SpeedupCell(double speedup, int width) {
  if (speedup <= 0) return absl::StrFormat("%*s", width, "-");
  return absl::StrFormat("%*.2fx", width - 1, speedup);
}

std::string NcclCells(const NcclTimes& times, double ltx_us) {
  std::string text;
  for (NcclMode mode : kNcclModes) absl::StrAppend(&text, NcclCell(At(times, mode), 9), " ");
  const NcclBest best = BestNccl(times);
  if (best.mode.has_value()) {
    absl::StrAppendFormat(&text, "| %9.2f %8.2f %6s | ", best.us, best.busbw,
                          NcclModeName(*best.mode));
  } else {
    absl::StrAppendFormat(&text, "| %9s %8s %6s | ", "-", "-", "-");
  }
  return text + SpeedupCell(SpeedupOverBest(ltx_us, best), 7);
}

std::string NcclColumnTitles() {
  return absl::StrFormat("%9s %9s %9s | %9s %8s %6s | %7s", "plain(us)", "window", "ce", "best(us)",
                         "busbw", "mode", "speedup");
}

std::string JsonString(absl::string_view text) {
  std::string quoted = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        quoted += "\\\"";
        break;
      case '\\':
        quoted += "\\\\";
        break;
      case '\n':
        quoted += "\\n";
        break;
      case '\t':
        quoted += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&quoted, "\\u%04x", static_cast<unsigned char>(c));
        } else {
          quoted += c;
        }
    }
  }
  return quoted + "\"";
}

std::string NcclJsonMembers(const NcclTimes& times, double ltx_us) {
  std::string json = "\"nccl\": {";
  for (NcclMode mode : kNcclModes) {
    const NcclTime& time = At(times, mode);
    if (mode != NcclMode::kPlain) json += ", ";
    absl::StrAppend(&json, JsonString(NcclModeName(mode)), ": ");
    if (time.measured()) {
      absl::StrAppendFormat(&json, "{\"us\": %.3f, \"busbw_gbps\": %.3f}", time.us, time.busbw);
    } else {
      absl::StrAppend(&json, "{\"unavailable\": ",
                      JsonString(time.why_not.empty() ? "NCCL not loaded" : time.why_not), "}");
    }
  }
  const NcclBest best = BestNccl(times);
  absl::StrAppendFormat(&json,
                        "}, \"best_nccl\": %s, \"best_nccl_us\": %.3f, "
                        "\"ltx_vs_best_nccl\": %.3f",
                        best.mode.has_value() ? JsonString(NcclModeName(*best.mode)) : "null",
                        best.us, SpeedupOverBest(ltx_us, best));
  return json;
}

}  // namespace ltx
