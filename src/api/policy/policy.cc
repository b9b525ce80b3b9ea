// Propagation policies read, matched and chosen (policy.h).
#include "api/policy/policy.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>

#include "api/annotations.h"
#include "api/policy/quota.h"
#include "api/resource_quota.h"
#include "api/resources.h"
#include "api/validation.h"

namespace flotilla::api::policy {
namespace {

using Causes = std::vector<StatusCause>;

std::string Child(std::string_view path, std::string_view name) {
  return path.empty() ? std::string(name) : std::string(path) + "." + std::string(name);
}
std::string Index(std::string_view path, size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}
// "hard[pods]": a map entry, as field.Path.Key prints it.
std::string Key(std::string_view path, std::string_view key) {
  return std::string(path) + "[" + std::string(key) + "]";
}

std::vector<std::string> Strings(const json::object& o, std::string_view key) {
  std::vector<std::string> out;
  for (const json::value& v : ArrayOrEmpty(o, key)) {
    if (v.is_string()) out.emplace_back(v.get_string());
  }
  return out;
}

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// A field selector's requirement on the cluster's zones (Karmada's rule: In
// needs one zone in the values, NotIn none, Exists some zone, DoesNotExist
// none).
bool ZonesMatch(const LabelRequirement& r, const std::vector<std::string>& zones) {
  auto any_in = [&] {
    return std::any_of(zones.begin(), zones.end(),
                       [&](const std::string& z) { return Contains(r.values, z); });
  };
  switch (r.op) {
    case SelectorOperator::kIn:
      return any_in();
    case SelectorOperator::kNotIn:
      return !any_in();
    case SelectorOperator::kExists:
      return !zones.empty();
    case SelectorOperator::kDoesNotExist:
      return zones.empty();
    default:
      return false;
  }
}

std::optional<SelectorOperator> FieldOperator(std::string_view op) {
  if (op == "In") return SelectorOperator::kIn;
  if (op == "NotIn") return SelectorOperator::kNotIn;
  return std::nullopt;
}

void CheckEnum(const json::object& o, std::string_view key, std::string_view path,
               const std::vector<std::string>& allowed, Causes& out) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_string()) return;
  if (!Contains(allowed, v->get_string())) {
    out.push_back(FieldNotSupported(Child(path, key), *v, allowed));
  }
}

// A JSON pointer as RFC 6901 and Karmada's overriders write it: empty or
// starting with '/', '~' only as "~0" or "~1".
bool IsJsonPointer(std::string_view p) {
  if (!p.empty() && p[0] != '/') return false;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '~' && (i + 1 == p.size() || (p[i + 1] != '0' && p[i + 1] != '1'))) return false;
  }
  return true;
}

void CheckPointer(const json::object& o, std::string_view key, std::string_view path, Causes& out) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_string()) {
    out.push_back(FieldRequired(Child(path, key), ""));
    return;
  }
  if (!IsJsonPointer(v->get_string())) {
    out.push_back(FieldInvalid(Child(path, key), *v,
                               "must be a JSON pointer: empty or starting with '/' (RFC 6901)"));
  }
}

void CheckClusterAffinity(const json::value* affinity, std::string_view path, Causes& out) {
  if (affinity == nullptr || affinity->is_null()) return;
  if (StatusOr<ClusterAffinity> a = ClusterAffinity::FromJson(*affinity, path); !a.ok()) {
    for (const StatusCause& c : a.status().causes()) out.push_back(c);
  }
}

void CheckResourceSelectors(const json::object& spec, std::string_view path, std::string_view ns,
                            bool required, bool preempt_always, Causes& out) {
  const json::array* selectors = GetArray(spec, "resourceSelectors");
  if (selectors == nullptr || selectors->empty()) {
    if (required) out.push_back(FieldRequired(Child(path, "resourceSelectors"), ""));
    return;
  }
  for (size_t i = 0; i < selectors->size(); ++i) {
    std::string at = Index(Child(path, "resourceSelectors"), i);
    if (!(*selectors)[i].is_object()) continue;  // the schema check reports it
    const json::object& s = (*selectors)[i].get_object();
    for (const char* key : {"apiVersion", "kind"}) {
      if (GetString(s, key).value_or("").empty()) out.push_back(FieldRequired(Child(at, key), ""));
    }
    if (!ns.empty() && GetString(s, "namespace").value_or(ns) != ns) {
      out.push_back(FieldInvalid(Child(at, "namespace"), s.at("namespace"),
                                 "namespace of resource selector must be the same as the "
                                 "namespace of the policy"));
    }
    if (const json::value* l = s.if_contains("labelSelector"); l != nullptr && !l->is_null()) {
      for (StatusCause& c : ValidateLabelSelector(*l, Child(at, "labelSelector"))) {
        out.push_back(std::move(c));
      }
    }
    if (preempt_always && GetString(s, "name").value_or("").empty()) {
      out.push_back(FieldInvalid(Child(at, "name"), json::string(""),
                                 "name cannot be empty if preemption is Always, the empty name "
                                 "may cause unexpected resources preemption"));
    }
  }
}

