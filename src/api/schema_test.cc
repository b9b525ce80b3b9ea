#include "api/schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace flotilla::api {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr const char* kDeployment = "io.k8s.api.apps.v1.Deployment";

json::value Parse(std::string_view text) {
  auto v = ParseJson(text);
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return v.ok() ? *v : json::value();
}

CheckResult CheckBuiltin(std::string_view definition, std::string_view text) {
  CheckResult result;
  SchemaSet::Builtin().Check(definition, Parse(text), &result);
  return result;
}

std::vector<std::string> Messages(const CheckResult& r) {
  std::vector<std::string> out;
  for (const auto& c : r.type_errors) out.push_back(c.message);
  return out;
}

std::vector<std::string> Fields(const CheckResult& r) {
  std::vector<std::string> out;
  for (const auto& c : r.type_errors) out.push_back(c.field);
  return out;
}

TEST(SchemaSetTest, DeploymentReplicasIsDescribedInt32) {
  const json::object* spec = SchemaSet::Builtin().Definition("io.k8s.api.apps.v1.DeploymentSpec");
  ASSERT_NE(spec, nullptr);
  const json::value* replicas = Find(*spec, "properties.replicas");
  ASSERT_NE(replicas, nullptr);
  EXPECT_EQ(GetString(replicas->as_object(), "type"), "integer");
  EXPECT_EQ(GetString(replicas->as_object(), "format"), "int32");
  EXPECT_THAT(std::string(*GetString(replicas->as_object(), "description")),
              ::testing::HasSubstr("Number of desired pods"));
  EXPECT_EQ(*Find(*spec, "required"), Parse(R"(["selector","template"])"));
}

TEST(SchemaSetTest, KindsCarryGroupVersionKind) {
  const SchemaSet& set = SchemaSet::Builtin();
  const json::object* d = set.Definition(kDeployment);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(*d->if_contains("x-kubernetes-group-version-kind"),
            Parse(R"([{"group":"apps","kind":"Deployment","version":"v1"}])"));
  struct Case {
    const char *group, *version, *kind, *name;
  };
  for (const Case& c : {
           Case{"", "v1", "Namespace", "io.k8s.api.core.v1.Namespace"},
           Case{"", "v1", "Event", "io.k8s.api.core.v1.Event"},
           Case{"apps", "v1", "DeploymentList", "io.k8s.api.apps.v1.DeploymentList"},
           Case{"autoscaling", "v2", "HorizontalPodAutoscaler",
                "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler"},
           Case{"autoscaling", "v1", "HorizontalPodAutoscaler",
                "io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler"},
           Case{"autoscaling", "v1", "Scale", "io.k8s.api.autoscaling.v1.Scale"},
           Case{"coordination.k8s.io", "v1", "Lease", "io.k8s.api.coordination.v1.Lease"},
           Case{"discovery.k8s.io", "v1", "EndpointSlice", "io.k8s.api.discovery.v1.EndpointSlice"},
           Case{"federation", "v1beta1", "Cluster", "io.flotilla.federation.v1beta1.Cluster"},
           Case{"", "v1", "Status", "io.k8s.apimachinery.pkg.apis.meta.v1.Status"},
           Case{"apps", "v1", "DeleteOptions",
                "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"},
       }) {
    const std::string* name = set.DefinitionFor(c.group, c.version, c.kind);
    ASSERT_NE(name, nullptr) << c.kind;
    EXPECT_EQ(*name, c.name);
  }
  EXPECT_EQ(set.DefinitionFor("apps", "v1", "Nothing"), nullptr);
}

TEST(SchemaSetTest, EveryReferenceResolves) {
  const SchemaSet& set = SchemaSet::Builtin();
  std::vector<const json::value*> stack;
  for (const auto& [name, def] : set.Definitions()) stack.push_back(&def);
  int refs = 0;
  while (!stack.empty()) {
    const json::value* v = stack.back();
    stack.pop_back();
    if (v->is_array()) {
      for (const auto& e : v->get_array()) stack.push_back(&e);
    } else if (v->is_object()) {
      if (GetString(v->get_object(), "$ref")) {
        ++refs;
        EXPECT_NE(ResolveSchema(set.Definitions(), v->get_object()), nullptr);
      }
      for (const auto& [k, e] : v->get_object()) stack.push_back(&e);
    }
  }
  EXPECT_GT(refs, 300);
}

