// policy/v1 PodDisruptionBudget as kube-apiserver serves it: validation and
// the Table row.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/kinds/test_util.h"

namespace flotilla::api::kinds {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const Resource& Budgets() { return Res("policy", "v1", "poddisruptionbudgets"); }

TEST(PodDisruptionBudgetKind, ServedAsKubeServesIt) {
  const Resource& r = Budgets();
  EXPECT_THAT(r.short_names, ElementsAre("pdb"));
  EXPECT_TRUE(r.has_status);
  EXPECT_TRUE(r.namespaced);
  EXPECT_FALSE(r.default_fn);  // policy/v1 defaults nothing
}

TEST(PodDisruptionBudgetKind, ValidBudgets) {
  for (std::string_view text :
       {R"({"spec":{"minAvailable":2,"selector":{"matchLabels":{"app":"web"}}}})",
        R"({"spec":{"maxUnavailable":"25%","selector":{"matchLabels":{"app":"web"}},
            "unhealthyPodEvictionPolicy":"AlwaysAllow"}})",
        R"({"spec":{"minAvailable":"100%"}})"}) {
    EXPECT_THAT(Messages(Budgets().validate_fn(Obj(text), nullptr)), IsEmpty()) << text;
  }
}

TEST(PodDisruptionBudgetKind, Validation) {
  EXPECT_THAT(
      Messages(Budgets().validate_fn(Obj(R"({"spec":{"minAvailable":2,"maxUnavailable":"1%"}})"),
                                     nullptr)),
      ElementsAre("spec: Invalid value: policy.PodDisruptionBudgetSpec{MinAvailable:&intstr."
                  "IntOrString{Type:0, IntVal:2, StrVal:\"\"}, MaxUnavailable:&intstr.IntOrString{"
                  "Type:1, IntVal:0, StrVal:\"1%\"}}: minAvailable and maxUnavailable cannot be "
                  "both set"));
  EXPECT_THAT(
      Messages(Budgets().validate_fn(
          Obj(R"({"spec":{"minAvailable":-1,"selector":{"matchLabels":{"app":"-"}},
                  "unhealthyPodEvictionPolicy":"Never"}})"),
          nullptr)),
      ElementsAre(
          "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0",
          "spec.selector.matchLabels: Invalid value: \"-\": a valid label must be an "
          "empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
          "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  "
          "or '12345', regex used for validation is "
          "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
          R"(spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget")"));
  EXPECT_THAT(
      Messages(Budgets().validate_fn(Obj(R"({"spec":{"maxUnavailable":"120%"}})"), nullptr)),
      ElementsAre("spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, "
                  "StrVal:\"120%\"}: must not be greater than 100%"));
  EXPECT_THAT(
      Messages(Budgets().validate_fn(Obj(R"({"spec":{"minAvailable":"half"}})"), nullptr)),
      ElementsAre("spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, "
                  "StrVal:\"half\"}: a valid percent string must be a numeric string followed by "
                  "an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"));
  EXPECT_THAT(
      Messages(Budgets().validate_fn(
          Obj(R"({"spec":{"minAvailable":1},"status":{"disruptionsAllowed":-1}})"), nullptr)),
      ElementsAre("status.disruptionsAllowed: Invalid value: -1: must be greater than or "
                  "equal to 0"));
}

TEST(PodDisruptionBudgetKind, Columns) {
  EXPECT_THAT(ColumnNames(Budgets()), ElementsAre("Name", "Min Available", "Max Unavailable",
                                                  "Allowed Disruptions", "Age"));
  json::object pdb = Obj(R"({"metadata":{"name":"web","creationTimestamp":"2026-01-01T00:00:00Z"},
    "spec":{"minAvailable":2},"status":{"disruptionsAllowed":1}})");
  TimePoint now;
  ASSERT_TRUE(ParseRfc3339("2026-01-01T00:10:00Z", &now));
  EXPECT_THAT(Row(Budgets(), pdb, now), ElementsAre("\"web\"", "\"2\"", "\"N/A\"", "1", "\"10m\""));
  json::object percent = Obj(R"({"metadata":{"name":"db"},"spec":{"maxUnavailable":"10%"}})");
  EXPECT_THAT(Row(Budgets(), percent, now),
              ElementsAre("\"db\"", "\"N/A\"", "\"10%\"", "0", "\"<unknown>\""));
}

}  // namespace
}  // namespace flotilla::api::kinds