void CheckReplicaScheduling(const json::object& placement, std::string_view path, Causes& out) {
  const json::object* rs = GetObject(placement, "replicaScheduling");
  if (rs == nullptr) return;
  std::string at = Child(path, "replicaScheduling");
  CheckEnum(*rs, "replicaSchedulingType", at, {"Duplicated", "Divided"}, out);
  CheckEnum(*rs, "replicaDivisionPreference", at, {"Aggregated", "Weighted"}, out);
  const json::object* weights = GetObject(*rs, "weightPreference");
  std::string wat = Child(at, "weightPreference");
  if (weights != nullptr) {
    CheckEnum(*weights, "dynamicWeight", wat, {"AvailableReplicas"}, out);
    const json::array& list = ArrayOrEmpty(*weights, "staticWeightList");
    for (size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_object()) continue;
      const json::object& w = list[i].get_object();
      std::string wi = Index(Child(wat, "staticWeightList"), i);
      const json::value* weight = w.if_contains("weight");
      if (weight == nullptr) {
        out.push_back(FieldRequired(Child(wi, "weight"), ""));
      } else if (weight->is_number() && weight->to_number<double>() < 1) {
        out.push_back(
            FieldInvalid(Child(wi, "weight"), *weight, "should be greater than or equal to 1"));
      }
      if (!w.contains("targetCluster")) {
        out.push_back(FieldRequired(Child(wi, "targetCluster"), ""));
      }
      CheckClusterAffinity(w.if_contains("targetCluster"), Child(wi, "targetCluster"), out);
    }
    if (!list.empty() && GetString(*weights, "dynamicWeight")) {
      out.push_back(FieldInvalid(Child(wat, "dynamicWeight"), weights->at("dynamicWeight"),
                                 "staticWeightList and dynamicWeight cannot co-exist"));
    }
  }
  if (GetString(*rs, "replicaSchedulingType").value_or("Divided") != "Divided") return;
  std::string_view division = GetString(*rs, "replicaDivisionPreference").value_or("");
  if (division.empty()) {
    out.push_back(FieldRequired(Child(at, "replicaDivisionPreference"),
                                "Divided replicas need Aggregated or Weighted"));
  } else if (division == "Weighted" &&
             (weights == nullptr || (ArrayOrEmpty(*weights, "staticWeightList").empty() &&
                                     !GetString(*weights, "dynamicWeight")))) {
    out.push_back(FieldRequired(wat, "Weighted needs a staticWeightList or a dynamicWeight"));
  }
}

void CheckSpreadConstraints(const json::object& placement, std::string_view path, Causes& out) {
  const json::array& list = ArrayOrEmpty(placement, "spreadConstraints");
  std::string at = Child(path, "spreadConstraints");
  bool by_field = false, by_cluster = false;
  std::vector<std::string> fields;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_object()) continue;
    const json::object& c = list[i].get_object();
    std::string ci = Index(at, i);
    CheckEnum(c, "spreadByField", ci, {"cluster", "region", "zone", "provider"}, out);
    std::string_view field = GetString(c, "spreadByField").value_or("");
    if (!field.empty() && !GetString(c, "spreadByLabel").value_or("").empty()) {
      out.push_back(
          FieldInvalid(ci, list[i], "spreadByLabel should not co-exist with spreadByField"));
    }
    int64_t min = GetInt(c, "minGroups").value_or(0), max = GetInt(c, "maxGroups").value_or(0);
    if (min < 0) out.push_back(FieldInvalid(ci, list[i], "minGroups lower than 0 is not allowed"));
    if (max < 0) out.push_back(FieldInvalid(ci, list[i], "maxGroups lower than 0 is not allowed"));
    if (max < min) {
      out.push_back(FieldInvalid(ci, list[i], "maxGroups lower than minGroups is not allowed"));
    }
    if (!field.empty()) {
      by_field = true;
      by_cluster = by_cluster || field == "cluster";
      if (Contains(fields, field)) {
        out.push_back(
            FieldInvalid(at, placement.at("spreadConstraints"),
                         "multiple " + std::string(field) + " spread constraints are not allowed"));
      }
      fields.emplace_back(field);
    }
  }
  if (by_field && !by_cluster) {
    out.push_back(FieldInvalid(at, placement.at("spreadConstraints"),
                               "the cluster spread constraint must be enabled in one of the "
                               "constraints in case of SpreadByField is enabled"));
  }
}