TEST(SchemaCheckTest, ValidDeploymentHasNoFindings) {
  CheckResult r = CheckBuiltin(kDeployment, R"({
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "labels": {"app": "web"}, "creationTimestamp": null,
                 "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]},
    "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
             "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "web", "image": "nginx",
                                                   "ports": [{"containerPort": 80}],
                                                   "resources": {"limits": {"cpu": "100m",
                                                                            "memory": 1024}}}],
                                   "terminationGracePeriodSeconds": 4294967296}}}})");
  EXPECT_THAT(r.type_errors, IsEmpty());
  EXPECT_THAT(r.unknown_fields, IsEmpty());
}

TEST(SchemaCheckTest, WrongTypesUseTheGoDecoderWording) {
  CheckResult r = CheckBuiltin(kDeployment, R"({
    "metadata": {"labels": {"app": 1}, "creationTimestamp": 5},
    "spec": {"replicas": "3", "paused": "yes",
             "template": {"spec": {"containers": [{"name": "a", "env": [{"name": "X", "value": true}]}]}}}})");
  EXPECT_THAT(
      Messages(r),
      ElementsAre(
          "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type "
          "string",
          "json: cannot unmarshal number into Go struct field "
          "ObjectMeta.metadata.creationTimestamp of type string",
          "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of "
          "type int32",
          "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type "
          "bool",
          "json: cannot unmarshal bool into Go struct field "
          "EnvVar.spec.template.spec.containers.env.value of type string"));
  EXPECT_THAT(Fields(r),
              ElementsAre("metadata.labels.app", "metadata.creationTimestamp", "spec.replicas",
                          "spec.paused", "spec.template.spec.containers[0].env[0].value"));
  EXPECT_EQ(r.type_errors[0].type, "FieldValueTypeInvalid");
}

TEST(SchemaCheckTest, WrongContainerShapesNameGoTypes) {
  CheckResult r = CheckBuiltin(kDeployment, R"({
    "metadata": "web",
    "spec": {"template": {"spec": {"containers": {"name": "a"}, "nodeSelector": []}}}})");
  EXPECT_THAT(Messages(r),
              ElementsAre("json: cannot unmarshal string into Go struct field Deployment.metadata "
                          "of type v1.ObjectMeta",
                          "json: cannot unmarshal object into Go struct field "
                          "PodSpec.spec.template.spec.containers of type []v1.Container",
                          "json: cannot unmarshal array into Go struct field "
                          "PodSpec.spec.template.spec.nodeSelector of type map[string]string"));
  r = CheckBuiltin(kDeployment, "[]");
  EXPECT_THAT(Messages(r),
              ElementsAre("json: cannot unmarshal array into Go value of type v1.Deployment"));
}

