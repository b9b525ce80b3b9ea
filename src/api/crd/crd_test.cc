#include "api/crd/crd.h"

#include <gtest/gtest.h>

namespace flotilla::api::crd {
namespace {

json::object Crd(std::string_view spec_overrides = "{}") {
  json::object crd = json::parse(R"({
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "crontabs.stable.example.com"},
    "spec": {"group": "stable.example.com", "scope": "Namespaced",
      "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "shortNames": ["ct"]},
      "versions": [
        {"name": "v1", "served": true, "storage": true,
         "schema": {"openAPIV3Schema": {"type": "object", "properties": {
           "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
           "status": {"type": "object", "properties": {"replicas": {"type": "integer"},
                                                      "selector": {"type": "string"}}}}}},
         "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
             "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}},
         "additionalPrinterColumns": [{"name": "Replicas", "type": "integer",
                                       "jsonPath": ".spec.replicas"}]},
        {"name": "v1beta1", "served": true, "storage": false,
         "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}
      ]}})")
                         .as_object();
  json::object over = json::parse(spec_overrides).as_object();
  for (auto& [k, v] : over) crd["spec"].as_object()[k] = v;
  return crd;
}

std::vector<std::string> CauseLines(const std::vector<StatusCause>& causes) {
  std::vector<std::string> out;
  for (const StatusCause& c : causes) out.push_back(c.field + ": " + c.message);
  return out;
}

TEST(CrdTest, AValidCrdReadsWithItsVersionsAndSubresources) {
  auto d = Read(Crd());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->plural, "crontabs");
  EXPECT_EQ(d->list_kind, "CronTabList");
  ASSERT_EQ(d->versions.size(), 2u);
  ASSERT_NE(d->StorageVersion(), nullptr);
  EXPECT_EQ(d->StorageVersion()->name, "v1");
  const Version& v1 = d->versions[0];
  EXPECT_TRUE(v1.status);
  EXPECT_TRUE(v1.scale);
  EXPECT_EQ(v1.spec_replicas_path, "spec.replicas");
  EXPECT_EQ(v1.label_selector_path, "status.selector");
  ASSERT_EQ(v1.columns.size(), 1u);
  EXPECT_EQ(v1.columns[0].json_path, ".spec.replicas");
}

TEST(CrdTest, InvalidCrdsAreRefusedWithFieldPaths) {
  struct Case {
    std::string overrides;
    std::string line;
  } cases[] = {
      {R"({"group": "example"})",
       "spec.group: Invalid value: \"example\": should be a domain with at least one dot"},
      {R"({"scope": "Global"})",
       "spec.scope: Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespaced\""},
      {R"({"names": {"plural": "CronTabs", "kind": "CronTab"}})",
       "spec.names.plural: Invalid value: \"CronTabs\": a DNS-1035 label must consist of lower "
       "case alphanumeric characters or '-', start with an alphabetic character, and end with an "
       "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
       "'[a-z]([-a-z0-9]*[a-z0-9])?')"},
      {R"({"names": {"plural": "tabs", "kind": "CronTab"}})",
       "metadata.name: Invalid value: \"crontabs.stable.example.com\": must be "
       "spec.names.plural+\".\"+spec.group"},
      {R"({"versions": [{"name": "v1", "served": true, "storage": false,
           "schema": {"openAPIV3Schema": {"type": "object"}}}]})",
       "spec.versions: Invalid value: \"0 storage versions\": must have exactly one version "
       "marked as storage version"},
      {R"({"versions": [{"name": "v1", "served": true, "storage": true}]})",
       "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"},
      {R"({"conversion": {"strategy": "Webhook"}})",
       "spec.conversion.strategy: Unsupported value: \"Webhook\": supported values: \"None\" "
       "(conversion webhooks are not served by Flotilla: docs/crds.md)"},
      {R"({"preserveUnknownFields": true})",
       "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set "
       "x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> lines = CauseLines(Validate(Crd(c.overrides), nullptr));
    EXPECT_NE(std::find(lines.begin(), lines.end(), c.line), lines.end())
        << c.overrides << " gave " << json::serialize(json::value_from(lines));
  }
  EXPECT_TRUE(Validate(Crd(), nullptr).empty());
  json::object cluster = Crd(R"({"scope": "Cluster"})");
  json::object old = Crd();
  std::vector<std::string> lines = CauseLines(Validate(cluster, &old));
  EXPECT_EQ(lines,
            std::vector<std::string>{"spec.scope: Invalid value: \"Cluster\": field is immutable"});
}

TEST(CrdTest, NamesOfOneGroupConflict) {
  auto a = Read(Crd());
  json::object other = Crd(R"({"names": {"plural": "crontabs2", "kind": "CronTab2",
                                         "shortNames": ["ct"]}})");
  other["metadata"].as_object()["name"] = "crontabs2.stable.example.com";
  auto b = Read(other);
  ASSERT_TRUE(a.ok() && b.ok()) << b.status().ToString();
  EXPECT_EQ(ConflictingNames(*b, *a), std::vector<std::string>{"ct"});
  b->group = "other.example.com";
  EXPECT_TRUE(ConflictingNames(*b, *a).empty());
}

TEST(CrdTest, PrinterColumnPathsEvaluate) {
  json::object obj = json::parse(R"({"spec": {"replicas": 3},
      "status": {"conditions": [{"type": "Ready"}, {"type": "Synced"}]},
      "metadata": {"labels": {"app": "web"}}})")
                         .as_object();
  ASSERT_NE(Evaluate(obj, ".spec.replicas"), nullptr);
  EXPECT_EQ(*Evaluate(obj, ".spec.replicas"), json::value(3));
  EXPECT_EQ(*Evaluate(obj, ".status.conditions[1].type"), json::value("Synced"));
  EXPECT_EQ(*Evaluate(obj, "{.metadata.labels.app}"), json::value("web"));
  EXPECT_EQ(Evaluate(obj, ".status.conditions[2].type"), nullptr);
  EXPECT_EQ(Evaluate(obj, ".spec.missing"), nullptr);
}

}  // namespace
}  // namespace flotilla::api::crd