void CheckPlacement(const json::object& spec, Causes& out) {
  const json::object* placement = GetObject(spec, "placement");
  if (placement == nullptr) return;
  const std::string at = "spec.placement";
  if (placement->contains("clusterAffinity") && placement->contains("clusterAffinities")) {
    out.push_back(FieldInvalid(at, *Find(spec, "placement"),
                               "clusterAffinities cannot co-exist with clusterAffinity"));
  }
  CheckClusterAffinity(placement->if_contains("clusterAffinity"), Child(at, "clusterAffinity"),
                       out);
  const json::array& terms = ArrayOrEmpty(*placement, "clusterAffinities");
  std::vector<std::string> names;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (!terms[i].is_object()) continue;
    std::string ti = Index(Child(at, "clusterAffinities"), i);
    std::string name(GetString(terms[i].get_object(), "affinityName").value_or(""));
    if (name.empty()) {
      out.push_back(FieldRequired(Child(ti, "affinityName"), ""));
    } else if (Contains(names, name)) {
      out.push_back(FieldInvalid(Child(at, "clusterAffinities"),
                                 *placement->if_contains("clusterAffinities"),
                                 "each affinity term in a policy must have a unique name"));
    }
    names.push_back(name);
    json::value term = terms[i];
    term.get_object().erase("affinityName");
    term.get_object().erase("overflowAffinities");
    CheckClusterAffinity(&term, ti, out);
  }
  const json::array& tolerations = ArrayOrEmpty(*placement, "clusterTolerations");
  for (size_t i = 0; i < tolerations.size(); ++i) {
    if (!tolerations[i].is_object()) continue;
    const json::object& t = tolerations[i].get_object();
    std::string ti = Index(Child(at, "clusterTolerations"), i);
    CheckEnum(t, "operator", ti, {"Equal", "Exists"}, out);
    CheckEnum(t, "effect", ti, {"NoSchedule", "PreferNoSchedule", "NoExecute"}, out);
    // A pod toleration's rules (kube-apiserver's messages).
    bool exists = GetString(t, "operator") == "Exists";
    if (StringAt(t, "key").empty() && !exists) {
      out.push_back(FieldInvalid(Child(ti, "operator"), json::string(StringAt(t, "operator")),
                                 "operator must be Exists when `key` is empty, which means "
                                 "\"match all values and all keys\""));
    }
    if (exists && !StringAt(t, "value").empty()) {
      out.push_back(FieldInvalid(Child(ti, "operator"), t.at("value"),
                                 "value must be empty when `operator` is 'Exists'"));
    }
    if (t.contains("tolerationSeconds") && GetString(t, "effect") != kNoExecute) {
      out.push_back(FieldInvalid(Child(ti, "effect"), t.contains("effect") ? t.at("effect") : "",
                                 "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
  }
  CheckSpreadConstraints(*placement, at, out);
  CheckReplicaScheduling(*placement, at, out);
}

std::string_view Namespace(const json::object& obj) {
  return StringViewAt(obj, "metadata.namespace");
}

}  // namespace

// ---- Clusters and affinities. ----

ClusterFacts ClusterFacts::Of(const json::object& cluster) {
  ClusterFacts f;
  f.name = StringAt(cluster, "metadata.name");
  if (const json::value* l = Find(cluster, "metadata.labels"); l != nullptr && l->is_object()) {
    f.labels = &l->get_object();
  }
  f.provider = StringAt(cluster, "spec.provider");
  f.region = StringAt(cluster, "spec.region");
  if (f.region.empty()) f.region = StringAt(cluster, "status.region");
  f.zones = StringsAt(cluster, "spec.zones");
  if (f.zones.empty()) f.zones = StringsAt(cluster, "status.zones");
  return f;
}

std::vector<ClusterTaint> TaintsOf(const json::object& cluster) {
  std::vector<ClusterTaint> out;
  bool unschedulable_tainted = false;
  if (const json::object* spec = GetObject(cluster, "spec")) {
    for (const json::value& v : ArrayOrEmpty(*spec, "taints")) {
      if (!v.is_object()) continue;
      const json::object& t = v.get_object();
      ClusterTaint taint{.key = StringAt(t, "key"),
                         .value = StringAt(t, "value"),
                         .effect = StringAt(t, "effect")};
      TimePoint added;
      if (ParseRfc3339(StringAt(t, "timeAdded"), &added)) taint.added = added;
      unschedulable_tainted |= taint.key == kUnschedulableTaintKey && taint.effect == kNoSchedule;
      out.push_back(std::move(taint));
    }
  }
  const json::value* unschedulable = Find(cluster, "spec.unschedulable");
  if (!unschedulable_tainted && unschedulable != nullptr && unschedulable->is_bool() &&
      unschedulable->get_bool()) {
    out.push_back({.key = kUnschedulableTaintKey, .effect = kNoSchedule});
  }
  return out;
}

bool ClusterToleration::Tolerates(const ClusterTaint& t) const {
  if (!effect.empty() && effect != t.effect) return false;
  if (!key.empty() && key != t.key) return false;
  return exists || value == t.value;
}

TaintVerdict JudgeTaints(const std::vector<ClusterTaint>& taints,
                         std::span<const ClusterToleration> tolerations, TimePoint now) {
  TaintVerdict v;
  for (const ClusterTaint& t : taints) {
    if (t.effect != kNoSchedule && t.effect != kNoExecute) continue;
    // A NoExecute taint is tolerated for the longest time a toleration
    // gives (for ever by one without tolerationSeconds).
    bool tolerated = false;
    std::optional<TimePoint> until;
    for (const ClusterToleration& tol : tolerations) {
      if (!tol.Tolerates(t)) continue;
      if (t.effect != kNoExecute || !tol.seconds) {
        tolerated = true;
        until.reset();
        break;
      }
      TimePoint end =
          t.added.value_or(now) + std::chrono::seconds(std::max<int64_t>(0, *tol.seconds));
      if (end > now && (!until || end > *until)) until = end;
    }
    if (until) {
      tolerated = true;
      if (!v.changes_at || *until < *v.changes_at) v.changes_at = until;
    }
    if (tolerated) {
      if (t.key == kUnschedulableTaintKey && t.effect == kNoSchedule) v.cordon_tolerated = true;
      continue;
    }
    (t.effect == kNoSchedule ? v.no_schedule : v.no_execute) = true;
  }
  return v;
}

StatusOr<ClusterAffinity> ClusterAffinity::FromJson(const json::value& affinity,
                                                    std::string_view path) {
  Causes causes;
  ClusterAffinity out;
  if (!affinity.is_object()) {
    causes.push_back(FieldTypeInvalid(std::string(path), affinity, "object"));
    return Status::Invalid("invalid cluster affinity", std::move(causes));
  }
  const json::object& a = affinity.get_object();
  if (const json::value* l = a.if_contains("labelSelector"); l != nullptr && !l->is_null()) {
    StatusOr<LabelSelector> s = LabelSelector::FromJson(l, Child(path, "labelSelector"));
    if (s.ok()) {
      out.labels_ = *std::move(s);
    } else {
      for (const StatusCause& c : s.status().causes()) causes.push_back(c);
    }
  }
  if (const json::object* fs = GetObject(a, "fieldSelector")) {
    const json::array& exprs = ArrayOrEmpty(*fs, "matchExpressions");
    for (size_t i = 0; i < exprs.size(); ++i) {
      std::string at = Index(Child(Child(path, "fieldSelector"), "matchExpressions"), i);
      if (!exprs[i].is_object()) {
        causes.push_back(FieldTypeInvalid(at, exprs[i], "object"));
        continue;
      }
      const json::object& e = exprs[i].get_object();
      LabelRequirement r;
      r.key = std::string(GetString(e, "key").value_or(""));
      if (r.key != kProviderField && r.key != kRegionField && r.key != kZoneField) {
        causes.push_back(FieldNotSupported(Child(at, "key"), json::string(r.key),
                                           {kProviderField, kRegionField, kZoneField}));
      }
      std::string_view op = GetString(e, "operator").value_or("");
      std::optional<SelectorOperator> parsed = FieldOperator(op);
      if (!parsed) {
        causes.push_back(
            FieldNotSupported(Child(at, "operator"), json::string(op), {"In", "NotIn"}));
      } else {
        r.op = *parsed;
      }
      r.values = Strings(e, "values");
      if (r.values.empty()) {
        causes.push_back(FieldRequired(Child(at, "values"),
                                       "must be specified when `operator` is 'In' or 'NotIn'"));
      }
      out.fields_.push_back(std::move(r));
    }
  }
  out.names_ = Strings(a, "clusterNames");
  out.exclude_ = Strings(a, "exclude");
  if (!causes.empty()) {
    std::string message = "invalid cluster affinity: " + AggregateCauses(causes);
    return Status::Invalid(std::move(message), std::move(causes));
  }
  return out;
}

const char* ClusterAffinity::WhyNot(const ClusterFacts& cluster) const {
  if (Contains(exclude_, cluster.name)) return "named in exclude";
  if (labels_ && !labels_->Matches(cluster.labels)) return "its labels do not match labelSelector";
  if (!fields_.empty()) {
    json::object fields;
    if (!cluster.provider.empty()) fields[kProviderField] = cluster.provider;
    if (!cluster.region.empty()) fields[kRegionField] = cluster.region;
    for (const LabelRequirement& r : fields_) {
      bool ok = r.key == kZoneField ? ZonesMatch(r, cluster.zones) : r.Matches(&fields);
      if (!ok) return "its provider, region or zones do not match fieldSelector";
    }
  }
  if (!names_.empty() && !Contains(names_, cluster.name)) return "not in clusterNames";
  return nullptr;
}

// ---- Matching and choosing. ----

ObjectRef ObjectRef::Of(const json::object& obj, std::string_view api_version,
                        std::string_view kind) {
  ObjectRef ref{.api_version = api_version,
                .kind = kind,
                .ns = StringViewAt(obj, "metadata.namespace"),
                .name = StringViewAt(obj, "metadata.name")};
  if (const json::value* l = Find(obj, "metadata.labels"); l != nullptr && l->is_object()) {
    ref.labels = &l->get_object();
  }
  return ref;
}

StatusOr<std::vector<ResourceSelector>> ReadResourceSelectors(const json::object& spec) {
  std::vector<ResourceSelector> out;
  for (const json::value& v : ArrayOrEmpty(spec, "resourceSelectors")) {
    if (!v.is_object()) continue;
    const json::object& s = v.get_object();
    ResourceSelector rs{.api_version = std::string(GetString(s, "apiVersion").value_or("")),
                        .kind = std::string(GetString(s, "kind").value_or("")),
                        .ns = std::string(GetString(s, "namespace").value_or("")),
                        .name = std::string(GetString(s, "name").value_or(""))};
    if (const json::value* l = s.if_contains("labelSelector"); l != nullptr && !l->is_null()) {
      FLOTILLA_ASSIGN_OR_RETURN(rs.labels, LabelSelector::FromJson(l, "labelSelector"));
    }
    out.push_back(std::move(rs));
  }
  return out;
}

ImplicitPriority ResourceSelector::Match(const ObjectRef& obj) const {
  if (obj.api_version != api_version || obj.kind != kind || (!ns.empty() && obj.ns != ns)) {
    return ImplicitPriority::kMismatch;
  }
  // A name decides alone; a label selector is then not consulted.
  if (!name.empty())
    return name == obj.name ? ImplicitPriority::kName : ImplicitPriority::kMismatch;
  if (!labels) return ImplicitPriority::kAll;
  return labels->Matches(obj.labels) ? ImplicitPriority::kLabels : ImplicitPriority::kMismatch;
}

ImplicitPriority PropagationPolicy::Match(const ObjectRef& obj) const {
  if (!cluster_scoped && obj.ns != ns) return ImplicitPriority::kMismatch;
  ImplicitPriority best = ImplicitPriority::kMismatch;
  for (const ResourceSelector& s : selectors) best = std::max(best, s.Match(obj));
  return best;
}

std::string PropagationPolicy::Ref() const { return cluster_scoped ? name : ns + "/" + name; }

int64_t PropagationPolicy::StaticWeightOf(const ClusterFacts& cluster) const {
  int64_t weight = 0;
  for (const StaticWeight& w : scheduling.static_weights) {
    if (w.target.Matches(cluster)) weight = std::max(weight, w.weight);
  }
  return weight;
}

std::string PropagationPolicy::SpreadField() const {
  for (const SpreadConstraint& c : spread) {
    if (c.field != "cluster") return c.field;
  }
  return "";
}

bool PropagationPolicy::Spreads() const {
  if (spread.empty()) return false;
  return !(scheduling.type == ReplicaSchedulingType::kDivided &&
           scheduling.division == DivisionPreference::kWeighted &&
           !scheduling.dynamic_available_replicas);
}

namespace {

// Room as the ranking reads it: unknown is plenty.
int64_t Room(const SpreadCandidate& c) {
  return c.available.value_or(std::numeric_limits<int64_t>::max() / 4);
}

bool Better(const SpreadCandidate& a, const SpreadCandidate& b) {
  if (a.holds != b.holds) return a.holds;
  if (Room(a) != Room(b)) return Room(a) > Room(b);
  return a.name < b.name;
}

int64_t RoomOf(std::span<const SpreadCandidate> clusters) {
  int64_t sum = 0;
  for (const SpreadCandidate& c : clusters) sum += Room(c);
  return sum;
}

std::vector<std::string> Names(std::span<const SpreadCandidate> clusters) {
  std::vector<std::string> out;
  for (const SpreadCandidate& c : clusters) out.push_back(c.name);
  return out;
}

}  // namespace

StatusOr<std::vector<std::string>> SelectBySpread(std::span<const SpreadConstraint> constraints,
                                                  std::vector<SpreadCandidate> candidates,
                                                  std::optional<int64_t> need) {
  const SpreadConstraint* by_cluster = nullptr;
  const SpreadConstraint* by_group = nullptr;
  for (const SpreadConstraint& c : constraints) {
    (c.field == "cluster" ? by_cluster : by_group) = &c;
  }
  static const SpreadConstraint kAny{.field = "cluster"};
  if (by_cluster == nullptr) by_cluster = &kAny;
  std::sort(candidates.begin(), candidates.end(), Better);
  const size_t total = candidates.size();
  auto at_most = [](int64_t max, size_t n) {
    return max > 0 ? std::min<size_t>(n, static_cast<size_t>(max)) : n;
  };
  if (by_group == nullptr) {
    if (static_cast<int64_t>(total) < by_cluster->min_groups) {
      return Status::Unavailable("the number of feasible clusters (" + std::to_string(total) +
                                 ") is less than the cluster spread constraint's minGroups (" +
                                 std::to_string(by_cluster->min_groups) + ")");
    }
    size_t n = at_most(by_cluster->max_groups, total);
    std::vector<SpreadCandidate> chosen(candidates.begin(), candidates.begin() + n);
    std::vector<SpreadCandidate> rest(candidates.begin() + n, candidates.end());
    // Too little room: the cluster with the most room among the rest takes
    // the place of the last chosen, then of the one before, ...
    for (size_t i = n; need && i-- > 0 && RoomOf(chosen) < *need;) {
      auto best = std::max_element(rest.begin(), rest.end(),
                                   [](const auto& a, const auto& b) { return Room(a) < Room(b); });
      if (best != rest.end() && Room(*best) > Room(chosen[i])) std::swap(chosen[i], *best);
    }
    if (need && RoomOf(chosen) < *need) {
      return Status::Unavailable("no " + std::to_string(n) + " clusters have room for " +
                                 std::to_string(*need) + " replicas");
    }
    return Names(chosen);
  }
  // Groups in the order of their best cluster (the candidates are ranked).
  std::vector<std::vector<SpreadCandidate>> groups;
  std::map<std::string, size_t> index;
  for (SpreadCandidate& c : candidates) {
    auto [it, added] = index.emplace(c.group, groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(std::move(c));
  }
  if (static_cast<int64_t>(groups.size()) < by_group->min_groups) {
    return Status::Unavailable("the number of feasible " + by_group->field + "s (" +
                               std::to_string(groups.size()) + ") is less than the " +
                               by_group->field + " spread constraint's minGroups (" +
                               std::to_string(by_group->min_groups) + ")");
  }
  // The fewest groups that have the clusters the cluster constraint needs
  // between them, and among as many, the first combination in rank order.
  const size_t most = at_most(by_group->max_groups, groups.size());
  const int64_t needed = by_cluster->min_groups;
  std::vector<size_t> picked;
  std::function<bool(size_t, size_t, int64_t)> pick = [&](size_t from, size_t k, int64_t sum) {
    if (picked.size() == k) return sum >= needed;
    for (size_t i = from; i + (k - picked.size()) <= groups.size(); ++i) {
      picked.push_back(i);
      if (pick(i + 1, k, sum + static_cast<int64_t>(groups[i].size()))) return true;
      picked.pop_back();
    }
    return false;
  };
  size_t k = std::max<size_t>(1, static_cast<size_t>(std::max<int64_t>(by_group->min_groups, 0)));
  bool found = false;
  for (; k <= most && !found; ++k) found = pick(0, k, 0);
  if (!found) {
    return Status::Unavailable(
        "no " + std::to_string(most) + " " + by_group->field +
        "s have as many clusters as the cluster spread constraint's minGroups (" +
        std::to_string(needed) + ")");
  }
  std::vector<SpreadCandidate> chosen, rest;
  for (size_t i : picked) {
    chosen.push_back(groups[i].front());
    rest.insert(rest.end(), groups[i].begin() + 1, groups[i].end());
  }
  std::sort(rest.begin(), rest.end(), Better);
  size_t n = at_most(by_cluster->max_groups, chosen.size() + rest.size());
  for (size_t i = 0; chosen.size() < n && i < rest.size(); ++i) chosen.push_back(rest[i]);
  return Names(chosen);
}

StatusOr<PropagationPolicy> PropagationPolicy::FromObject(const json::object& obj) {
  PropagationPolicy p;
  p.cluster_scoped = StringViewAt(obj, "kind") == "ClusterPropagationPolicy";
  p.ns = p.cluster_scoped ? "" : std::string(Namespace(obj));
  p.name = StringAt(obj, "metadata.name");
  p.uid = StringAt(obj, "metadata.uid");
  const json::object* spec = GetObject(obj, "spec");
  if (spec == nullptr) return Status::Invalid("a propagation policy needs a spec");
  p.priority = static_cast<int32_t>(GetInt(*spec, "priority").value_or(0));
  p.preempt_always = GetString(*spec, "preemption") == "Always";
  if (const json::object* placement = GetObject(*spec, "placement")) {
    for (const json::value& v : ArrayOrEmpty(*placement, "clusterTolerations")) {
      if (!v.is_object()) continue;
      const json::object& t = v.get_object();
      p.tolerations.push_back({.key = StringAt(t, "key"),
                               .exists = GetString(t, "operator") == "Exists",
                               .value = StringAt(t, "value"),
                               .effect = StringAt(t, "effect"),
                               .seconds = GetInt(t, "tolerationSeconds")});
    }
  }
  if (const json::object* placement = GetObject(*spec, "placement")) {
    for (const json::value& v : ArrayOrEmpty(*placement, "spreadConstraints")) {
      if (!v.is_object()) continue;
      const json::object& c = v.get_object();
      std::string field = StringAt(c, "spreadByField");
      if (field.empty()) continue;  // by label: kept, not acted on
      p.spread.push_back({.field = std::move(field),
                          .min_groups = GetInt(c, "minGroups").value_or(0),
                          .max_groups = GetInt(c, "maxGroups").value_or(0)});
    }
  }
  p.preserve_on_deletion = GetBool(*spec, "preserveResourcesOnDeletion").value_or(false);
  p.propagate_deps = GetBool(*spec, "propagateDeps");
  p.overwrite_conflicts = GetString(*spec, "conflictResolution") == "Overwrite";
  FLOTILLA_ASSIGN_OR_RETURN(p.selectors, ReadResourceSelectors(*spec));
  const json::object* placement = GetObject(*spec, "placement");
  if (placement == nullptr) return p;
  if (const json::value* a = placement->if_contains("clusterAffinity"); a && !a->is_null()) {
    FLOTILLA_ASSIGN_OR_RETURN(p.affinity,
                              ClusterAffinity::FromJson(*a, "spec.placement.clusterAffinity"));
  }
  for (const json::value& term : ArrayOrEmpty(*placement, "clusterAffinities")) {
    if (!term.is_object()) continue;
    PropagationPolicy::AffinityGroup g{
        .name = std::string(GetString(term.get_object(), "affinityName").value_or(""))};
    FLOTILLA_ASSIGN_OR_RETURN(g.affinity,
                              ClusterAffinity::FromJson(term, "spec.placement.clusterAffinities"));
    p.affinity_groups.push_back(std::move(g));
  }
  const json::object* rs = GetObject(*placement, "replicaScheduling");
  if (rs == nullptr) return p;
  ReplicaScheduling& s = p.scheduling;
  s.type = GetString(*rs, "replicaSchedulingType").value_or("Divided") == "Duplicated"
               ? ReplicaSchedulingType::kDuplicated
               : ReplicaSchedulingType::kDivided;
  std::string_view division = GetString(*rs, "replicaDivisionPreference").value_or("");
  s.division = division == "Aggregated" ? DivisionPreference::kAggregated
               : division == "Weighted" ? DivisionPreference::kWeighted
                                        : DivisionPreference::kNone;
  if (const json::object* w = GetObject(*rs, "weightPreference")) {
    s.dynamic_available_replicas = GetString(*w, "dynamicWeight") == "AvailableReplicas";
    const json::array& list = ArrayOrEmpty(*w, "staticWeightList");
    for (size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_object()) continue;
      const json::object& e = list[i].get_object();
      StaticWeight sw{.weight = GetInt(e, "weight").value_or(1)};
      if (const json::value* t = e.if_contains("targetCluster"); t && !t->is_null()) {
        FLOTILLA_ASSIGN_OR_RETURN(sw.target, ClusterAffinity::FromJson(*t, "targetCluster"));
      }
      s.static_weights.push_back(std::move(sw));
    }
  }
  return p;
}

namespace {

// True when `a` places before `b` among policies of one scope that both
// match: higher explicit priority, then closer match, then name order.
bool Before(const PropagationPolicy& a, ImplicitPriority pa, const PropagationPolicy& b,
            ImplicitPriority pb) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (pa != pb) return pa > pb;
  return a.name < b.name;
}

const PropagationPolicy* Best(std::span<const PropagationPolicy* const> policies,
                              const ObjectRef& obj, bool cluster_scoped) {
  const PropagationPolicy* best = nullptr;
  ImplicitPriority best_match = ImplicitPriority::kMismatch;
  for (const PropagationPolicy* p : policies) {
    if (p->cluster_scoped != cluster_scoped) continue;
    ImplicitPriority m = p->Match(obj);
    if (m == ImplicitPriority::kMismatch) continue;
    if (best == nullptr || Before(*p, m, *best, best_match)) {
      best = p;
      best_match = m;
    }
  }
  return best;
}

}  // namespace

