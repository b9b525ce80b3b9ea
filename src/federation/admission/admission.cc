#include "federation/admission/admission.h"

#include <string>

#include "api/annotations.h"
#include "api/federated.h"
#include "api/validation.h"
#include "api/views.h"
#include "federation/applications/applications.h"
#include "federation/common/cluster_selector.h"
#include "federation/common/deletion.h"
#include "federation/common/names.h"
#include "interpreter/interpreter.h"
#include "planner/preferences.h"

namespace flotilla::federation {
namespace {

// The annotation `key` of `obj` when it is set and differs from `old`'s.
const json::value* ChangedAnnotation(const json::object& obj, const json::object* old,
                                     std::string_view key) {
  const json::value* value = api::FindAnnotation(obj, key);
  if (value == nullptr || old == nullptr) return value;
  const json::value* old_value = api::FindAnnotation(*old, key);
  return old_value != nullptr && *old_value == *value ? nullptr : value;
}

std::string AnnotationField(std::string_view key) {
  return "metadata.annotations[" + std::string(key) + "]";
}

}  // namespace

std::vector<StatusCause> ValidateClusterSelectorAnnotation(const json::object& obj,
                                                           const json::object* old) {
  const json::value* value = ChangedAnnotation(obj, old, api::kClusterSelectorAnnotation);
  if (value == nullptr || !value->is_string()) return {};  // ObjectMeta checks the type
  StatusOr<ClusterSelector> selector = ClusterSelector::Parse(value->get_string());
  return selector.ok() ? std::vector<StatusCause>{} : selector.status().causes();
}

std::vector<StatusCause> ValidatePreferencesAnnotation(const json::object& obj,
                                                       const json::object* old,
                                                       std::string_view key) {
  const json::value* value = ChangedAnnotation(obj, old, key);
  if (value == nullptr || !value->is_string()) return {};
  const std::string field = AnnotationField(key);
  StatusOr<json::value> doc = ParseJson(value->get_string());
  if (!doc.ok()) {
    return {api::FieldInvalid(field, *value,
                              "must be a JSON preferences document: " + doc.status().message())};
  }
  StatusOr<planner::Preferences> prefs = planner::PreferencesFromJson(*doc, field);
  return prefs.ok() ? std::vector<StatusCause>{} : prefs.status().causes();
}

std::vector<StatusCause> ValidateUpdateOrderAnnotation(const json::object& obj,
                                                       const json::object* old) {
  const json::value* value = ChangedAnnotation(obj, old, api::kClusterUpdateOrderAnnotation);
  if (value == nullptr || !value->is_string()) return {};
  const std::string field = AnnotationField(api::kClusterUpdateOrderAnnotation);
  std::string_view list = value->get_string();
  std::vector<StatusCause> causes;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = std::min(list.find(',', start), list.size());
    std::string_view name = list.substr(start, comma - start);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    std::vector<std::string> problems = api::IsDNS1123Subdomain(name);
    if (!problems.empty()) {
      causes.push_back(api::FieldInvalid(field, *value,
                                         "must be a comma-separated list of cluster names: \"" +
                                             std::string(name) + "\" " + problems[0]));
    }
    start = comma + 1;
  }
  return causes;
}

std::vector<StatusCause> ValidatePlacementClusterAnnotation(const json::object& obj,
                                                            const json::object* old) {
  const json::value* value = ChangedAnnotation(obj, old, api::kPlacementClusterAnnotation);
  if (value == nullptr || !value->is_string()) return {};
  std::vector<std::string> problems = api::IsDNS1123Subdomain(value->get_string());
  if (problems.empty()) return {};
  return {api::FieldInvalid(AnnotationField(api::kPlacementClusterAnnotation), *value,
                            "must be a cluster name: " + problems[0])};
}

