// Validation of apps/v1 workloads: each case patches a valid object (and,
// for updates, the stored one) and lists the causes kube-apiserver reports.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/kinds/test_util.h"

namespace flotilla::api::kinds {
namespace {

using ::testing::ElementsAreArray;

const char kDeployment[] = R"({"metadata":{"name":"web","namespace":"default"},"spec":{
    "selector":{"matchLabels":{"app":"web"}},
    "template":{"metadata":{"labels":{"app":"web"}},
                "spec":{"containers":[{"name":"nginx","image":"nginx"}]}}}})";
const char kStatefulSet[] = R"({"metadata":{"name":"db","namespace":"default"},"spec":{
    "serviceName":"db","selector":{"matchLabels":{"app":"db"}},
    "template":{"metadata":{"labels":{"app":"db"}},
                "spec":{"containers":[{"name":"pg","image":"postgres"}]}}}})";
const std::string kLabelRegex =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const std::string kMismatch =
    R"(spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: )"
    "`selector` does not match template `labels`";

class WorkloadValidation : public ::testing::TestWithParam<ValidationCase> {};

TEST_P(WorkloadValidation, Causes) {
  const ValidationCase& c = GetParam();
  EXPECT_THAT(Validate(c), ElementsAreArray(c.want)) << c.name;
}

