// Names of ltx::Protocol and ltx::Transport, and parsing them back.
#include "ltx/runtime_options.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"

namespace ltx {
namespace {

// The value of `values` whose `name_of` equals `name` (ignoring case), or InvalidArgument
// naming the `kind` and listing every name.
template <typename Enum, typename NameOf>
absl::StatusOr<Enum> ParseByName(absl::string_view name, absl::string_view kind,
                                 absl::Span<const Enum> values, NameOf name_of) {
  const std::string lower = absl::AsciiStrToLower(name);
  std::vector<std::string> names;
  for (Enum value : values) {
    if (lower == name_of(value)) return value;
    names.push_back(name_of(value));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown ", kind, " '", name, "'; expected one of ", absl::StrJoin(names, ", ")));
}

}  // namespace

std::string ProtocolName(Protocol protocol) {
  switch (protocol) {
    case Protocol::kAuto:
      return "auto";
    case Protocol::kDirect:
      return "direct";
    case Protocol::kOneTrip:
      return "one_trip";
    case Protocol::kCopyEngine:
      return "copy_engine";
  }
  return absl::StrCat("unknown(", static_cast<int>(protocol), ")");
}

std::string TransportName(Transport transport) {
  switch (transport) {
    case Transport::kAuto:
      return "auto";
    case Transport::kPeerStores:
      return "peer_stores";
    case Transport::kCopyEngine:
      return "copy_engine";
  }
  return absl::StrCat("unknown(", static_cast<int>(transport), ")");
}

absl::StatusOr<Protocol> ParseProtocol(absl::string_view name) {
  return ParseByName<Protocol>(name, "protocol", kAllProtocols, ProtocolName);
}

absl::StatusOr<Transport> ParseTransport(absl::string_view name) {
  return ParseByName<Transport>(name, "transport", kAllTransports, TransportName);
}

}  // namespace ltx