// An object is checked in place (the API server's path) with the findings
// a value gets, and a set that was moved (as Builtin's is) still knows its
// schemas: the nodes found when it was built point into its definitions.
TEST(SchemaCheckTest, AnObjectInPlaceAndAMovedSetFindTheSame) {
  const char* text = R"({"metadata": "web", "spec": {"replicas": "3", "selector": {"x": 1},
    "template": {"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "1e"}}}]}}},
    "statuss": {}})";
  CheckResult as_value = CheckBuiltin(kDeployment, text);
  CheckResult in_place;
  SchemaSet::Builtin().Check(kDeployment, Parse(text).as_object(), &in_place);
  EXPECT_THAT(Messages(in_place), ::testing::ContainerEq(Messages(as_value)));
  EXPECT_THAT(Fields(in_place), ::testing::ContainerEq(Fields(as_value)));
  EXPECT_THAT(in_place.unknown_fields, ElementsAre("spec.selector.x", "statuss"));
  EXPECT_THAT(Messages(in_place),
              ElementsAre("json: cannot unmarshal string into Go struct field Deployment.metadata "
                          "of type v1.ObjectMeta",
                          "json: cannot unmarshal string into Go struct field "
                          "DeploymentSpec.spec.replicas of type int32",
                          "unable to parse quantity's suffix"));

  auto set = SchemaSet::FromJson(json::serialize(SchemaSet::Builtin().Definitions()));
  ASSERT_TRUE(set.ok());
  SchemaSet moved = std::move(*set);
  CheckResult again;
  moved.Check(kDeployment, Parse(text).as_object(), &again);
  EXPECT_THAT(Messages(again), ::testing::ContainerEq(Messages(in_place)));
  EXPECT_THAT(again.unknown_fields, ::testing::ContainerEq(in_place.unknown_fields));

  // What the walk reads of a field's schema, its $ref followed.
  const json::object* spec = moved.Definition("io.k8s.api.apps.v1.DeploymentSpec");
  ASSERT_NE(spec, nullptr);
  const json::object& props = spec->at("properties").as_object();
  SchemaNode replicas = moved.Node(props.at("replicas").as_object());
  EXPECT_EQ(replicas.type, SchemaNode::Type::kInteger);
  EXPECT_FALSE(replicas.format_int64);
  SchemaNode selector = moved.Node(props.at("selector").as_object());
  EXPECT_EQ(selector.ref, "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector");
  EXPECT_EQ(selector.type, SchemaNode::Type::kObject);
  EXPECT_NE(selector.properties, nullptr);
  const json::object& container = *moved.Definition("io.k8s.api.core.v1.ResourceRequirements");
  SchemaNode limits = moved.Node(container.at("properties").at("limits").as_object());
  ASSERT_NE(limits.additional_properties, nullptr);
  EXPECT_TRUE(moved.Node(*limits.additional_properties).decodes_itself);  // a Quantity
  // A schema outside the set is described all the same.
  json::object unresolved{{"$ref", "#/definitions/no.such.Thing"}};
  EXPECT_EQ(moved.Node(unresolved).resolved, nullptr);
}

TEST(SchemaCheckTest, NumbersOutOfRangeOrFractional) {
  CheckResult r = CheckBuiltin(kDeployment, R"({"spec": {"replicas": 3000000000,
      "minReadySeconds": 1.5, "revisionHistoryLimit": 2.0,
      "template": {"spec": {"activeDeadlineSeconds": 3000000000}}}})");
  EXPECT_THAT(Messages(r),
              ElementsAre("json: cannot unmarshal number 3000000000 into Go struct field "
                          "DeploymentSpec.spec.replicas of type int32",
                          "json: cannot unmarshal number 1.5 into Go struct field "
                          "DeploymentSpec.spec.minReadySeconds of type int32",
                          "json: cannot unmarshal number 2.0 into Go struct field "
                          "DeploymentSpec.spec.revisionHistoryLimit of type int32"));
}

TEST(SchemaCheckTest, SelfDecodingTypes) {
  CheckResult r = CheckBuiltin(kDeployment, R"({"spec": {
      "strategy": {"rollingUpdate": {"maxSurge": true, "maxUnavailable": 1.5}},
      "template": {"spec": {"containers": [{"name": "a", "resources": {
          "limits": {"cpu": "abc", "memory": "1Gi", "x": "2e3", "y": "1Kb", "z": "3e"}}}]}}}})");
  EXPECT_THAT(Messages(r),
              ElementsAre("json: cannot unmarshal bool into Go struct field "
                          "RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type "
                          "int32",
                          "json: cannot unmarshal number 1.5 into Go struct field "
                          "RollingUpdateDeployment.spec.strategy.rollingUpdate.maxUnavailable of "
                          "type int32",
                          "quantities must match the regular expression "
                          "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
                          "quantities must match the regular expression "
                          "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
                          "unable to parse quantity's suffix"));
  EXPECT_EQ(r.type_errors[2].field, "spec.template.spec.containers[0].resources.limits.cpu");
}