const PropagationPolicy* SelectPolicy(std::span<const PropagationPolicy* const> policies,
                                      const ObjectRef& obj, const Binding& bound) {
  const PropagationPolicy* winner = Best(policies, obj, false);
  if (winner == nullptr) winner = Best(policies, obj, true);
  if (winner == nullptr || bound.empty()) return winner;
  const PropagationPolicy* current = nullptr;
  for (const PropagationPolicy* p : policies) {
    if (p->cluster_scoped == bound.cluster_scoped && p->Ref() == bound.ref &&
        p->Match(obj) != ImplicitPriority::kMismatch) {
      current = p;
    }
  }
  if (current == nullptr || current == winner) return winner;
  // Preemption: a namespaced policy takes an object from a cluster policy,
  // or from a lower-priority namespaced one; a cluster policy only from a
  // lower-priority cluster policy.
  if (!winner->preempt_always) return current;
  if (!winner->cluster_scoped && current->cluster_scoped) return winner;
  if (winner->cluster_scoped != current->cluster_scoped) return current;
  return winner->priority > current->priority ? winner : current;
}

Binding BindingOf(const json::object& obj) {
  std::string name = AnnotationAt(obj, kPropagationPolicyNameAnnotation);
  if (!name.empty()) {
    return {.ref = AnnotationAt(obj, kPropagationPolicyNamespaceAnnotation) + "/" + name};
  }
  return {.ref = AnnotationAt(obj, kClusterPropagationPolicyNameAnnotation),
          .cluster_scoped = true};
}

