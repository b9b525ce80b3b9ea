// The federation's DNS records from facts: names, health, the CNAME
// fallbacks, SRV, stateful pods.
#include "federation/dns/records.h"

#include <gtest/gtest.h>

#include "dns/test_util.h"

namespace flotilla::federation::dns {
namespace {

using ::flotilla::dns::ZoneBuilder;
using ::flotilla::dns::ZoneOptions;
using ::flotilla::dns::testing::Ask;
using ::flotilla::dns::testing::Response;
using Lines = std::vector<std::string>;

json::object Service(const std::string& name, const std::string& cluster_ip = "") {
  json::object spec{
      {"type", "LoadBalancer"},
      {"ports", json::array{json::object{{"name", "http"}, {"protocol", "TCP"}, {"port", 80}}}}};
  if (!cluster_ip.empty()) spec["clusterIP"] = cluster_ip;
  return json::object{{"metadata", json::object{{"name", name}, {"namespace", "default"}}},
                      {"spec", std::move(spec)}};
}

json::object WithIngress(json::object svc, const std::string& ip, bool hostname = false) {
  svc["status"] = json::object{
      {"loadBalancer",
       json::object{{"ingress", json::array{json::object{{hostname ? "hostname" : "ip", ip}}}}}}};
  return svc;
}

class RecordsTest : public ::testing::Test {
 protected:
  RecordsTest() {
    clusters_ = {{.name = "c1", .ready = true, .region = "eu", .zones = {"eu-a"}},
                 {.name = "c2", .ready = true, .region = "eu", .zones = {"eu-b"}},
                 {.name = "c3", .ready = true, .region = "us", .zones = {"us-a"}}};
    copies_ = {{.cluster = "c1",
                .service = WithIngress(Service("web"), "10.1.0.1"),
                .ready_endpoint = true},
               {.cluster = "c2",
                .service = WithIngress(Service("web"), "10.2.0.1"),
                .ready_endpoint = true},
               {.cluster = "c3",
                .service = WithIngress(Service("web"), "10.3.0.1"),
                .ready_endpoint = true}};
  }
  Lines A(const std::string& name) {
    ZoneBuilder b(ZoneOptions{});
    AddServiceRecords(b, names_, clusters_, Service("web"), copies_, {});
    zone_ = b.Build();
    return Ask(*zone_, {.name = name}).answer;
  }
  Response Query(const std::string& name, uint16_t type) {
    return Ask(*zone_, {.name = name, .type = type});
  }

