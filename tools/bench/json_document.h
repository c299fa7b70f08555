// A benchmark's JSON file (--json): the run's settings, one member a line (those every tool
// records, then its own), and its rows, one object a line, each with the tool's own members.
// Building the text is pure (no GPU); writing it reports a file that cannot be written.
#ifndef TOOLS_BENCH_JSON_DOCUMENT_H_
#define TOOLS_BENCH_JSON_DOCUMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "ltx/data_type.h"
#include "tools/bench/bench_style.h"
#include "tools/bench/nccl_best.h"

namespace ltx {

// The members ("key": value) of one JSON object, in the order they were added.
class JsonMembers {
 public:
  JsonMembers& Int(absl::string_view key, int64_t value);
  // With three decimals, e.g. "ltx_us": 6.500.
  JsonMembers& Number(absl::string_view key, double value);
  // As a string literal (JsonString).
  JsonMembers& Text(absl::string_view key, absl::string_view text);
  // As an array of integers, e.g. "devices": [0, 1].
  template <typename Integer>
  JsonMembers& IntList(absl::string_view key, const std::vector<Integer>& values) {
    return Raw(absl::StrCat(JsonString(key), ": [", absl::StrJoin(values, ", "), "]"));
  }
  // Members that are JSON text already, e.g. NcclJsonMembers.
  JsonMembers& Raw(absl::string_view members);
  // The members of `more`, after these.
  JsonMembers& Append(const JsonMembers& more);

  const std::vector<std::string>& members() const { return members_; }

 private:
  std::vector<std::string> members_;
};

// The settings every benchmark's JSON begins with: world_size and devices (rank order), dtype,
// then `own` (the tool's, e.g. hidden), then style (BenchStyleName), call_style (CallTimingName)
// and nccl (NCCL's version, "none" without it).
JsonMembers BenchJsonSettings(const std::vector<int>& devices, DataType dtype,
                              const JsonMembers& own, BenchStyle style,
                              absl::string_view nccl_version);

// ltx's figures on one row: ltx_us (device time per call), ltx_algbw_gbps and ltx_busbw_gbps.
JsonMembers LtxTimeJson(double us, double algbw_gbps, double busbw_gbps);

// A benchmark run as JSON: its settings and its rows.
struct JsonDocument {
  JsonMembers settings;
  std::vector<JsonMembers> rows;
};

// The text of `document`: one object with each setting on a line of its own, then "rows", an
// array with each row's object on a line of its own; ends with a newline.
std::string JsonDocumentText(const JsonDocument& document);

// Writes JsonDocumentText(document) to `path`. PermissionDenied if the file cannot be opened,
// DataLoss if writing fails.
absl::Status WriteJsonDocument(const std::string& path, const JsonDocument& document);

// The end of a benchmark run: writes `document` to `path` unless `path` is empty (its errors
// first), then DataLoss when ltx's output was wrong on `wrong_rows` (> 0) of the run's rows.
absl::Status FinishBenchmarkRun(const std::string& path, const JsonDocument& document,
                                int wrong_rows);

}  // namespace ltx

#endif  // TOOLS_BENCH_JSON_DOCUMENT_H_
