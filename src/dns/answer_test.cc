// Answers from a zone, checked on the wire: queries and responses made and
// read with libknot, as a resolver would.
#include "dns/answer.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dns/test_util.h"

namespace flotilla::dns {
namespace {

using testing::Query;
using testing::Response;
using testing::Wire;

class AnswerTest : public ::testing::Test {
 protected:
  AnswerTest() {
    ZoneBuilder b(ZoneOptions{.apex = "flotilla.local", .ttl = 30, .serial = 7});
    b.AddAddress("web.default.flotilla.svc.flotilla.local", "10.0.0.1");
    b.AddAddress("web.default.flotilla.svc.flotilla.local", "10.0.0.2");
    b.AddAddress("web.default.flotilla.svc.flotilla.local", "2001:db8::1");
    b.AddAddress("web.default.flotilla.svc.eu.flotilla.local", "10.0.0.1");
    b.AddCname("web.default.flotilla.svc.eu-b.eu.flotilla.local",
               "web.default.flotilla.svc.eu.flotilla.local");
    b.AddCname("away.default.flotilla.svc.flotilla.local", "lb.example.com");
    b.AddSrv("_http._tcp.web.default.flotilla.svc.flotilla.local",
             {.priority = 10,
              .weight = 100,
              .port = 80,
              .target = "web.default.flotilla.svc.flotilla.local"});
    for (int i = 0; i < 200; ++i) {
      b.AddAddress("big.default.flotilla.svc.flotilla.local",
                   "10.1." + std::to_string(i / 250) + "." + std::to_string(i % 250));
    }
    zone_ = b.Build();
  }
  Response Ask(const Query& q, Transport t = Transport::kUdp) { return testing::Ask(*zone_, q, t); }
  Response Read(const std::vector<uint8_t>& query, Transport t) {
    return testing::Read(*zone_, query, t);
  }