std::vector<StatusCause> ValidateApplicationAnnotations(const json::object& obj,
                                                        const json::object* old) {
  std::vector<StatusCause> causes;
  auto check = [&](std::string_view key,
                   const std::function<std::vector<std::string>(const std::string&)>& problems) {
    const json::value* value = api::FindAnnotation(obj, key);
    if (value == nullptr || !value->is_string()) return;
    std::string text(value->get_string());
    if (old != nullptr && api::AnnotationAt(*old, key) == text) return;
    for (const std::string& p : problems(text)) {
      causes.push_back(api::FieldInvalid(AnnotationField(key), *value, p));
    }
  };
  check(api::kMigrationWindowAnnotation, [](const std::string& text) {
    auto window = ParseMigrationWindow(text);
    return window.ok() ? std::vector<std::string>{}
                       : std::vector<std::string>{window.status().message()};
  });
  check(api::kAntiAffinityAnnotation, [&](const std::string& text) {
    std::vector<std::string> out = text.empty()
                                       ? std::vector<std::string>{"must name an application"}
                                       : api::IsValidLabelValue(text);
    if (!text.empty() && text == api::LabelAt(obj, api::kApplicationLabel)) {
      out.push_back("an application cannot avoid itself");
    }
    return out;
  });
  check(api::kMigrateToAnnotation,
        [](const std::string& text) { return api::IsDNS1123Subdomain(text); });
  return causes;
}

std::vector<StatusCause> ValidateApplicationClass(
    const json::object& obj, const json::object* old, std::string_view kind,
    const std::function<std::vector<json::object>(const std::string& app)>& others) {
  const std::string app = api::LabelAt(obj, api::kApplicationLabel);
  const json::value* value = api::FindAnnotation(obj, api::kLocationAffinityAnnotation);
  if (old != nullptr && app == api::LabelAt(*old, api::kApplicationLabel) &&
      api::AnnotationAt(obj, api::kLocationAffinityAnnotation) ==
          api::AnnotationAt(*old, api::kLocationAffinityAnnotation)) {
    return {};  // neither the application nor the class changed
  }
  const std::string field = AnnotationField(api::kLocationAffinityAnnotation);
  auto class_of = [](const json::object& o) {
    const json::value* v = api::FindAnnotation(o, api::kLocationAffinityAnnotation);
    return v != nullptr && v->is_string() ? std::string(v->get_string())
                                          : std::string(api::kStrictlyDecoupled);
  };
  std::string mine = class_of(obj);
  if (value != nullptr && value->is_string() && mine != api::kStrictlyDecoupled &&
      mine != api::kPreferentiallyCoupled && mine != api::kStrictlyCoupled) {
    return {api::FieldNotSupported(
        field, *value,
        {api::kStrictlyDecoupled, api::kPreferentiallyCoupled, api::kStrictlyCoupled})};
  }
  if (app.empty()) return {};
  const std::string name(api::ObjectView(obj).name());
  for (const json::object& other : others(app)) {
    api::ObjectView o(other);
    if (o.kind() == kind && o.name() == name) continue;
    if (o.label(api::kApplicationLabel) != app || !o.label(api::kShadowOfLabel).empty()) continue;
    std::string theirs = class_of(other);
    if (theirs == mine) continue;
    return {api::FieldInvalid(field, json::string(mine),
                              "must agree with the other workloads of application \"" + app +
                                  "\": " + std::string(o.kind()) + " \"" + std::string(o.name()) +
                                  "\" is " + theirs)};
  }
  return {};
}

std::vector<StatusCause> ValidateLocalNameLength(const json::object& obj, const json::object* old,
                                                 const std::vector<std::string>& clusters,
                                                 std::string_view kind, size_t max) {
  if (old != nullptr) return {};  // a cluster joined since is warned about, not refused
  std::string name(api::ObjectView(obj).name());
  for (const std::string& cluster : clusters) {
    std::string local = name + "-" + cluster;
    if (local.size() > max) {
      return {api::FieldInvalid(
          "metadata.name", json::value(name),
          "its local " + std::string(kind) + " in cluster \"" + cluster + "\" would be named \"" +
              local + "\", " + std::to_string(local.size()) + " characters; a " +
              std::string(kind) + "'s name may have at most " + std::to_string(max))};
    }
  }
  return {};
}

