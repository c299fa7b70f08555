// Tests of the names of ltx::Protocol and ltx::Transport (ltx/runtime_options.h).
#include "ltx/runtime_options.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ltx {
namespace {

using ::testing::HasSubstr;

TEST(RuntimeOptionsNamesTest, ProtocolNames) {
  EXPECT_EQ(ProtocolName(Protocol::kAuto), "auto");
  EXPECT_EQ(ProtocolName(Protocol::kDirect), "direct");
  EXPECT_EQ(ProtocolName(Protocol::kOneTrip), "one_trip");
  EXPECT_EQ(ProtocolName(Protocol::kCopyEngine), "copy_engine");
  EXPECT_EQ(ProtocolName(static_cast<Protocol>(9)), "unknown(9)");
}

TEST(RuntimeOptionsNamesTest, TransportNames) {
  EXPECT_EQ(TransportName(Transport::kAuto), "auto");
  EXPECT_EQ(TransportName(Transport::kPeerStores), "peer_stores");
  EXPECT_EQ(TransportName(Transport::kCopyEngine), "copy_engine");
  EXPECT_EQ(TransportName(static_cast<Transport>(-1)), "unknown(-1)");
}

TEST(RuntimeOptionsNamesTest, EveryNameParsesBackIgnoringCase) {
  for (Protocol protocol : kAllProtocols) {
    EXPECT_EQ(ParseProtocol(ProtocolName(protocol)).value(), protocol);
  }
  for (Transport transport : kAllTransports) {
    EXPECT_EQ(ParseTransport(TransportName(transport)).value(), transport);
  }
  EXPECT_EQ(ParseProtocol("One_Trip").value(), Protocol::kOneTrip);
  EXPECT_EQ(ParseTransport("PEER_STORES").value(), Transport::kPeerStores);
}

TEST(RuntimeOptionsNamesTest, UnknownProtocolIsInvalidArgumentListingTheNames) {
  for (const char* name : {"", "ll", "simple", "one-trip", "auto "}) {
    const absl::StatusOr<Protocol> parsed = ParseProtocol(name);
    ASSERT_FALSE(parsed.ok()) << name;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(parsed.status().message());
    EXPECT_THAT(message, HasSubstr(std::string("protocol '") + name + "'"));
    EXPECT_THAT(message, HasSubstr("auto, direct, one_trip, copy_engine"));
  }
}

TEST(RuntimeOptionsNamesTest, UnknownTransportIsInvalidArgumentListingTheNames) {
  const absl::StatusOr<Transport> parsed = ParseTransport("ib");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(parsed.status().message()),
              HasSubstr("transport 'ib'; expected one of auto, peer_stores, copy_engine"));
}

}  // namespace
}  // namespace ltx
