// networking.k8s.io/v1 Ingress and IngressClass as kube-apiserver serves
// them: validation, defaults and the Table rows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/kinds/test_util.h"

namespace flotilla::api::kinds {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const Resource& Ingresses() { return Res("networking.k8s.io", "v1", "ingresses"); }
const Resource& IngressClasses() { return Res("networking.k8s.io", "v1", "ingressclasses"); }

constexpr std::string_view kShop = R"({"metadata":{"name":"shop",
  "creationTimestamp":"2026-01-01T00:00:00Z"},
  "spec":{"ingressClassName":"nginx",
    "rules":[{"host":"shop.example.com","http":{"paths":[
      {"path":"/","pathType":"Prefix","backend":{"service":{"name":"web","port":{"number":80}}}},
      {"path":"/api","pathType":"Exact","backend":{"service":{"name":"api","port":{"name":"http"}}}}]}},
      {"http":{"paths":[{"pathType":"ImplementationSpecific",
        "backend":{"service":{"name":"web","port":{"number":80}}}}]}}]},
  "status":{"loadBalancer":{"ingress":[{"ip":"172.18.0.1"},{"ip":"172.18.1.1"}]}}})";

TEST(IngressKind, ServedAsKubeServesIt) {
  EXPECT_THAT(Ingresses().short_names, ElementsAre("ing"));
  EXPECT_TRUE(Ingresses().has_status);
  EXPECT_FALSE(IngressClasses().namespaced);
  EXPECT_THAT(Messages(Ingresses().validate_fn(Obj(kShop), nullptr)), IsEmpty());
}

TEST(IngressKind, Validation) {
  EXPECT_THAT(Messages(Ingresses().validate_fn(Obj(R"({"spec":{}})"), nullptr)),
              ElementsAre("spec: Invalid value: []networking.IngressRule(nil): either "
                          "`defaultBackend` or `rules` must be specified"));
  EXPECT_THAT(
      Messages(Ingresses().validate_fn(Obj(R"({"spec":{"rules":[
        {"host":"10.0.0.1","http":{"paths":[]}},
        {"host":"*.Shop","http":{"paths":[
          {"path":"api","pathType":"Prefix","backend":{"service":{"name":"Web","port":{}}}},
          {"path":"/a//b","pathType":"Exact","backend":{}},
          {"path":"/","backend":{"service":{"name":"web","port":{"number":70000}}}},
          {"path":"/","pathType":"Regex","backend":{"service":{"name":"web","port":{"name":"http","number":80}},
                                                    "resource":{"kind":"Bucket","name":"b"}}}]}}],
        "tls":[{"hosts":["bad_host"]}],"ingressClassName":"Nginx"}})"),
                                       nullptr)),
      ElementsAre(
          R"(spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address)",
          "spec.rules[0].http.paths: Required value",
          R"(spec.rules[1].host: Invalid value: "*.Shop": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'))",
          R"(spec.rules[1].http.paths[0].path: Invalid value: "api": must be an absolute path)",
          R"(spec.rules[1].http.paths[0].backend.service.name: Invalid value: "Web": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?'))",
          "spec.rules[1].http.paths[0].backend.service.port: Required value: port name or "
          "number is required",
          R"(spec.rules[1].http.paths[1].path: Invalid value: "/a//b": must not contain '//')",
          R"(spec.rules[1].http.paths[1].backend: Invalid value: "": resource or service backend is required)",
          "spec.rules[1].http.paths[2].pathType: Required value: pathType must be specified",
          "spec.rules[1].http.paths[2].backend.service.port.number: Invalid value: 70000: must "
          "be between 1 and 65535, inclusive",
          R"(spec.rules[1].http.paths[3].pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix")",
          R"(spec.rules[1].http.paths[3].backend: Invalid value: "": cannot set both resource and service backends)",
          R"(spec.tls[0].hosts[0]: Invalid value: "bad_host": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'))",
          R"(spec.ingressClassName: Invalid value: "Nginx": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'))"));
}

TEST(IngressKind, Columns) {
  EXPECT_THAT(ColumnNames(Ingresses()),
              ElementsAre("Name", "Class", "Hosts", "Address", "Ports", "Age"));
  TimePoint now;
  ASSERT_TRUE(ParseRfc3339("2026-01-01T00:10:00Z", &now));
  EXPECT_THAT(Row(Ingresses(), Obj(kShop), now),
              ElementsAre("\"shop\"", "\"nginx\"", "\"shop.example.com,*\"", "\"172.18.0.1,17...\"",
                          "\"80\"", "\"10m\""));
  json::object tls = Obj(R"({"metadata":{"name":"t"},"spec":{"tls":[{"hosts":["a.b"]}],
    "defaultBackend":{"service":{"name":"web","port":{"number":80}}}}})");
  EXPECT_THAT(Row(Ingresses(), tls, now),
              ElementsAre("\"t\"", "\"<none>\"", "\"*\"", "\"\"", "\"80, 443\"", "\"<unknown>\""));
}

TEST(IngressClassKind, DefaultsValidationAndColumns) {
  json::object c = Obj(R"({"metadata":{"name":"nginx"},"spec":{"controller":"k8s.io/ingress-nginx",
    "parameters":{"apiGroup":"k8s.example.com","kind":"IngressParameters","name":"external"}}})");
  IngressClasses().default_fn(c);
  EXPECT_EQ(StringAt(c, "spec.parameters.scope"), "Cluster");
  EXPECT_THAT(Messages(IngressClasses().validate_fn(c, nullptr)), IsEmpty());
  EXPECT_THAT(ColumnNames(IngressClasses()),
              ElementsAre("Name", "Controller", "Parameters", "Age"));
  EXPECT_THAT(Row(IngressClasses(), c, TimePoint{}),
              ElementsAre("\"nginx\"", "\"k8s.io/ingress-nginx\"",
                          "\"IngressParameters.k8s.example.com/external\"", "\"<unknown>\""));
  EXPECT_THAT(
      Messages(IngressClasses().validate_fn(
          Obj(R"({"spec":{"controller":"nginx","parameters":{"scope":"Namespace"}}})"), nullptr)),
      ElementsAre(
          R"(spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo"))",
          "spec.parameters.kind: Required value: kind is required",
          "spec.parameters.name: Required value: name is required",
          "spec.parameters.namespace: Required value: `parameters.scope` is set "
          "to 'Namespace'"));
  EXPECT_THAT(
      Messages(IngressClasses().validate_fn(Obj(R"({"spec":{"controller":"a.io/b"}})"), &c)),
      ElementsAre(R"(spec.controller: Invalid value: "a.io/b": field is immutable)"));
}

}  // namespace
}  // namespace flotilla::api::kinds