// ---- Validation, warnings and defaults. ----

std::vector<StatusCause> ValidatePropagation(const json::object& obj, bool namespaced) {
  Causes out;
  const json::object* spec = GetObject(obj, "spec");
  if (spec == nullptr) {
    out.push_back(FieldRequired("spec", ""));
    return out;
  }
  CheckEnum(*spec, "conflictResolution", "spec", {"Abort", "Overwrite"}, out);
  CheckEnum(*spec, "preemption", "spec", {"Always", "Never"}, out);
  CheckEnum(*spec, "activationPreference", "spec", {"Lazy"}, out);
  CheckResourceSelectors(*spec, "spec", namespaced ? Namespace(obj) : "", true,
                         GetString(*spec, "preemption") == "Always", out);
  CheckPlacement(*spec, out);
  if (const json::object* s = GetObject(*spec, "suspension")) {
    const json::value* d = s->if_contains("dispatching");
    if (d != nullptr && d->is_bool() && d->get_bool() &&
        !StringsAt(*s, "dispatchingOnClusters.clusterNames").empty()) {
      out.push_back(FieldInvalid("spec.suspension", *Find(*spec, "suspension"),
                                 "suspension dispatching cannot co-exist with "
                                 "dispatchingOnClusters.clusterNames"));
    }
  }
  return out;
}

