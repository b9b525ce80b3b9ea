// networking.k8s.io/v1 NetworkPolicy and v1 LimitRange as kube-apiserver
// serves them: defaults, validation and the Table row.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/kinds/test_util.h"

namespace flotilla::api::kinds {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const Resource& NetworkPolicies() { return Res("networking.k8s.io", "v1", "networkpolicies"); }
const Resource& LimitRanges() { return Res("", "v1", "limitranges"); }

json::object Defaulted(const Resource& r, std::string_view text) {
  json::object obj = Obj(text);
  r.default_fn(obj);
  return obj;
}

TEST(NetworkPolicyKind, DefaultsTcpAndThePolicyTypes) {
  json::object np = Defaulted(NetworkPolicies(), R"({"metadata":{"name":"db"},
    "spec":{"podSelector":{"matchLabels":{"app":"db"}},
      "ingress":[{"from":[{"podSelector":{"matchLabels":{"app":"web"}}}],"ports":[{"port":5432}]}],
      "egress":[{"to":[{"ipBlock":{"cidr":"10.0.0.0/8","except":["10.1.0.0/16"]}}]}]}})");
  EXPECT_EQ(StringAt(np["spec"]
                         .as_object()["ingress"]
                         .as_array()[0]
                         .as_object()["ports"]
                         .as_array()[0]
                         .as_object(),
                     "protocol"),
            "TCP");
  EXPECT_EQ(json::serialize(*Find(np, "spec.policyTypes")), R"(["Ingress","Egress"])");
  EXPECT_THAT(Messages(NetworkPolicies().validate_fn(np, nullptr)), IsEmpty());
  json::object ingress_only = Defaulted(NetworkPolicies(), R"({"spec":{"podSelector":{}}})");
  EXPECT_EQ(json::serialize(*Find(ingress_only, "spec.policyTypes")), R"(["Ingress"])");
}

TEST(NetworkPolicyKind, Validation) {
  json::object np = Defaulted(NetworkPolicies(), R"({"spec":{"podSelector":{},
    "ingress":[{"from":[{},{"ipBlock":{"cidr":"10.0.0.0/8","except":["192.168.0.0/16"]},
                            "podSelector":{}}],
                "ports":[{"port":0,"protocol":"ICMP"},{"port":"http","endPort":90},
                         {"port":100,"endPort":80}]}],
    "policyTypes":["Ingress","Sideways"]}})");
  EXPECT_THAT(
      Messages(NetworkPolicies().validate_fn(np, nullptr)),
      ElementsAre(
          R"(spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP")",
          "spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
          "spec.ingress[0].ports[1].endPort: Invalid value: 90: may not be specified when `port` "
          "is non-numeric",
          "spec.ingress[0].ports[2].endPort: Invalid value: 100: must be greater than or equal to "
          "`port`",
          "spec.ingress[0].from[0]: Required value: must specify a peer",
          R"(spec.ingress[0].from[1].ipBlock.except[0]: Invalid value: "192.168.0.0/16": must be a strict subset of `cidr`)",
          "spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer",
          R"(spec.policyTypes[1]: Unsupported value: "Sideways": supported values: "Ingress", "Egress")"));
}

TEST(NetworkPolicyKind, Columns) {
  EXPECT_THAT(ColumnNames(NetworkPolicies()), ElementsAre("Name", "Pod-Selector", "Age"));
  json::object np = Defaulted(NetworkPolicies(), R"({"metadata":{"name":"db",
    "creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"podSelector":{"matchLabels":{"app":"db"}}}})");
  TimePoint now;
  ASSERT_TRUE(ParseRfc3339("2026-01-01T00:10:00Z", &now));
  EXPECT_THAT(Row(NetworkPolicies(), np, now), ElementsAre("\"db\"", "\"app=db\"", "\"10m\""));
}

TEST(LimitRangeKind, ContainerDefaultsFollowMaxThenDefaultThenMin) {
  json::object lr = Defaulted(LimitRanges(), R"({"spec":{"limits":[{"type":"Container",
    "max":{"cpu":"2"},"default":{"memory":"512Mi"},"min":{"cpu":"100m","ephemeral-storage":"1Gi"}}]}})");
  const json::object& item = Find(lr, "spec.limits")->get_array()[0].get_object();
  EXPECT_EQ(json::serialize(item.at("default")), R"({"memory":"512Mi","cpu":"2"})");
  EXPECT_EQ(json::serialize(item.at("defaultRequest")),
            R"({"memory":"512Mi","cpu":"2","ephemeral-storage":"1Gi"})");
  EXPECT_THAT(Messages(LimitRanges().validate_fn(lr, nullptr)), IsEmpty());
}

TEST(LimitRangeKind, Validation) {
  json::object lr = Defaulted(LimitRanges(), R"({"spec":{"limits":[
    {"type":"Pod","default":{"cpu":"1"}},
    {"type":"Container","min":{"cpu":"2"},"max":{"cpu":"1"},"defaultRequest":{"memory":"2Gi"},
     "default":{"memory":"1Gi"},"maxLimitRequestRatio":{"cpu":"500m"}},
    {"type":"Node"},{}]}})");
  EXPECT_THAT(
      Messages(LimitRanges().validate_fn(lr, nullptr)),
      ElementsAre(
          "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'",
          R"(spec.limits[1].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1)",
          // The defaults from max (cpu 1) are checked as kube checks them.
          R"(spec.limits[1].defaultRequest[cpu]: Invalid value: "2": min value 2 is greater than default request value 1)",
          R"(spec.limits[1].default[cpu]: Invalid value: "2": min value 2 is greater than default value 1)",
          R"(spec.limits[1].defaultRequest[memory]: Invalid value: "2Gi": default request value 2Gi is greater than default limit value 1Gi)",
          R"(spec.limits[1].maxLimitRequestRatio[cpu]: Invalid value: "500m": ratio 500m is less than 1)",
          R"(spec.limits[2].type: Unsupported value: "Node": supported values: "Container", "PersistentVolumeClaim", "Pod")",
          "spec.limits[3].type: Required value"));
}

}  // namespace
}  // namespace flotilla::api::kinds