  DnsNames names_;
  std::vector<ClusterFacts> clusters_;
  std::vector<CopyFacts> copies_;
  std::shared_ptr<const ::flotilla::dns::Zone> zone_;
};

TEST_F(RecordsTest, NameScheme) {
  EXPECT_EQ(names_.Global("ns", "web"), "web.ns.flotilla.svc.flotilla.local");
  EXPECT_EQ(names_.Regional("ns", "web", "eu"), "web.ns.flotilla.svc.eu.flotilla.local");
  EXPECT_EQ(names_.Zonal("ns", "web", "eu-a", "eu"), "web.ns.flotilla.svc.eu-a.eu.flotilla.local");
  EXPECT_EQ(names_.Pod("ns", "etcd", "store-c1-0"),
            "store-c1-0.etcd.ns.flotilla.svc.flotilla.local");
}

TEST_F(RecordsTest, GlobalRegionalAndZonalAddresses) {
  EXPECT_EQ(A("web.default.flotilla.svc.flotilla.local"),
            (Lines{"web.default.flotilla.svc.flotilla.local A 10.1.0.1",
                   "web.default.flotilla.svc.flotilla.local A 10.2.0.1",
                   "web.default.flotilla.svc.flotilla.local A 10.3.0.1"}));
  EXPECT_EQ(A("web.default.flotilla.svc.eu.flotilla.local"),
            (Lines{"web.default.flotilla.svc.eu.flotilla.local A 10.1.0.1",
                   "web.default.flotilla.svc.eu.flotilla.local A 10.2.0.1"}));
  EXPECT_EQ(A("web.default.flotilla.svc.eu-b.eu.flotilla.local"),
            (Lines{"web.default.flotilla.svc.eu-b.eu.flotilla.local A 10.2.0.1"}));
}

TEST_F(RecordsTest, UnhealthyCopiesLeaveAndTheirScopesFallBack) {
  copies_[1].ready_endpoint = false;  // c2: no ready endpoint
  clusters_[2].ready = false;         // c3: cluster not Ready
  EXPECT_EQ(A("web.default.flotilla.svc.flotilla.local"),
            (Lines{"web.default.flotilla.svc.flotilla.local A 10.1.0.1"}));
  // eu-b has nothing: CNAME to eu, which has c1.
  EXPECT_EQ(A("web.default.flotilla.svc.eu-b.eu.flotilla.local"),
            (Lines{"web.default.flotilla.svc.eu-b.eu.flotilla.local CNAME "
                   "web.default.flotilla.svc.eu.flotilla.local.",
                   "web.default.flotilla.svc.eu.flotilla.local A 10.1.0.1"}));
  // us has nothing: us-a -> us -> global.
  Lines us = A("web.default.flotilla.svc.us-a.us.flotilla.local");
  ASSERT_EQ(us.size(), 3u);
  EXPECT_EQ(us[1],
            "web.default.flotilla.svc.us.flotilla.local CNAME "
            "web.default.flotilla.svc.flotilla.local.");
  // SRV at the zone targets the nearest name with addresses.
  Response srv =
      Query("_http._tcp.web.default.flotilla.svc.us-a.us.flotilla.local", KNOT_RRTYPE_SRV);
  EXPECT_EQ(srv.answer, (Lines{"_http._tcp.web.default.flotilla.svc.us-a.us.flotilla.local SRV 0 "
                               "100 80 web.default.flotilla.svc.flotilla.local."}));
}

TEST_F(RecordsTest, NothingHealthyIsNodataNotNxdomain) {
  for (CopyFacts& c : copies_) c.ready_endpoint = false;
  EXPECT_TRUE(A("web.default.flotilla.svc.flotilla.local").empty());
  EXPECT_EQ(Query("web.default.flotilla.svc.flotilla.local", KNOT_RRTYPE_A).rcode,
            KNOT_RCODE_NOERROR);
}

TEST_F(RecordsTest, AHostnameIngressIsACname) {
  copies_ = {{.cluster = "c3",
              .service = WithIngress(Service("web"), "lb.example.com", true),
              .ready_endpoint = true}};
  EXPECT_EQ(A("web.default.flotilla.svc.us-a.us.flotilla.local"),
            (Lines{"web.default.flotilla.svc.us-a.us.flotilla.local CNAME lb.example.com."}));
}

TEST_F(RecordsTest, IngressHostsUnderTheDomainAnswerTheServingClustersAddresses) {
  json::object shop{
      {"metadata", json::object{{"name", "shop"}, {"namespace", "default"}}},
      {"spec", json::object{{"rules", json::array{json::object{{"host", "shop.flotilla.local"}},
                                                  json::object{{"host", "*.eu.flotilla.local"}},
                                                  json::object{{"host", "shop.example.com"}},
                                                  json::object{}}}}}};
  shop = WithIngress(shop, "172.18.0.1");
  shop["status"].as_object()["loadBalancer"].as_object()["ingress"].as_array().push_back(
      json::object{{"ip", "172.18.1.1"}});
  ZoneBuilder b(ZoneOptions{});
  AddIngressRecords(b, shop);
  zone_ = b.Build();
  EXPECT_EQ(Ask(*zone_, {.name = "shop.flotilla.local"}).answer,
            (Lines{"shop.flotilla.local A 172.18.0.1", "shop.flotilla.local A 172.18.1.1"}));
  // A wildcard host answers the names under it the zone does not have.
  EXPECT_EQ(Ask(*zone_, {.name = "any.eu.flotilla.local"}).answer,
            (Lines{"any.eu.flotilla.local A 172.18.0.1", "any.eu.flotilla.local A 172.18.1.1"}));
  // Outside the domain: not the federation's to answer.
  EXPECT_GT(zone_->skipped(), 0u);
  EXPECT_TRUE(Ask(*zone_, {.name = "shop.example.com"}).answer.empty());
  // Served nowhere, nothing; served by hostname only, a CNAME to the first.
  json::object none = shop;
  none.erase("status");
  ZoneBuilder empty(ZoneOptions{});
  AddIngressRecords(empty, none);
  AddIngressRecords(empty,
                    WithIngress(json::object{{"spec", none.at("spec")}}, "lb.example.com", true));
  zone_ = empty.Build();
  EXPECT_EQ(Ask(*zone_, {.name = "shop.flotilla.local"}).answer,
            (Lines{"shop.flotilla.local CNAME lb.example.com."}));
}

TEST_F(RecordsTest, StatefulPodsHaveTheirOwnNamesAndSrv) {
  json::object etcd = Service("etcd", "None");
  etcd["metadata"].as_object()["annotations"] = json::object{
      {"federation.kubernetes.io/stateful-replica-list", "store-c1-0, store-c2-0, store-c3-0"}};
  ZoneBuilder b(ZoneOptions{});
  AddServiceRecords(b, names_, clusters_, etcd, {},
                    {{"default/store-c1-0", {"10.1.0.7"}}, {"default/store-c2-0", {"10.2.0.7"}}});
  zone_ = b.Build();
  EXPECT_EQ(Query("store-c2-0.etcd.default.flotilla.svc.flotilla.local", KNOT_RRTYPE_A).answer,
            (Lines{"store-c2-0.etcd.default.flotilla.svc.flotilla.local A 10.2.0.7"}));
  EXPECT_EQ(Query("etcd.default.flotilla.svc.flotilla.local", KNOT_RRTYPE_A).answer.size(), 2u);
  // store-c3-0 has no address yet: no SRV target for it.
  Response srv = Query("_http._tcp.etcd.default.flotilla.svc.flotilla.local", KNOT_RRTYPE_SRV);
  EXPECT_EQ(srv.answer, (Lines{"_http._tcp.etcd.default.flotilla.svc.flotilla.local SRV 0 10 80 "
                               "store-c1-0.etcd.default.flotilla.svc.flotilla.local.",
                               "_http._tcp.etcd.default.flotilla.svc.flotilla.local SRV 0 10 80 "
                               "store-c2-0.etcd.default.flotilla.svc.flotilla.local."}));
  EXPECT_EQ(srv.additional.size(), 2u);
  EXPECT_EQ(Query("etcd.default.flotilla.svc.flotilla.local", KNOT_RRTYPE_SRV).answer.size(), 2u);
}

// The zone is built again for a Cluster update only when what it reads of
// the Cluster changed: not for a probe's times or a new count of copies.
TEST(ClusterFactsTest, AreTheNameRegionAndZonesOfTheStatus) {
  json::object cluster = json::parse(R"({"metadata":{"name":"a","labels":{"x":"y"}},
    "spec":{"region":"ignored"},
    "status":{"region":"eu","zones":["eu-1","eu-2"],"federatedObjects":3,
      "conditions":[{"type":"Ready","status":"True","lastProbeTime":"2026-12-07T00:00:00Z"}]}})")
                             .as_object();
  ClusterFacts facts = ClusterFactsOf(cluster);
  EXPECT_EQ(facts, (ClusterFacts{.name = "a", .region = "eu", .zones = {"eu-1", "eu-2"}}));

  json::object probed = cluster;
  json::object& status = probed["status"].as_object();
  status["federatedObjects"] = 4;
  status["conditions"].as_array()[0].as_object()["lastProbeTime"] = "2026-12-07T00:00:10Z";
  probed["metadata"].as_object()["labels"] = json::object{};
  EXPECT_EQ(ClusterFactsOf(probed), facts);

  json::object moved = probed;
  moved["status"].as_object()["zones"] = json::array{"eu-1"};
  EXPECT_NE(ClusterFactsOf(moved), facts);
  moved = probed;
  moved["status"].as_object()["region"] = "us";
  EXPECT_NE(ClusterFactsOf(moved), facts);
}

}  // namespace
}  // namespace flotilla::federation::dns