namespace {

void CheckOperator(const json::object& o, std::string_view path, bool value_required_for_add,
                   const std::vector<std::string>& allowed, Causes& out) {
  const json::value* op = o.if_contains("operator");
  if (op == nullptr || !op->is_string()) {
    out.push_back(FieldRequired(Child(path, "operator"), ""));
    return;
  }
  if (!Contains(allowed, op->get_string())) {
    out.push_back(FieldNotSupported(Child(path, "operator"), *op, allowed));
    return;
  }
  if (!value_required_for_add) return;
  bool has_value = o.contains("value") && !o.at("value").is_null();
  if (op->get_string() == "remove" && has_value) {
    out.push_back(FieldInvalid(Child(path, "value"), o.at("value"),
                               "value is not allowed for remove operation"));
  } else if (op->get_string() != "remove" && !has_value) {
    out.push_back(FieldInvalid(Child(path, "value"), json::value(nullptr),
                               "value is required for add or replace operation"));
  }
}

void CheckOverriders(const json::object& o, std::string_view path, Causes& out) {
  static const std::vector<std::string> kOps = {"add", "remove", "replace"};
  auto each = [&](std::string_view key, auto&& fn) {
    const json::array& list = ArrayOrEmpty(o, key);
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i].is_object()) fn(list[i].get_object(), Index(Child(path, key), i));
    }
  };
  each("plaintext", [&](const json::object& p, const std::string& at) {
    CheckPointer(p, "path", at, out);
    CheckOperator(p, at, true, kOps, out);
  });
  each("imageOverrider", [&](const json::object& p, const std::string& at) {
    CheckEnum(p, "component", at, {"Registry", "Repository", "Tag"}, out);
    if (!p.contains("component")) out.push_back(FieldRequired(Child(at, "component"), ""));
    CheckOperator(p, at, false, kOps, out);
    if (const json::object* pred = GetObject(p, "predicate")) {
      CheckPointer(*pred, "path", Child(at, "predicate"), out);
    }
  });
  for (const char* key : {"commandOverrider", "argsOverrider"}) {
    each(key, [&](const json::object& p, const std::string& at) {
      if (GetString(p, "containerName").value_or("").empty()) {
        out.push_back(FieldRequired(Child(at, "containerName"), ""));
      }
      CheckOperator(p, at, false, {"add", "remove"}, out);
    });
  }
  for (const char* key : {"labelsOverrider", "annotationsOverrider"}) {
    each(key, [&](const json::object& p, const std::string& at) {
      CheckOperator(p, at, false, kOps, out);
    });
  }
  each("fieldOverrider", [&](const json::object& p, const std::string& at) {
    CheckPointer(p, "fieldPath", at, out);
    bool has_json = !ArrayOrEmpty(p, "json").empty(), has_yaml = !ArrayOrEmpty(p, "yaml").empty();
    if (has_json && has_yaml) {
      out.push_back(FieldInvalid(at, json::value(p),
                                 "FieldOverrider has both YAML and JSON set. Only one is allowed"));
    } else if (!has_json && !has_yaml) {
      out.push_back(FieldRequired(at, "FieldOverrider must have either JSON or YAML set"));
    }
    for (const char* doc : {"json", "yaml"}) {
      const json::array& ops = ArrayOrEmpty(p, doc);
      for (size_t i = 0; i < ops.size(); ++i) {
        if (!ops[i].is_object()) continue;
        std::string oi = Index(Child(at, doc), i);
        CheckPointer(ops[i].get_object(), "subPath", oi, out);
        CheckOperator(ops[i].get_object(), oi, true, kOps, out);
      }
    }
  });
}

}  // namespace