TEST(SchemaCheckTest, SecretDataMustBeBase64) {
  const char* kSecret = "io.k8s.api.core.v1.Secret";
  EXPECT_THAT(CheckBuiltin(kSecret, R"({"data": {"a": "aGVsbG8=", "b": "aGVs\nbG8=", "c": ""},
                                       "stringData": {"d": "not base64!"}})")
                  .type_errors,
              IsEmpty());
  struct Case {
    const char* value;
    int offset;
  };
  for (const Case& c : {Case{"abc", 0}, Case{"aGVsbG8", 4}, Case{"ab!d", 2}, Case{"a===", 1},
                        Case{"aGVsbA=", 7}, Case{"aGVsbA=x", 6}, Case{"aGVsbG8=aGVs", 8}}) {
    CheckResult r = CheckBuiltin(kSecret, std::string(R"({"data": {"k": ")") + c.value + "\"}}");
    EXPECT_THAT(Messages(r),
                ElementsAre("illegal base64 data at input byte " + std::to_string(c.offset)))
        << c.value;
  }
  EXPECT_THAT(Messages(CheckBuiltin(kSecret, R"({"data": {"k": 1}})")),
              ElementsAre("json: cannot unmarshal number into Go struct field Secret.data of type "
                          "[]uint8"));
}

TEST(SchemaCheckTest, UnknownFieldsAreNamedLikeTheStrictDecoder) {
  CheckResult r = CheckBuiltin(kDeployment, R"({
    "metadata": {"name": "web", "labelz": {}},
    "spec": {"replicass": 2, "Replicas": 3,
             "template": {"spec": {"containers": [{"name": "a"}, {"name": "b", "imagee": "x",
                                                                  "ports": [{"port": 1}]}]}}},
    "extra": {"nested": 1}})");
  EXPECT_THAT(r.unknown_fields,
              ElementsAre("metadata.labelz", "spec.replicass", "spec.Replicas",
                          "spec.template.spec.containers[1].imagee",
                          "spec.template.spec.containers[1].ports[0].port", "extra"));
  EXPECT_THAT(r.type_errors, IsEmpty());
  EXPECT_THAT(UnknownFieldWarnings(r).front(), "unknown field \"metadata.labelz\"");
}

TEST(SchemaCheckTest, FreeFormFieldsAcceptAnything) {
  auto set = SchemaSet::FromJson(R"({
    "T": {"type": "object", "properties": {
      "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
               "properties": {"n": {"type": "integer"}}},
      "raw": {"$ref": "#/definitions/Raw"},
      "count": {"type": "integer", "format": "int64"}}},
    "Raw": {"type": "object"}})");
  ASSERT_TRUE(set.ok());
  CheckResult r;
  set->Check("T", Parse(R"({"free": {"n": 1, "x": {"y": [1]}}, "raw": [true, {"z": 1}],
                            "count": 9007199254740993})"),
             &r);
  EXPECT_THAT(r.unknown_fields, IsEmpty());
  EXPECT_THAT(r.type_errors, IsEmpty());
  set->Check("T", Parse(R"({"free": {"n": "1"}, "count": null, "other": 1})"), &r);
  EXPECT_THAT(Messages(r), ElementsAre("json: cannot unmarshal string into Go struct field "
                                       "T.free.n of type int32"));
  EXPECT_THAT(r.unknown_fields, ElementsAre("other"));
  CheckResult none;
  set->Check("Missing", Parse("{}"), &none);
  EXPECT_THAT(none.unknown_fields, IsEmpty());
}

TEST(SchemaCheckTest, AnObjectIsCheckedAsTheSameValueWouldBe) {
  const json::value body = Parse(R"({"apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "labelz": {}}, "spec": {"replicas": "3", "paused": 1,
    "template": {"spec": {"containers": [{"name": "c", "image": "i",
                                          "ports": [{"containerPort": "80"}]}]}}},
    "extra": true})");
  for (std::string_view definition :
       {"io.k8s.api.apps.v1.Deployment", "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString", "no.such.Definition"}) {
    CheckResult as_value, as_object;
    SchemaSet::Builtin().Check(definition, body, &as_value);
    SchemaSet::Builtin().Check(definition, body.get_object(), &as_object);
    EXPECT_EQ(Messages(as_object), Messages(as_value)) << definition;
    EXPECT_EQ(as_object.unknown_fields, as_value.unknown_fields) << definition;
  }
  CheckResult r;
  SchemaSet::Builtin().Check("io.k8s.api.apps.v1.Deployment", body.get_object(), &r);
  EXPECT_THAT(r.unknown_fields, ElementsAre("metadata.labelz", "extra"));
  EXPECT_EQ(r.type_errors.size(), 3u);
}