void AddFederationAdmission(api::Registry& registry, const KindRegistry& kinds,
                            AdmissionSources sources) {
  std::shared_ptr<const ClusterNames> clusters = sources.clusters;
  std::shared_ptr<const ApplicationWorkloads> workloads = sources.workloads;
  std::shared_ptr<const FinalizedAtCreate> finalized = sources.finalized;
  // Every propagated kind: the placement annotations, and the finalizer.
  auto placement_rules = [finalized](api::Resource& r) {
    if (finalized != nullptr) {
      api::ChainCreateMutation(r,
                               [finalized, group = r.group, plural = r.plural](json::object& obj) {
                                 if (finalized->Get(group, plural, obj))
                                   AddFederationFinalizer(obj);
                               });
    }
    api::ChainValidation(r, [](const json::object& obj, const json::object* old) {
      std::vector<StatusCause> causes = ValidateClusterSelectorAnnotation(obj, old);
      for (StatusCause& c : ValidatePlacementClusterAnnotation(obj, old)) causes.push_back(c);
      return causes;
    });
  };
  for (const FederatedKind& kind : kinds.kinds()) {
    for (const client::ResourceRef& resource : kind.propagates) {
      registry.ForEachVersion(resource.group, resource.resource, placement_rules);
    }
    if (kind.propagates.empty()) continue;
    const client::ResourceRef& resource = kind.propagates.front();
    registry.AddValidation(
        resource.group, resource.resource,
        [rules = kind.admission, applications = kind.applications, name = kind.kind, clusters,
         workloads](const json::object& obj, const json::object* old) {
          std::vector<StatusCause> causes;
          auto add = [&causes](std::vector<StatusCause> more) {
            for (StatusCause& c : more) causes.push_back(std::move(c));
          };
          if (!rules.preferences_annotation.empty()) {
            add(ValidatePreferencesAnnotation(obj, old, rules.preferences_annotation));
          }
          if (rules.update_order) add(ValidateUpdateOrderAnnotation(obj, old));
          if (rules.max_local_name > 0 && clusters != nullptr) {
            add(ValidateLocalNameLength(obj, old, clusters->Get(), name, rules.max_local_name));
          }
          if (applications) {
            add(ValidateApplicationAnnotations(obj, old));
            if (workloads != nullptr) {
              std::string ns(api::ObjectView(obj).ns());
              add(ValidateApplicationClass(
                  obj, old, name, [&](const std::string& app) { return workloads->Get(ns, app); }));
            }
          }
          return causes;
        });
  }
  // Federated resource quotas cap the workloads of a namespace (a scale
  // too: it is a write of the object).
  if (std::shared_ptr<const QuotaAdmission> quotas = sources.quotas) {
    for (const auto& [resource, kind_name] :
         {std::pair{&kDeployments, "Deployment"}, std::pair{&kReplicaSets, "ReplicaSet"},
          std::pair{&kStatefulSets, "StatefulSet"}}) {
      std::string_view kind = kind_name;  // (a structured binding is not captured)
      registry.AddAdmission(resource->group, resource->resource,
                            [quotas, kind](const json::object& obj, const json::object*) {
                              if (StringViewAt(obj, "kind") == kind) return quotas->Get(obj);
                              json::object typed = obj;
                              typed["kind"] = kind;
                              return quotas->Get(typed);
                            });
    }
  }
  registry.AddCustomKindHook([placement_rules](api::Resource& r) {
    placement_rules(r);  // custom kinds are propagated whole, or divided by an interpreter
    api::ChainValidation(r, [](const json::object& obj, const json::object* old) {
      return ValidatePreferencesAnnotation(obj, old, api::kReplicaPreferencesAnnotation);
    });
  });
  // The scripts of a ResourceInterpreterCustomization compile and define
  // their functions (interpreter/interpreter.h).
  registry.AddValidation(
      "config.karmada.io", "resourceinterpretercustomizations",
      [](const json::object& obj, const json::object*) { return interpreter::Validate(obj); });
}

}  // namespace flotilla::federation
