// The federation's propagation policies (policies.h).
#include "federation/common/policies.h"

#include <algorithm>

#include "api/annotations.h"
#include "api/resources.h"
#include "api/views.h"
#include "base/log.h"

namespace flotilla::federation {

namespace policy = api::policy;

bool SpecChanged(const json::object& a, const json::object& b) {
  const json::value* sa = a.if_contains("spec");
  const json::value* sb = b.if_contains("spec");
  return sa == nullptr || sb == nullptr || *sa != *sb ||
         api::ObjectView(a).uid() != api::ObjectView(b).uid();
}

void ReportUnreadable(const json::object& obj, const Status& s) {
  api::ObjectView v(obj);
  spdlog::warn("{} {}: {}", v.kind(), v.name(), s.ToString());
}

Status OverridePolicies::Apply(const json::object& obj, std::string_view api_version,
                               std::string_view kind, const json::object& cluster,
                               json::object& copy,
                               std::shared_ptr<const policy::OverridePolicy>* failed) const {
  std::vector<PolicySet<policy::OverridePolicy>::Ptr> all = set_.All();
  if (all.empty()) return Status::Ok();
  std::vector<const policy::OverridePolicy*> ptrs;
  for (const auto& p : all) ptrs.push_back(p.get());
  policy::ObjectRef ref = policy::ObjectRef::Of(obj, api_version, kind);
  const policy::OverridePolicy* bad = nullptr;
  Status s = policy::ApplyAll(policy::OverridersFor(ptrs, ref, policy::ClusterFacts::Of(cluster)),
                              copy, &bad);
  if (failed != nullptr && bad != nullptr) {
    for (const auto& p : all) {
      if (p.get() == bad) *failed = p;
    }
  }
  return s;
}

PolicyPtr PropagationPolicies::For(const json::object& obj, std::string_view api_version,
                                   std::string_view kind) const {
  std::vector<PolicyPtr> all = All();
  if (all.empty()) return nullptr;
  std::vector<const policy::PropagationPolicy*> ptrs;
  ptrs.reserve(all.size());
  for (const PolicyPtr& p : all) ptrs.push_back(p.get());
  policy::ObjectRef ref = policy::ObjectRef::Of(obj, api_version, kind);
  const policy::PropagationPolicy* chosen = policy::SelectPolicy(ptrs, ref, policy::BindingOf(obj));
  for (const PolicyPtr& p : all) {
    if (p.get() == chosen) return p;
  }
  return nullptr;
}

bool PlacedByAnnotations(const json::object& obj, std::string_view preferences_annotation) {
  return api::FindAnnotation(obj, api::kClusterSelectorAnnotation) != nullptr ||
         api::FindAnnotation(obj, api::kPlacementClusterAnnotation) != nullptr ||
         (!preferences_annotation.empty() &&
          api::FindAnnotation(obj, preferences_annotation) != nullptr);
}

StatusOr<ObjectPlacement> PropagationPolicies::PlacementOf(
    const json::object& obj, std::string_view api_version, std::string_view kind,
    std::string_view preferences_annotation) const {
  ObjectPlacement out;
  if (PlacedByAnnotations(obj, preferences_annotation)) {
    FLOTILLA_ASSIGN_OR_RETURN(out.selector, ClusterSelector::Of(obj));
    out.placed = true;
    return out;
  }
  out.policy = For(obj, api_version, kind);
  out.placed = out.policy != nullptr;
  if (out.policy) out.selector = ClusterSelector::ForAffinity(out.policy->affinity);
  return out;
}

const std::vector<std::string>& PolicyAnnotationKeys() {
  static const std::vector<std::string> kKeys = {policy::kPropagationPolicyNameAnnotation,
                                                 policy::kPropagationPolicyNamespaceAnnotation,
                                                 policy::kClusterPropagationPolicyNameAnnotation};
  return kKeys;
}

json::object PolicyAnnotations(const policy::PropagationPolicy* p) {
  json::object out;
  if (p == nullptr) return out;
  if (p->cluster_scoped) {
    out[policy::kClusterPropagationPolicyNameAnnotation] = p->name;
  } else {
    out[policy::kPropagationPolicyNameAnnotation] = p->name;
    out[policy::kPropagationPolicyNamespaceAnnotation] = p->ns;
  }
  return out;
}

std::optional<int64_t> AvailableReplicas(const json::object& cluster,
                                         const json::object* pod_template) {
  const json::value* summary = Find(cluster, "status.resourceSummary");
  if (summary == nullptr || !summary->is_object()) return std::nullopt;
  auto amount = [&](std::string_view which, std::string_view resource, int64_t scale) {
    const json::value* q =
        Find(summary->get_object(), std::string(which) + "." + std::string(resource));
    return q == nullptr ? std::optional<int64_t>() : api::QuantityValue(*q, scale);
  };
  json::object pod;
  if (pod_template != nullptr) {
    if (const json::value* spec = pod_template->if_contains("spec")) pod["spec"] = *spec;
  }
  api::Resources need = api::PodRequests(pod);
  std::optional<int64_t> room;
  auto limit = [&](std::string_view resource, int64_t scale, int64_t per_pod) {
    if (per_pod <= 0) return;
    std::optional<int64_t> total = amount("allocatable", resource, scale);
    if (!total) return;
    int64_t free = std::max<int64_t>(0, *total - amount("allocated", resource, scale).value_or(0));
    int64_t fits = free / per_pod;
    room = room ? std::min(*room, fits) : fits;
  };
  limit("cpu", 1000, need.milli_cpu);
  limit("memory", 1, need.memory);
  limit("pods", 1, 1);
  return room;
}

std::optional<planner::Preferences> DivisionPreferences(
    const policy::PropagationPolicy& p, int64_t replicas,
    const std::vector<DivisionCluster>& clusters) {
  const policy::ReplicaScheduling& s = p.scheduling;
  if (s.type == policy::ReplicaSchedulingType::kDuplicated) return std::nullopt;
  planner::Preferences prefs;
  auto room = [](const DivisionCluster& c) { return c.available.value_or(0) + c.current; };
  auto weigh_by_room = [&](const std::vector<const DivisionCluster*>& chosen) {
    bool known = std::any_of(chosen.begin(), chosen.end(),
                             [](const DivisionCluster* c) { return c->available.has_value(); });
    for (const DivisionCluster* c : chosen) {
      // A cluster without room gets nothing new; with no figures, all weigh 1.
      prefs.clusters[c->name] = {.weight = known ? room(*c) : 1};
    }
  };
  if (s.division == policy::DivisionPreference::kWeighted && !s.static_weights.empty()) {
    prefs.rebalance = true;
    int64_t total = 0;
    for (const DivisionCluster& c : clusters) {
      int64_t w = c.cluster ? p.StaticWeightOf(policy::ClusterFacts::Of(*c.cluster)) : 0;
      prefs.clusters[c.name] = {.weight = w};
      total += w;
    }
    if (total == 0) {
      for (auto& [name, pref] : prefs.clusters) pref.weight = 1;
    }
    return prefs;
  }
  std::vector<const DivisionCluster*> chosen;
  for (const DivisionCluster& c : clusters) chosen.push_back(&c);
  if (s.division == policy::DivisionPreference::kAggregated) {
    // The most room first (the name breaks ties), as few as hold them all.
    std::stable_sort(chosen.begin(), chosen.end(), [&](const auto* a, const auto* b) {
      return room(*a) != room(*b) ? room(*a) > room(*b) : a->name < b->name;
    });
    int64_t held = 0;
    size_t n = 0;
    while (n < chosen.size() && (n == 0 || held < replicas)) held += room(*chosen[n++]);
    if (held >= replicas) chosen.resize(n);
  }
  weigh_by_room(chosen);
  return prefs;
}

}  // namespace flotilla::federation
