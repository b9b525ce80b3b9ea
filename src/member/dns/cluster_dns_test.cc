// A member's cluster DNS records from its objects, as kube-dns names them.
#include "member/dns/cluster_dns.h"

#include <gtest/gtest.h>

#include "dns/test_util.h"

namespace flotilla::member {
namespace {

using dns::testing::Ask;
using Lines = std::vector<std::string>;

runtime::ObjectPtr Obj(const std::string& text) {
  return std::make_shared<const json::object>(json::parse(text).as_object());
}

TEST(ClusterDnsTest, ServicesPodsAndSrvAsKubeDnsNamesThem) {
  std::vector<runtime::ObjectPtr> services = {
      Obj(R"({"metadata": {"name": "web", "namespace": "default"},
              "spec": {"clusterIP": "10.96.0.10",
                       "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]}})"),
      Obj(R"({"metadata": {"name": "etcd", "namespace": "mynamespace"},
              "spec": {"clusterIP": "None", "ports": [{"name": "store", "port": 2379}]}})")};
  std::vector<runtime::ObjectPtr> endpoints = {
      Obj(R"({"metadata": {"name": "etcd", "namespace": "mynamespace"},
              "subsets": [{"addresses": [{"ip": "10.244.0.5"}, {"ip": "10.244.0.6"}],
                           "notReadyAddresses": [{"ip": "10.244.0.7"}]}]})")};
  std::vector<runtime::ObjectPtr> pods = {
      Obj(R"({"metadata": {"name": "store-c1-0", "namespace": "mynamespace"},
              "spec": {"hostname": "store-c1-0", "subdomain": "etcd"},
              "status": {"podIP": "10.244.0.5"}})"),
      Obj(R"({"metadata": {"name": "other", "namespace": "mynamespace"},
              "spec": {}, "status": {"podIP": "10.244.0.9"}})")};
  auto zone = BuildClusterZone(ClusterDnsOptions{}, 1, services, endpoints, pods);
  EXPECT_EQ(Ask(*zone, {.name = "web.default.svc.cluster.local"}).answer,
            (Lines{"web.default.svc.cluster.local A 10.96.0.10"}));
  EXPECT_EQ(
      Ask(*zone, {.name = "_http._tcp.web.default.svc.cluster.local", .type = KNOT_RRTYPE_SRV})
          .answer,
      (Lines{"_http._tcp.web.default.svc.cluster.local SRV 0 100 80 "
             "web.default.svc.cluster.local."}));
  // Headless: the ready endpoints; the seed's local identity of a pod.
  EXPECT_EQ(Ask(*zone, {.name = "etcd.mynamespace.svc.cluster.local"}).answer,
            (Lines{"etcd.mynamespace.svc.cluster.local A 10.244.0.5",
                   "etcd.mynamespace.svc.cluster.local A 10.244.0.6"}));
  EXPECT_EQ(Ask(*zone, {.name = "store-c1-0.etcd.mynamespace.svc.cluster.local"}).answer,
            (Lines{"store-c1-0.etcd.mynamespace.svc.cluster.local A 10.244.0.5"}));
  EXPECT_EQ(Ask(*zone,
                {.name = "_store._tcp.etcd.mynamespace.svc.cluster.local", .type = KNOT_RRTYPE_SRV})
                .answer,
            (Lines{"_store._tcp.etcd.mynamespace.svc.cluster.local SRV 0 100 2379 "
                   "store-c1-0.etcd.mynamespace.svc.cluster.local."}));
  EXPECT_EQ(Ask(*zone, {.name = "other.etcd.mynamespace.svc.cluster.local"}).rcode,
            KNOT_RCODE_NXDOMAIN);
}

}  // namespace
}  // namespace flotilla::member
