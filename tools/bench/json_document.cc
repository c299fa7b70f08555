// A benchmark's JSON file: its members, its layout and its writing.
#include "tools/bench/json_document.h"

#include <fstream>

#include "absl/strings/str_format.h"

namespace ltx {

JsonMembers& JsonMembers::Int(absl::string_view key, int64_t value) {
  return Raw(absl::StrFormat("%s: %d", JsonString(key), value));
}

JsonMembers& JsonMembers::Number(absl::string_view key, double value) {
  return Raw(absl::StrFormat("%s: %.3f", JsonString(key), value));
}

JsonMembers& JsonMembers::Text(absl::string_view key, absl::string_view text) {
  return Raw(absl::StrCat(JsonString(key), ": ", JsonString(text)));
}

JsonMembers& JsonMembers::Raw(absl::string_view members) {
  members_.emplace_back(members);
  return *this;
}

JsonMembers& JsonMembers::Append(const JsonMembers& more) {
  members_.insert(members_.end(), more.members_.begin(), more.members_.end());
  return *this;
}

JsonMembers LtxTimeJson(double us, double algbw_gbps, double busbw_gbps) {
  return JsonMembers()
      .Number("ltx_us", us)
      .Number("ltx_algbw_gbps", algbw_gbps)
      .Number("ltx_busbw_gbps", busbw_gbps);
}

JsonMembers BenchJsonSettings(const std::vector<int>& devices, DataType dtype,
                              const JsonMembers& own, BenchStyle style,
                              absl::string_view nccl_version) {
  JsonMembers settings;
  settings.Int("world_size", static_cast<int64_t>(devices.size()))
      .IntList("devices", devices)
      .Text("dtype", DataTypeName(dtype))
      .Append(own)
      .Text("style", BenchStyleName(style))
      .Text("call_style", CallTimingName(style))
      .Text("nccl", nccl_version);
  return settings;
}

std::string JsonDocumentText(const JsonDocument& document) {
  std::string text = "{\n";
  for (const std::string& member : document.settings.members()) {
    absl::StrAppend(&text, "  ", member, ",\n");
  }
  text += "  \"rows\": [\n";
  for (size_t i = 0; i < document.rows.size(); ++i) {
    absl::StrAppend(&text, "    {", absl::StrJoin(document.rows[i].members(), ", "), "}",
                    i + 1 < document.rows.size() ? "," : "", "\n");
  }
  return text + "  ]\n}\n";
}

absl::Status WriteJsonDocument(const std::string& path, const JsonDocument& document) {
  std::ofstream out(path);
  if (!out) return absl::PermissionDeniedError("cannot write " + path);
  out << JsonDocumentText(document);
  return out ? absl::OkStatus() : absl::DataLossError("failed writing " + path);
}

absl::Status FinishBenchmarkRun(const std::string& path, const JsonDocument& document,
                                int wrong_rows) {
  if (!path.empty()) {
    const absl::Status written = WriteJsonDocument(path, document);
    if (!written.ok()) return written;
  }
  if (wrong_rows > 0) {
    return absl::DataLossError(
        absl::StrFormat("ltx's output was wrong on %d row(s)", wrong_rows));
  }
  return absl::OkStatus();
}

}  // namespace ltx