  std::shared_ptr<const Zone> zone_;
};

using Lines = std::vector<std::string>;

TEST_F(AnswerTest, AddressesOfAName) {
  Response r = Ask({.name = "WEB.default.flotilla.svc.flotilla.local"});
  EXPECT_EQ(r.id, 0x1234);
  EXPECT_TRUE(r.aa);
  EXPECT_EQ(r.rcode, KNOT_RCODE_NOERROR);
  EXPECT_EQ(r.answer, (Lines{"web.default.flotilla.svc.flotilla.local A 10.0.0.1",
                             "web.default.flotilla.svc.flotilla.local A 10.0.0.2"}));
  r = Ask({.name = "web.default.flotilla.svc.flotilla.local", .type = KNOT_RRTYPE_AAAA});
  EXPECT_EQ(r.answer, (Lines{"web.default.flotilla.svc.flotilla.local AAAA 2001:db8::1"}));
}

TEST_F(AnswerTest, CnamesAreFollowedInsideTheZone) {
  Response r = Ask({.name = "web.default.flotilla.svc.eu-b.eu.flotilla.local"});
  EXPECT_EQ(r.answer, (Lines{"web.default.flotilla.svc.eu-b.eu.flotilla.local CNAME "
                             "web.default.flotilla.svc.eu.flotilla.local.",
                             "web.default.flotilla.svc.eu.flotilla.local A 10.0.0.1"}));
  r = Ask({.name = "away.default.flotilla.svc.flotilla.local"});
  EXPECT_EQ(r.rcode, KNOT_RCODE_NOERROR);
  EXPECT_EQ(r.answer, (Lines{"away.default.flotilla.svc.flotilla.local CNAME lb.example.com."}));
}

TEST_F(AnswerTest, SrvCarriesItsTargetsAddresses) {
  Response r =
      Ask({.name = "_http._tcp.web.default.flotilla.svc.flotilla.local", .type = KNOT_RRTYPE_SRV});
  EXPECT_EQ(r.answer, (Lines{"_http._tcp.web.default.flotilla.svc.flotilla.local SRV 10 100 80 "
                             "web.default.flotilla.svc.flotilla.local."}));
  EXPECT_EQ(r.additional.size(), 3u);
}

TEST_F(AnswerTest, NegativeAnswersCarryTheSoa) {
  Response r = Ask({.name = "nothing.default.flotilla.svc.flotilla.local"});
  EXPECT_EQ(r.rcode, KNOT_RCODE_NXDOMAIN);
  EXPECT_TRUE(r.aa);
  EXPECT_TRUE(r.answer.empty());
  EXPECT_EQ(r.authority, (Lines{"flotilla.local SOA ns.flotilla.local. "
                                "hostmaster.flotilla.local. 7 3600 600 86400 30"}));
  // NODATA: the name exists without the type; so does an empty non-terminal.
  for (const Query& q :
       {Query{.name = "web.default.flotilla.svc.flotilla.local", .type = KNOT_RRTYPE_TXT},
        Query{.name = "default.flotilla.svc.flotilla.local"}}) {
    r = Ask(q);
    EXPECT_EQ(r.rcode, KNOT_RCODE_NOERROR) << q.name;
    EXPECT_TRUE(r.answer.empty());
    EXPECT_EQ(r.authority.size(), 1u);
  }
}

TEST_F(AnswerTest, TheApexHasSoaAndNs) {
  Response r = Ask({.name = "flotilla.local", .type = KNOT_RRTYPE_NS});
  EXPECT_EQ(r.answer, (Lines{"flotilla.local NS ns.flotilla.local."}));
  r = Ask({.name = "flotilla.local", .type = KNOT_RRTYPE_SOA});
  EXPECT_EQ(r.answer.size(), 1u);
}

TEST_F(AnswerTest, NamesOutsideTheZoneAreRefused) {
  Response r = Ask({.name = "example.com"});
  EXPECT_EQ(r.rcode, KNOT_RCODE_REFUSED);
  EXPECT_FALSE(r.aa);
  r = Ask({.name = "web.default.flotilla.svc.flotilla.local", .qclass = KNOT_CLASS_CH});
  EXPECT_EQ(r.rcode, KNOT_RCODE_REFUSED);
}

TEST_F(AnswerTest, TooBigForUdpIsTruncatedAndWholeOverTcp) {
  Query q{.name = "big.default.flotilla.svc.flotilla.local"};
  Response r = Ask(q);
  EXPECT_TRUE(r.tc);
  EXPECT_TRUE(r.answer.empty());
  EXPECT_LE(r.size, 512u);
  q.edns_payload = 4096;  // 200 A records need about 3.2 KB; we offer 1232
  r = Ask(q);
  EXPECT_TRUE(r.tc);
  EXPECT_TRUE(r.edns);
  EXPECT_LE(r.size, 1232u);
  r = Ask(q, Transport::kTcp);
  EXPECT_FALSE(r.tc);
  EXPECT_EQ(r.answer.size(), 200u);
}

TEST_F(AnswerTest, Edns) {
  Response r = Ask({.name = "web.default.flotilla.svc.flotilla.local", .edns_payload = 1232});
  EXPECT_TRUE(r.edns);
  EXPECT_EQ(r.answer.size(), 2u);
  r = Ask(
      {.name = "web.default.flotilla.svc.flotilla.local", .edns_payload = 1232, .edns_version = 1});
  EXPECT_EQ(r.rcode, KNOT_RCODE_BADVERS);
  EXPECT_TRUE(r.edns);
  EXPECT_TRUE(r.answer.empty());
}

TEST_F(AnswerTest, MalformedPacketsAreDroppedOrFormerr) {
  std::vector<uint8_t> good = Wire({.name = "web.default.flotilla.svc.flotilla.local"});
  // Shorter than a header: dropped.
  EXPECT_EQ(Read(std::vector<uint8_t>(good.begin(), good.begin() + 5), Transport::kUdp).size, 0u);
  // A response: dropped.
  std::vector<uint8_t> response = good;
  knot_wire_set_qr(response.data());
  EXPECT_EQ(Read(response, Transport::kUdp).size, 0u);
  // A question cut short, two questions, a bad label: FORMERR.
  std::vector<uint8_t> cut(good.begin(), good.end() - 3);
  std::vector<uint8_t> two = good;
  knot_wire_set_qdcount(two.data(), 2);
  std::vector<uint8_t> label = good;
  label[KNOT_WIRE_HEADER_SIZE] = 0x7f;
  for (const auto& bad : {cut, two, label}) {
    Response r = Read(bad, Transport::kUdp);
    EXPECT_EQ(r.rcode, KNOT_RCODE_FORMERR);
    EXPECT_EQ(r.id, 0x1234);
  }
  // Another opcode: NOTIMP.
  std::vector<uint8_t> notify = good;
  knot_wire_set_opcode(notify.data(), KNOT_OPCODE_NOTIFY);
  EXPECT_EQ(Read(notify, Transport::kUdp).rcode, KNOT_RCODE_NOTIMPL);
}

TEST(ZoneTest, WildcardsAnswerOnlyNamesTheZoneDoesNotHave) {
  // RFC 4592's rules: the wildcard at the closest encloser answers, with
  // the name asked as owner; an existing name (an empty non-terminal
  // too) is never covered.
  ZoneBuilder b(ZoneOptions{});
  b.AddAddress("*.shop.flotilla.local", "10.0.0.1");
  b.AddAddress("eu.shop.flotilla.local", "10.0.0.2");
  b.AddAddress("a.b.shop.flotilla.local", "10.0.0.3");  // b.shop: empty non-terminal
  b.AddCname("*.alias.flotilla.local", "eu.shop.flotilla.local");
  auto zone = b.Build();
  using Lines = std::vector<std::string>;
  auto ask = [&](const std::string& name, uint16_t type = KNOT_RRTYPE_A) {
    return testing::Ask(*zone, {.name = name, .type = type}, Transport::kUdp);
  };
  EXPECT_EQ(ask("www.shop.flotilla.local").answer, (Lines{"www.shop.flotilla.local A 10.0.0.1"}));
  EXPECT_EQ(ask("Deep.Er.shop.flotilla.local").answer,
            (Lines{"deep.er.shop.flotilla.local A 10.0.0.1"}));
  EXPECT_EQ(ask("eu.shop.flotilla.local").answer, (Lines{"eu.shop.flotilla.local A 10.0.0.2"}));
  Response ent = ask("b.shop.flotilla.local");  // exists, no records: NODATA
  EXPECT_EQ(ent.rcode, KNOT_RCODE_NOERROR);
  EXPECT_TRUE(ent.answer.empty());
  // Below an existing name the wildcard is not the parent of: NXDOMAIN.
  EXPECT_EQ(ask("x.b.shop.flotilla.local").rcode, KNOT_RCODE_NXDOMAIN);
  EXPECT_EQ(ask("x.eu.shop.flotilla.local").rcode, KNOT_RCODE_NXDOMAIN);
  // A matched wildcard without the type: NODATA.
  Response nodata = ask("www.shop.flotilla.local", KNOT_RRTYPE_AAAA);
  EXPECT_EQ(nodata.rcode, KNOT_RCODE_NOERROR);
  EXPECT_TRUE(nodata.answer.empty());
  EXPECT_EQ(ask("www.alias.flotilla.local").answer,
            (Lines{"www.alias.flotilla.local CNAME eu.shop.flotilla.local.",
                   "eu.shop.flotilla.local A 10.0.0.2"}));
  EXPECT_EQ(ask("www.flotilla.local").rcode, KNOT_RCODE_NXDOMAIN);
}

TEST(ZoneTest, InvalidOrOutsideNamesAreSkipped) {
  ZoneBuilder b(ZoneOptions{});
  b.AddAddress("ok.flotilla.local", "10.0.0.1");
  b.AddAddress("elsewhere.example.com", "10.0.0.1");
  b.AddAddress(std::string(70, 'x') + ".flotilla.local", "10.0.0.1");
  EXPECT_FALSE(b.AddAddress("bad.flotilla.local", "not-an-ip"));
  auto zone = b.Build();
  EXPECT_EQ(zone->skipped(), 2u);
  EXPECT_EQ(zone->records(), 3u);  // SOA, NS, one A
}

}  // namespace
}  // namespace flotilla::dns