std::vector<StatusCause> ValidateOverride(const json::object& obj, bool namespaced) {
  Causes out;
  const json::object* spec = GetObject(obj, "spec");
  if (spec == nullptr) return out;
  CheckResourceSelectors(*spec, "spec", namespaced ? Namespace(obj) : "", false, false, out);
  const json::array& rules = ArrayOrEmpty(*spec, "overrideRules");
  if (!rules.empty() && spec->contains("targetCluster")) {
    out.push_back(FieldInvalid("spec.targetCluster", spec->at("targetCluster"),
                               "overrideRules and targetCluster can't co-exist"));
  }
  if (!rules.empty() && spec->contains("overriders")) {
    out.push_back(FieldInvalid("spec.overriders", spec->at("overriders"),
                               "overrideRules and overriders can't co-exist"));
  }
  CheckClusterAffinity(spec->if_contains("targetCluster"), "spec.targetCluster", out);
  if (const json::object* o = GetObject(*spec, "overriders"))
    CheckOverriders(*o, "spec.overriders", out);
  for (size_t i = 0; i < rules.size(); ++i) {
    if (!rules[i].is_object()) continue;
    std::string at = Index("spec.overrideRules", i);
    const json::object& rule = rules[i].get_object();
    CheckClusterAffinity(rule.if_contains("targetCluster"), Child(at, "targetCluster"), out);
    if (const json::object* o = GetObject(rule, "overriders")) {
      CheckOverriders(*o, Child(at, "overriders"), out);
    } else {
      out.push_back(FieldRequired(Child(at, "overriders"), ""));
    }
  }
  return out;
}