TEST(SchemaCheckTest, ClusterSchema) {
  CheckResult r = CheckBuiltin("io.flotilla.federation.v1beta1.Cluster", R"({
    "apiVersion": "federation/v1beta1", "kind": "Cluster", "metadata": {"name": "c1"},
    "spec": {"serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "x",
                                             "port": 1}],
             "secretRef": {"name": "c1", "namespace": "flotilla-system"}},
    "status": {"conditions": [{"type": "Ready", "status": "True",
                               "lastProbeTime": "2024-01-01T00:00:00Z"}],
               "zones": ["a", 1], "region": "r", "kubernetesVersion": "v1.32.0"}})");
  EXPECT_THAT(r.unknown_fields, ElementsAre("spec.serverAddressByClientCIDRs[0].port"));
  EXPECT_THAT(Messages(r), ElementsAre("json: cannot unmarshal number into Go struct field "
                                       "ClusterStatus.status.zones of type string"));
}

TEST(SchemaPatchInfoTest, WellKnownFields) {
  PatchInfoLookup lookup = SchemaSet::Builtin().PatchInfo(kDeployment);
  auto info = [&](std::vector<std::string> path) {
    FieldPatchInfo i = lookup(path);
    return i.strategy + "/" + i.merge_key;
  };
  EXPECT_EQ(info({"spec", "template", "spec", "containers"}), "merge/name");
  EXPECT_EQ(info({"spec", "template", "spec", "containers", "ports"}), "merge/containerPort");
  EXPECT_EQ(info({"spec", "template", "spec", "containers", "env"}), "merge/name");
  EXPECT_EQ(info({"spec", "template", "spec", "containers", "volumeMounts"}), "merge/mountPath");
  EXPECT_EQ(info({"spec", "template", "spec", "volumes"}), "merge,retainKeys/name");
  EXPECT_EQ(info({"spec", "template", "spec", "tolerations"}), "/");
  EXPECT_EQ(info({"spec", "strategy"}), "retainKeys/");
  EXPECT_EQ(info({"status", "conditions"}), "merge/type");
  EXPECT_EQ(info({"metadata", "finalizers"}), "merge/");
  EXPECT_EQ(info({"metadata", "ownerReferences"}), "merge/uid");
  EXPECT_EQ(info({"metadata", "labels", "app"}), "/");
  EXPECT_EQ(info({"spec", "nothing", "here"}), "/");
  EXPECT_EQ(info({}), "/");
  EXPECT_EQ(
      SchemaSet::Builtin().PatchInfo("io.k8s.api.core.v1.Service")({"spec", "ports"}).merge_key,
      "port");
  EXPECT_EQ(SchemaSet::Builtin()
                .PatchInfo("io.flotilla.federation.v1beta1.Cluster")({"status", "conditions"})
                .merge_key,
            "type");
}

TEST(DecodeErrorTest, KubeApiserverWording) {
  CheckResult r;
  EXPECT_TRUE(DecodeError("Deployment", "v1", r, true).ok());
  r.unknown_fields = {"spec.replicass", "spec.x"};
  EXPECT_TRUE(DecodeError("Deployment", "v1", r, false).ok());
  Status s = DecodeError("Deployment", "v1", r, true);
  EXPECT_TRUE(s.Is(Reason::kBadRequest));
  EXPECT_EQ(s.message(),
            "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding "
            "error: unknown field \"spec.replicass\", unknown field \"spec.x\"");
  r.type_errors.push_back({"FieldValueTypeInvalid", "json: cannot unmarshal x", "spec.replicas"});
  EXPECT_EQ(DecodeError("Deployment", "v1", r, false).message(),
            "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot "
            "unmarshal x");
}

}  // namespace
}  // namespace flotilla::api
