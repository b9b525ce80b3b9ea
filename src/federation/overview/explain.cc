// Why a federated object is where it is (explain.h).
#include "federation/overview/explain.h"

#include <algorithm>
#include <map>
#include <memory>
#include <sstream>

#include "api/annotations.h"
#include "api/policy/overrides.h"
#include "api/policy/policy.h"
#include "federation/common/cluster_selector.h"
#include "federation/common/placer.h"
#include "federation/common/policies.h"
#include "federation/overview/overview.h"

namespace flotilla::federation::overview {

namespace policy = api::policy;

namespace {

std::string PolicyName(const policy::PropagationPolicy& p) {
  return (p.cluster_scoped ? "ClusterPropagationPolicy " : "PropagationPolicy ") + p.Ref();
}

std::string SchedulingOf(const policy::PropagationPolicy& p) {
  const policy::ReplicaScheduling& s = p.scheduling;
  if (s.type == policy::ReplicaSchedulingType::kDuplicated) {
    return "Duplicated: every admitted cluster runs all the replicas";
  }
  if (s.division == policy::DivisionPreference::kAggregated) {
    return "Divided, Aggregated: as few clusters as hold the replicas, the most room first";
  }
  if (!s.static_weights.empty()) return "Divided, Weighted by the static weights";
  return "Divided, Weighted by each cluster's available replicas";
}

// Why the policy `p` admits `facts` or not; true when it does.
bool JudgeAffinity(const policy::PropagationPolicy& p, const policy::ClusterFacts& facts,
                   std::string& why) {
  if (p.affinity_groups.empty()) {
    const char* no = p.affinity.WhyNot(facts);
    why = no == nullptr ? "matches the clusterAffinity" : no;
    return no == nullptr;
  }
  for (size_t i = 0; i < p.affinity_groups.size(); ++i) {
    if (p.affinity_groups[i].affinity.WhyNot(facts) == nullptr) {
      why = "in cluster-affinity group " + p.affinity_groups[i].name + " (#" +
            std::to_string(i + 1) + ")";
      return true;
    }
  }
  why = "in no cluster-affinity group";
  return false;
}

std::vector<std::string> OverridesIn(const std::vector<policy::OverridePolicy>& ops,
                                     const policy::ObjectRef& ref,
                                     const policy::ClusterFacts& facts) {
  std::vector<const policy::OverridePolicy*> ptrs;
  for (const policy::OverridePolicy& p : ops) ptrs.push_back(&p);
  std::vector<std::string> out;
  for (const policy::AppliedOverriders& a : policy::OverridersFor(ptrs, ref, facts)) {
    std::string name = a.policy->cluster_scoped
                           ? "ClusterOverridePolicy " + a.policy->name
                           : "OverridePolicy " + a.policy->ns + "/" + a.policy->name;
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  }
  return out;
}

}  // namespace

Explanation Explain(const ExplainInputs& in) {
  const json::object& obj = *in.obj;
  Explanation e;
  std::string ns(StringViewAt(obj, "metadata.namespace"));
  std::string name(StringViewAt(obj, "metadata.name"));
  e.object = std::string(in.kind) + " " + (ns.empty() ? name : ns + "/" + name);

  std::vector<policy::PropagationPolicy> pps;
  for (const json::object& p : *in.propagation_policies) {
    if (StatusOr<policy::PropagationPolicy> read = policy::PropagationPolicy::FromObject(p);
        read.ok()) {
      pps.push_back(*std::move(read));
    }
  }
  std::vector<policy::OverridePolicy> ops;
  for (const json::object& p : *in.override_policies) {
    if (StatusOr<policy::OverridePolicy> read = policy::OverridePolicy::FromObject(p); read.ok()) {
      ops.push_back(*std::move(read));
    }
  }
  policy::ObjectRef ref = policy::ObjectRef::Of(obj, in.api_version, in.kind);

  const policy::PropagationPolicy* chosen = nullptr;
  std::optional<ClusterSelector> selector;
  if (PlacedByAnnotations(obj, in.preferences_annotation)) {
    e.placed_by = "its annotations";
    StatusOr<ClusterSelector> s = ClusterSelector::Of(obj);
    if (s.ok()) {
      selector = *std::move(s);
    } else {
      e.notes.push_back("its cluster selector does not parse: it is placed nowhere new");
    }
  } else {
    std::vector<const policy::PropagationPolicy*> ptrs;
    for (const policy::PropagationPolicy& p : pps) ptrs.push_back(&p);
    chosen = policy::SelectPolicy(ptrs, ref, policy::BindingOf(obj));
    e.placed_by = chosen != nullptr ? PolicyName(*chosen) : "no policy";
  }
  if (chosen != nullptr) {
    e.scheduling = SchedulingOf(*chosen);
    if (!chosen->affinity_groups.empty()) {
      e.notes.push_back(
          "the first cluster-affinity group whose ready clusters can hold it is used; a later "
          "group only while the groups before cannot");
    }
    if (chosen->Spreads()) {
      e.notes.push_back("its spread constraints (by " + chosen->SpreadField() +
                        ") choose among the admitted clusters");
    }
    if (chosen->propagate_deps == false) {
      e.notes.push_back(
          "what its pod template refers to goes only where its own placement sends it "
          "(propagateDeps: false)");
    }
  } else if (e.placed_by == "no policy") {
    e.scheduling = "every ready cluster, its replicas spread evenly";
  } else if (!in.preferences_annotation.empty() &&
             !api::AnnotationAt(obj, in.preferences_annotation).empty()) {
    e.scheduling = "by its " + std::string(in.preferences_annotation) + " annotation";
  }

  std::map<std::string, int64_t> planned;
  if (!in.breakdown_annotation.empty()) planned = LastPlanned(obj, in.breakdown_annotation);
  for (const json::object& cluster : *in.clusters) {
    ClusterInfo info = ClusterInfoOf(cluster);
    policy::ClusterFacts facts = policy::ClusterFacts::Of(cluster);
    ClusterVerdict v{.name = info.name, .health = info.health};
    if (chosen != nullptr) {
      v.admitted = JudgeAffinity(*chosen, facts, v.why);
      if (!chosen->scheduling.static_weights.empty() &&
          chosen->scheduling.type == policy::ReplicaSchedulingType::kDivided) {
        v.weight = chosen->StaticWeightOf(facts);
      }
      policy::TaintVerdict t =
          policy::JudgeTaints(policy::TaintsOf(cluster), chosen->tolerations, in.now);
      if (v.admitted && t.no_execute) {
        v.admitted = false;
        v.why = "a NoExecute taint the policy does not tolerate";
      } else if (v.admitted && t.no_schedule) {
        v.why += "; a NoSchedule taint the policy does not tolerate: nothing new goes there";
      }
    } else if (selector) {
      v.admitted = selector->Matches(cluster);
      v.why = v.admitted ? "its cluster selector admits it" : "its cluster selector does not";
    } else if (e.placed_by == "no policy") {
      v.admitted = true;
      v.why = "nothing restricts it";
    }
    if (v.admitted && info.health != "Ready") v.why += "; not ready: keeps what it runs";
    if (v.admitted && info.scheduling == "Draining") {
      v.why += "; draining: its replicas move to the other clusters";
    } else if (v.admitted && info.scheduling == "Cordoned" && chosen == nullptr) {
      v.why += "; cordoned: nothing new goes there";  // a policy sees it as a taint
    }
    if (auto it = planned.find(v.name); it != planned.end()) v.planned = it->second;
    v.overrides = OverridesIn(ops, ref, facts);
    e.clusters.push_back(std::move(v));
  }
  std::sort(e.clusters.begin(), e.clusters.end(),
            [](const ClusterVerdict& a, const ClusterVerdict& b) { return a.name < b.name; });
  return e;
}

std::string ExplainText(const Explanation& e) {
  std::ostringstream out;
  out << e.object << "\n";
  out << "Placed by:   " << e.placed_by << "\n";
  if (!e.scheduling.empty()) out << "Replicas:    " << e.scheduling << "\n";
  for (const std::string& n : e.notes) out << "Note:        " << n << "\n";
  std::vector<std::vector<std::string>> rows = {
      {"CLUSTER", "HEALTH", "ADMITTED", "WEIGHT", "PLANNED", "WHY", "OVERRIDES"}};
  for (const ClusterVerdict& v : e.clusters) {
    std::string overrides;
    for (const std::string& o : v.overrides) overrides += (overrides.empty() ? "" : ", ") + o;
    rows.push_back(
        {v.name, v.health, v.admitted ? "yes" : "no", v.weight ? std::to_string(*v.weight) : "-",
         v.planned ? std::to_string(*v.planned) : "-", v.why, overrides.empty() ? "-" : overrides});
  }
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  out << "\n";
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 3, ' ');
    }
    out << line << "\n";
  }
  return out.str();
}

json::object ToJson(const Explanation& e) {
  json::array clusters;
  for (const ClusterVerdict& v : e.clusters) {
    json::object c{
        {"name", v.name}, {"health", v.health}, {"admitted", v.admitted}, {"why", v.why}};
    if (v.weight) c["weight"] = *v.weight;
    if (v.planned) c["planned"] = *v.planned;
    json::array overrides;
    for (const std::string& o : v.overrides) overrides.push_back(json::string(o));
    c["overrides"] = std::move(overrides);
    clusters.push_back(std::move(c));
  }
  json::array notes;
  for (const std::string& n : e.notes) notes.push_back(json::string(n));
  return json::object{{"object", e.object},
                      {"placedBy", e.placed_by},
                      {"replicas", e.scheduling},
                      {"notes", std::move(notes)},
                      {"clusters", std::move(clusters)}};
}

}  // namespace flotilla::federation::overview