std::vector<StatusCause> ValidateFederatedResourceQuota(const json::object& obj) {
  Causes out;
  const json::value* o = Find(obj, "spec.overall");
  if (o == nullptr || !o->is_object()) {
    out.push_back(FieldRequired("spec.overall", ""));
  } else {
    ValidateQuotaResourceList(o->get_object(), "spec.overall", out);
  }
  const json::value* a = Find(obj, "spec.staticAssignments");
  std::map<std::string, int64_t> assigned;  // milli-units by name
  if (a != nullptr && a->is_array()) {
    std::vector<std::string> seen;
    for (size_t i = 0; i < a->get_array().size(); ++i) {
      const json::value& e = a->get_array()[i];
      if (!e.is_object()) continue;
      std::string at = Index("spec.staticAssignments", i);
      std::string cluster(GetString(e.get_object(), "clusterName").value_or(""));
      if (cluster.empty()) {
        out.push_back(FieldRequired(Child(at, "clusterName"), ""));
      } else if (Contains(seen, cluster)) {
        out.push_back(FieldDuplicate(Child(at, "clusterName"), json::string(cluster)));
      }
      seen.push_back(cluster);
      if (const json::object* hard = GetObject(e.get_object(), "hard")) {
        ValidateQuotaResourceList(*hard, Child(at, "hard"), out);
        // As Karmada's webhook: what is assigned is a part of the overall.
        for (const auto& [name, q] : *hard) {
          std::optional<int64_t> milli = QuantityValue(q, 1000);
          if (!milli) continue;
          const json::value* limit =
              o != nullptr && o->is_object() ? o->get_object().if_contains(name) : nullptr;
          if (limit == nullptr) {
            out.push_back(FieldInvalid(Key(Child(at, "hard"), name), q,
                                       "assignment resourceName is not exist in overall"));
          } else {
            assigned[std::string(name)] += *milli;
          }
        }
      } else {
        out.push_back(FieldRequired(Child(at, "hard"), ""));
      }
    }
  }
  for (const auto& [name, total] : assigned) {
    const json::value& limit = o->get_object().at(name);
    std::optional<int64_t> overall = QuantityValue(limit, 1000);
    if (overall && *overall < total) {
      out.push_back(
          FieldInvalid(Key("spec.overall", name), limit, "overall is less than assignments"));
    }
  }
  return out;
}

namespace {

std::string NotActedOn(std::string_view field) {
  return std::string(field) + " is kept but not acted on by this federation yet (docs/policies.md)";
}

bool Set(const json::object& o, std::string_view path) {
  const json::value* v = Find(o, path);
  if (v == nullptr || v->is_null()) return false;
  if (v->is_array()) return !v->get_array().empty();
  if (v->is_object()) return !v->get_object().empty();
  if (v->is_bool()) return v->get_bool();
  if (v->is_string()) return !v->get_string().empty();
  return true;
}

}  // namespace

namespace {

const json::object& EmptyIfAbsent(const json::object& o, std::string_view key) {
  static const json::object kEmpty;
  const json::object* v = GetObject(o, key);
  return v != nullptr ? *v : kEmpty;
}

}  // namespace

std::vector<std::string> PropagationWarnings(const json::object& obj) {
  std::vector<std::string> out;
  for (const char* field :
       {"spec.association", "spec.dependentOverrides", "spec.failover", "spec.activationPreference",
        "spec.suspension", "spec.schedulePriority", "spec.placement.workloadAffinity"}) {
    if (Set(obj, field)) out.push_back(NotActedOn(field));
  }
  // Fields of array elements, warned once however many elements set them.
  for (const auto& [array, field] :
       {std::pair{"spec.placement.spreadConstraints", "spreadByLabel"},
        std::pair{"spec.placement.clusterAffinities", "overflowAffinities"}}) {
    const json::value* list = Find(obj, array);
    if (list == nullptr || !list->is_array()) continue;
    for (const json::value& e : list->get_array()) {
      if (e.is_object() && Set(e.get_object(), field)) {
        out.push_back(NotActedOn(std::string(array) + "[]." + field));
        break;
      }
    }
  }
  std::string scheduler = StringAt(obj, "spec.schedulerName");
  if (!scheduler.empty() && scheduler != "default-scheduler") {
    out.push_back(NotActedOn("spec.schedulerName other than default-scheduler"));
  }
  return out;
}

std::vector<std::string> OverrideWarnings(const json::object& obj) {
  // The copies of HPAs hold the federation's shares of minReplicas and
  // maxReplicas; they take no overrides (docs/policies.md).
  const json::array* selectors = GetArray(EmptyIfAbsent(obj, "spec"), "resourceSelectors");
  bool hpas = selectors == nullptr || selectors->empty();
  for (const json::value& s : selectors ? *selectors : json::array()) {
    if (s.is_object() &&
        GetString(s.get_object(), "kind").value_or("") == "HorizontalPodAutoscaler") {
      hpas = true;
    }
  }
  if (!hpas) return {};
  return {
      "overrides do not apply to the member copies of HorizontalPodAutoscalers (their "
      "minReplicas and maxReplicas are the federation's shares); those this policy selects "
      "keep the federation's object as it is (docs/policies.md)"};
}

std::vector<std::string> FederatedResourceQuotaWarnings(const json::object& obj) {
  std::vector<std::string> out;
  if (const json::value* overall = Find(obj, "spec.overall");
      overall != nullptr && overall->is_object()) {
    for (const auto& [name, quantity] : overall->get_object()) {
      if (CountedResource(name).empty()) {
        out.push_back(NotActedOn("spec.overall[" + std::string(name) + "]"));
      }
    }
  }
  return out;
}

void DefaultPropagation(json::object& obj, bool namespaced) {
  json::object& spec = EnsureObject(obj, "spec");
  auto set_if_absent = [](json::object& o, std::string_view key, json::value v) {
    if (!o.contains(key)) o[key] = std::move(v);
  };
  set_if_absent(spec, "conflictResolution", "Abort");
  set_if_absent(spec, "preemption", "Never");
  set_if_absent(spec, "priority", 0);
  set_if_absent(spec, "schedulerName", "default-scheduler");
  if (json::value* p = spec.if_contains("placement"); p != nullptr && p->is_object()) {
    if (json::value* rs = p->get_object().if_contains("replicaScheduling");
        rs != nullptr && rs->is_object()) {
      set_if_absent(rs->get_object(), "replicaSchedulingType", "Divided");
    }
  }
  std::string_view ns = Namespace(obj);
  if (ns.empty() || !namespaced) return;
  if (json::value* s = spec.if_contains("resourceSelectors"); s != nullptr && s->is_array()) {
    for (json::value& sel : s->get_array()) {
      if (sel.is_object() && !sel.get_object().contains("namespace")) {
        sel.get_object()["namespace"] = ns;
      }
    }
  }
}

}  // namespace flotilla::api::policy
