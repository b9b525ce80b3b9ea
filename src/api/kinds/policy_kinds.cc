// policy.karmada.io/v1alpha1: PropagationPolicy, ClusterPropagationPolicy,
// OverridePolicy, ClusterOverridePolicy and FederatedResourceQuota, served
// as Karmada's CRDs serve them (names, short names, category, printer
// columns), with their rules in api/policy/policy.h; and
// config.karmada.io/v1alpha1 ResourceInterpreterCustomization, whose
// scripts the program that runs the interpreter validates
// (interpreter/interpreter.h, added with Registry::AddValidation).
#include "api/kinds/resources.h"
#include "api/kinds/util.h"
#include "api/policy/policy.h"

namespace flotilla::api::kinds {
namespace {

Resource PolicyResource(std::string kind, std::string plural, bool namespaced,
                        std::string short_name) {
  Resource r = MakeResource(policy::kGroup, policy::kVersion, kind, std::move(plural), namespaced,
                            "io.karmada.policy.v1alpha1." + kind);
  r.short_names = {std::move(short_name)};
  r.categories = {"karmada-io"};
  return r;
}

// A printer column of type string over a JSONPath, printed as kube-apiserver
// prints a custom resource's: strings as they are, numbers in decimal,
// objects and lists as JSON, nothing when absent.
Cell JsonPathCell(std::string path) {
  return [path = std::move(path)](const json::object& obj, TimePoint) -> json::value {
    const json::value* v = Find(obj, path);
    if (v == nullptr || v->is_null()) return json::value(nullptr);
    if (v->is_string()) return *v;
    return json::string(json::serialize(*v));
  };
}

std::vector<TableColumn> PropagationColumns() {
  return {NameColumn(),
          Column("CONFLICT-RESOLUTION", "string", "", 0, JsonPathCell("spec.conflictResolution")),
          Column("PRIORITY", "string", "", 0, JsonPathCell("spec.priority")), AgeColumn()};
}

Resource PropagationResource(std::string kind, std::string plural, bool namespaced,
                             std::string short_name) {
  Resource r =
      PolicyResource(std::move(kind), std::move(plural), namespaced, std::move(short_name));
  r.default_fn = [namespaced](json::object& obj) { policy::DefaultPropagation(obj, namespaced); };
  r.validate_fn = [namespaced](const json::object& obj, const json::object*) {
    return policy::ValidatePropagation(obj, namespaced);
  };
  r.warn_fn = policy::PropagationWarnings;
  r.has_status = true;  // status.placedObjects (federation/common/policy_status.h)
  r.columns = PropagationColumns();
  return r;
}

Resource OverrideResource(std::string kind, std::string plural, bool namespaced,
                          std::string short_name) {
  Resource r =
      PolicyResource(std::move(kind), std::move(plural), namespaced, std::move(short_name));
  r.validate_fn = [namespaced](const json::object& obj, const json::object*) {
    return policy::ValidateOverride(obj, namespaced);
  };
  r.warn_fn = policy::OverrideWarnings;
  r.has_status = true;  // status.failures (federation/common/policy_status.h)
  r.columns = {NameColumn(), AgeColumn()};
  return r;
}

}  // namespace

std::vector<Resource> PolicyResources() {
  std::vector<Resource> out;
  out.push_back(PropagationResource("PropagationPolicy", "propagationpolicies", true, "pp"));
  out.push_back(
      PropagationResource("ClusterPropagationPolicy", "clusterpropagationpolicies", false, "cpp"));
  out.push_back(OverrideResource("OverridePolicy", "overridepolicies", true, "op"));
  out.push_back(OverrideResource("ClusterOverridePolicy", "clusteroverridepolicies", false, "cop"));
  Resource frq = PolicyResource("FederatedResourceQuota", "federatedresourcequotas", true, "frq");
  frq.has_status = true;
  frq.validate_fn = [](const json::object& obj, const json::object*) {
    return policy::ValidateFederatedResourceQuota(obj);
  };
  frq.warn_fn = policy::FederatedResourceQuotaWarnings;
  frq.columns = {NameColumn(), Column("OVERALL", "string", "", 0, JsonPathCell("status.overall")),
                 Column("OVERALL_USED", "string", "", 0, JsonPathCell("status.overallUsed")),
                 AgeColumn()};
  out.push_back(std::move(frq));
  Resource ric = MakeResource("config.karmada.io", "v1alpha1", "ResourceInterpreterCustomization",
                              "resourceinterpretercustomizations", false,
                              "io.karmada.config.v1alpha1.ResourceInterpreterCustomization");
  ric.short_names = {"ric"};
  ric.categories = {"karmada-io"};
  ric.columns = {
      NameColumn(),
      Column("TARGET-API-VERSION", "string", "", 0, JsonPathCell("spec.target.apiVersion")),
      Column("TARGET-KIND", "string", "", 0, JsonPathCell("spec.target.kind")), AgeColumn()};
  out.push_back(std::move(ric));
  return out;
}

}  // namespace flotilla::api::kinds
