// apps/v1 DaemonSet as kube-apiserver serves it: defaults, validation on
// create and update, and the Table row.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/kinds/test_util.h"

namespace flotilla::api::kinds {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const char kDaemonSet[] = R"({"apiVersion":"apps/v1","kind":"DaemonSet",
  "metadata":{"name":"logs","namespace":"default"},
  "spec":{"selector":{"matchLabels":{"app":"logs"}},
    "template":{"metadata":{"labels":{"app":"logs"}},
      "spec":{"containers":[{"name":"fluentd","image":"fluentd:1"}]}}}})";

const Resource& DaemonSets() { return Res("apps", "v1", "daemonsets"); }

json::object Defaulted(json::object obj) {
  DaemonSets().default_fn(obj);
  return obj;
}

TEST(DaemonSetKind, Defaults) {
  json::object ds = Defaulted(Obj(kDaemonSet));
  EXPECT_EQ(StringAt(ds, "spec.updateStrategy.type"), "RollingUpdate");
  EXPECT_EQ(IntAt(ds, "spec.updateStrategy.rollingUpdate.maxUnavailable"), 1);
  EXPECT_EQ(IntAt(ds, "spec.updateStrategy.rollingUpdate.maxSurge"), 0);
  EXPECT_EQ(IntAt(ds, "spec.revisionHistoryLimit"), 10);
  EXPECT_EQ(StringAt(ds, "spec.template.spec.restartPolicy"), "Always");
  EXPECT_THAT(Messages(DaemonSets().validate_fn(ds, nullptr)), IsEmpty());

  json::object on_delete = Obj(kDaemonSet);
  MergePatch(on_delete, Obj(R"({"spec":{"updateStrategy":{"type":"OnDelete"}}})"));
  on_delete = Defaulted(on_delete);
  EXPECT_EQ(Find(on_delete, "spec.updateStrategy.rollingUpdate"), nullptr);
}

TEST(DaemonSetKind, Validation) {
  json::object ds = Defaulted(Obj(kDaemonSet));
  MergePatch(ds, Obj(R"({"spec":{"selector":{"matchLabels":{"app":"other"}},"minReadySeconds":-1,
    "updateStrategy":{"rollingUpdate":{"maxUnavailable":"120%","maxSurge":1}},
    "template":{"spec":{"restartPolicy":"Never","activeDeadlineSeconds":5}}}})"));
  EXPECT_THAT(
      Messages(DaemonSets().validate_fn(ds, nullptr)),
      ElementsAre(
          R"(spec.template.metadata.labels: Invalid value: map[string]string{"app":"logs"}: `selector` does not match template `labels`)",
          R"(spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always")",
          "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in "
          "DaemonSet is not Supported",
          "spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0",
          R"(spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"120%"}: must not be greater than 100%)",
          R"(spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:""}: may not be set when maxUnavailable is non-zero)"));

  ds = Defaulted(Obj(kDaemonSet));
  MergePatch(ds, Obj(R"({"spec":{"updateStrategy":{"rollingUpdate":{"maxUnavailable":0}}}})"));
  EXPECT_THAT(Messages(DaemonSets().validate_fn(ds, nullptr)),
              ElementsAre("spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: "
                          "cannot be 0 when maxSurge is 0"));

  ds = Defaulted(Obj(kDaemonSet));
  MergePatch(ds, Obj(R"({"spec":{"updateStrategy":{"type":"Sometimes"}}})"));
  EXPECT_THAT(Messages(DaemonSets().validate_fn(ds, nullptr)),
              ElementsAre(::testing::StartsWith(
                  "spec.updateStrategy: Unsupported value: apps.DaemonSetUpdateStrategy{")));
}

TEST(DaemonSetKind, SurgeInsteadOfUnavailableAndTheSelectorIsImmutable) {
  json::object old = Defaulted(Obj(kDaemonSet));
  json::object ds = old;
  MergePatch(ds, Obj(R"({"spec":{"updateStrategy":{"rollingUpdate":{"maxUnavailable":0,
    "maxSurge":"25%"}}}})"));
  EXPECT_THAT(Messages(DaemonSets().validate_fn(ds, &old)), IsEmpty());
  MergePatch(ds, Obj(R"({"spec":{"selector":{"matchLabels":{"app":"logs","tier":"x"}},
    "template":{"metadata":{"labels":{"tier":"x"}}}}})"));
  EXPECT_THAT(Messages(DaemonSets().validate_fn(ds, &old)),
              ElementsAre(::testing::EndsWith("field is immutable")));
}

TEST(DaemonSetKind, Columns) {
  EXPECT_THAT(ColumnNames(DaemonSets()),
              ElementsAre("Name", "Desired", "Current", "Ready", "Up-to-date", "Available",
                          "Node Selector", "Age", "Containers", "Images", "Selector"));
  EXPECT_THAT(DaemonSets().short_names, ElementsAre("ds"));
  json::object ds = Defaulted(Obj(kDaemonSet));
  MergePatch(ds, Obj(R"({"metadata":{"creationTimestamp":"2026-01-01T00:00:00Z"},
    "spec":{"template":{"spec":{"nodeSelector":{"role":"edge","disk":"ssd"}}}},
    "status":{"desiredNumberScheduled":3,"currentNumberScheduled":3,"numberReady":2,
      "updatedNumberScheduled":1,"numberAvailable":2}})"));
  TimePoint now;
  ASSERT_TRUE(ParseRfc3339("2026-01-01T00:10:00Z", &now));
  std::vector<std::string> row = Row(DaemonSets(), ds, now);
  EXPECT_THAT(row, ElementsAre("\"logs\"", "3", "3", "2", "1", "2", "\"disk=ssd,role=edge\"",
                               "\"10m\"", "\"fluentd\"", "\"fluentd:1\"", "\"app=logs\""));
}

}  // namespace
}  // namespace flotilla::api::kinds