const ValidationCase kWorkloadCases[] = {
    // ---- Deployment ----
    {"deployment valid", "apps", "v1", "deployments", kDeployment, "{}", "", {}},
    {"negative replicas",
     "apps",
     "v1",
     "deployments",
     kDeployment,
     R"({"spec":{"replicas":-1}})",
     "",
     {"spec.replicas: Invalid value: -1: must be greater than or equal to 0"}},
    {"missing selector",
     "apps",
     "v1",
     "deployments",
     kDeployment,
     R"({"spec":{"selector":null}})",
     "",
     {"spec.selector: Required value", kMismatch}},
    {"empty selector",
     "apps",
     "v1",
     "deployments",
     kDeployment,
     R"({"spec":{"selector":{"matchLabels":null}}})",
     "",
     {"spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
      "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for "
      "deployment"}},
    {"selector does not match",
     "apps",
     "v1",
     "deployments",
     kDeployment,
     R"({"spec":{"selector":{"matchLabels":{"app":"api"}}}})",
     "",
     {kMismatch}},
    {"invalid selector operator",
     "apps",
     "v1",
     "deployments",
     kDeployment,
     R"({"spec":{"selector":{"matchExpressions":[{"key":"app","operator":"Near"}]}}})",
     "",
     {R"(spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator)",
      "spec.selector: Invalid value: "
      "v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web\"}, "
      "MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:\"app\", "
      "Operator:\"Near\", Values:[]string(nil)}}}: invalid label selector"}},
    {"no containers",
     "apps",
     "v1",
     "deployments",
     kDeployment,
     R"({"spec":{"template":{"spec":{"containers":null}}}})",
     "",
     {"spec.template.spec.containers: Required value"}},
    {"container name and image",
     "apps",
     "v1",
     "deployments",
     kDeployment,
     R"({"spec":{"template":{"spec":{"containers":[{"name":"Web_1"}]}}}})",
     "",
     {R"(spec.template.spec.containers[0].name: Invalid value: "Web_1": )" + kLabelRegex,
      "spec.template.spec.containers[0].image: Required value"}},
    {"duplicate container names",
     "apps",
     "v1",
     "deployments",
     kDeployment,
     R"({"spec":{"template":{"spec":{"containers":[{"name":"a","image":"x"},{"name":"a","image":"y"}]}}}})",
     "",
     {R"(spec.template.spec.containers[1].name: Duplicate value: "a")"}},
    {"container ports",
     "apps",
     "v1",
     "deployments",
     kDeployment,
     R"({"spec":{"template":{"spec":{"containers":[{"name":"a","image":"x","ports":[
        {"name":"http","containerPort":70000,"protocol":"HTTP"},{"name":"http","containerPort":81}]}]}}}})",
     "",
     {"spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be "
      "between 1 and 65535, inclusive",
      R"(spec.template.spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP")",
      R"(spec.template.spec.containers[0].ports[1].name: Duplicate value: "http")"}},
    {"volume mount without a volume",
     "apps",
     "v1",
     "deployments",
     kDeployment,
     R"({"spec":{"template":{"spec":{"containers":[{"name":"a","image":"x",
        "volumeMounts":[{"name":"data","mountPath":"/data"}]}]}}}})",
     "",
     {R"(spec.template.spec.containers[0].volumeMounts[0].name: Not found: "data")"}},
    {"restart policy",
     "apps",
     "v1",
     "deployments",
     kDeployment,
     R"({"spec":{"template":{"spec":{"restartPolicy":"Never"}}}})",
     "",
     {R"(spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always")"}},
    {"invalid template label",
     "apps",
     "v1",
     "deployments",
     kDeployment,
     R"({"spec":{"template":{"metadata":{"labels":{"app":"web","tier":"front end"}}}}})",
     "",
     {R"(spec.template.labels: Invalid value: "front end": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'))"}},
    {"rolling update of nothing",
     "apps",
     "v1",
     "deployments",
     kDeployment,
     R"({"spec":{"strategy":{"rollingUpdate":{"maxUnavailable":0,"maxSurge":"0%"}}}})",
     "",
     {"spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, "
      "IntVal:0, StrVal:\"\"}: may not be 0 when `maxSurge` is 0"}},
    {"progress deadline",
     "apps",
     "v1",
     "deployments",
     kDeployment,
     R"({"spec":{"minReadySeconds":10,"progressDeadlineSeconds":5}})",
     "",
     {"spec.progressDeadlineSeconds: Invalid value: 5: must be greater than minReadySeconds"}},
    {"deployment selector is immutable",
     "apps",
     "v1",
     "deployments",
     kDeployment,
     R"({"spec":{"selector":{"matchLabels":{"tier":"front"}},"template":{"metadata":{"labels":{"tier":"front"}}}}})",
     "{}",
     {"spec.selector: Invalid value: "
      "v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web\", "
      "\"tier\":\"front\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is "
      "immutable"}},
    {"deployment scale is an ordinary update",
     "apps",
     "v1",
     "deployments",
     kDeployment,
     R"({"spec":{"replicas":7}})",
     "{}",
     {}},
    // ---- ReplicaSet ----
    {"replicaset empty selector says deployment, as Kubernetes does",
     "apps",
     "v1",
     "replicasets",
     kDeployment,
     R"({"spec":{"selector":{"matchLabels":null}}})",
     "",
     {"spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
      "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for "
      "deployment"}},
    {"replicaset selector is immutable",
     "apps",
     "v1",
     "replicasets",
     kDeployment,
     "{}",
     R"({"spec":{"selector":{"matchLabels":{"tier":"x"}}}})",
     {"spec.selector: Invalid value: "
      "v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web\"}, "
      "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"}},
    // ---- StatefulSet ----
    {"statefulset valid", "apps", "v1", "statefulsets", kStatefulSet, "{}", "", {}},
    {"statefulset pod spec is not validated, as in Kubernetes",
     "apps",
     "v1",
     "statefulsets",
     kStatefulSet,
     R"({"spec":{"template":{"spec":{"containers":null}}}})",
     "",
     {}},
    {"statefulset policies",
     "apps",
     "v1",
     "statefulsets",
     kStatefulSet,
     R"({"spec":{"podManagementPolicy":"Random","updateStrategy":{"rollingUpdate":{"partition":-1}},
        "persistentVolumeClaimRetentionPolicy":{"whenScaled":"Keep"}}})",
     "",
     {R"(spec.podManagementPolicy: Invalid value: "Random": must be 'OrderedReady' or 'Parallel')",
      "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or "
      "equal to 0",
      R"(spec.persistentVolumeClaimRetentionPolicy.whenScaled: Unsupported value: "Keep": supported values: "Retain", "Delete")"}},
    {"statefulset empty selector",
     "apps",
     "v1",
     "statefulsets",
     kStatefulSet,
     R"({"spec":{"selector":{"matchLabels":null}}})",
     "",
     {"spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
      "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for "
      "statefulset"}},
    {"statefulset replicas, template and strategy may change",
     "apps",
     "v1",
     "statefulsets",
     kStatefulSet,
     R"({"spec":{"replicas":5,"updateStrategy":{"type":"OnDelete","rollingUpdate":null},
        "template":{"spec":{"containers":[{"name":"pg","image":"postgres:16"}]}}}})",
     "{}",
     {}},
    {"statefulset other fields may not",
     "apps",
     "v1",
     "statefulsets",
     kStatefulSet,
     R"({"spec":{"serviceName":"db2"}})",
     "{}",
     {"spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', "
      "'template', 'updateStrategy', 'revisionHistoryLimit', "
      "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"}},
};

INSTANTIATE_TEST_SUITE_P(Apps, WorkloadValidation, ::testing::ValuesIn(kWorkloadCases),
                         [](const ::testing::TestParamInfo<ValidationCase>& info) {
                           return CaseName(info.param.name);
                         });

TEST(WorkloadValidation, CausesCarryKubernetesTypes) {
  json::object obj = Obj(kDeployment);
  MergePatch(obj, Obj(R"({"spec":{"replicas":-1,"selector":null}})"));
  const Resource& r = Res("apps", "v1", "deployments");
  r.default_fn(obj);
  std::vector<StatusCause> causes = r.validate_fn(obj, nullptr);
  ASSERT_GE(causes.size(), 2u);
  EXPECT_EQ(causes[0].type, "FieldValueInvalid");
  EXPECT_EQ(causes[0].field, "spec.replicas");
  EXPECT_EQ(causes[1].type, "FieldValueRequired");
  EXPECT_EQ(causes[1].field, "spec.selector");
}

}  // namespace
}  // namespace flotilla::api::kinds
