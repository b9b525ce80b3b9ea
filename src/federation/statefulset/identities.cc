// A federated StatefulSet's identities (identities.h).
#include "federation/statefulset/identities.h"

#include "api/federated.h"
#include "api/owner.h"
#include "api/views.h"

namespace flotilla::federation::statefulset {
namespace {

// `have` holds every entry of `want` (null: none).
bool HoldsAll(const json::object* have, const json::object* want) {
  if (want == nullptr) return true;
  for (const auto& [k, v] : *want) {
    const json::value* h = have != nullptr ? have->if_contains(k) : nullptr;
    if (h == nullptr || *h != v) return false;
  }
  return true;
}

}  // namespace

std::string LocalName(const std::string& name, const std::string& cluster) {
  return name + "-" + cluster;
}

std::vector<StatefulPod> Pods(const std::string& name, const planner::ReplicaCounts& shares) {
  std::vector<StatefulPod> out;
  for (const auto& [cluster, n] : shares) {
    for (int64_t i = 0; i < n; ++i) {
      out.push_back({LocalName(name, cluster) + "-" + std::to_string(i), cluster});
    }
  }
  return out;
}

std::string ReplicaList(const std::vector<StatefulPod>& pods) {
  std::string out;
  for (const StatefulPod& p : pods) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

json::object LoadBalancerService(const json::object& sts, const StatefulPod& pod,
                                 const json::array& ports) {
  json::array kept;
  for (const json::value& p : ports) {
    if (!p.is_object()) continue;
    json::object port;
    for (const char* field : {"name", "port", "targetPort", "protocol"}) {
      if (const json::value* v = p.get_object().if_contains(field)) port[field] = *v;
    }
    kept.push_back(std::move(port));
  }
  api::ObjectView set(sts);
  json::object meta{
      {"name", pod.name},
      {"namespace", set.ns()},
      {"labels", json::object{{kStatefulSetLabel, set.name()}}},
      {"annotations", json::object{{api::kPlacementClusterAnnotation, pod.cluster}}},
      {"ownerReferences", json::array{api::NewControllerRef(sts, "apps/v1", "StatefulSet")}}};
  json::object spec{{"type", "LoadBalancer"},
                    {"selector", json::object{{kPodNameLabel, pod.name}}},
                    {"ports", std::move(kept)}};
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Service"},
                      {"metadata", std::move(meta)},
                      {"spec", std::move(spec)}};
}

bool ServiceNeedsUpdate(const json::object& existing, const json::object& desired) {
  static const json::object kNone;
  const json::object* want_spec = GetObject(desired, "spec");
  const json::object* have_spec = GetObject(existing, "spec");
  for (const auto& [k, v] : want_spec != nullptr ? *want_spec : kNone) {
    const json::value* h = have_spec != nullptr ? have_spec->if_contains(k) : nullptr;

    if (k == "ports") {
      // The server fills in targetPort and protocol; compare what was asked.
      if (h == nullptr || !h->is_array() || h->get_array().size() != v.get_array().size()) {
        return true;
      }
      for (size_t i = 0; i < v.get_array().size(); ++i) {
        const json::value& port = h->get_array()[i];
        if (!HoldsAll(port.is_object() ? &port.get_object() : nullptr,
                      &v.get_array()[i].get_object())) {
          return true;
        }
      }
      continue;
    }
    if (h == nullptr || *h != v) return true;
  }

  api::ObjectView have(existing), want(desired);
  if (!HoldsAll(have.labels(), want.labels()) ||
      !HoldsAll(have.annotations(), want.annotations())) {
    return true;
  }
  const json::array* owners = have.owner_references();
  const json::array* wanted = want.owner_references();
  return owners == nullptr || wanted == nullptr || *owners != *wanted;
}

bool MidUpdate(const json::object& local) {
  api::WorkloadView v(local);
  return v.observed_generation() != v.generation() || v.current_revision() != v.update_revision() ||
         v.updated_replicas() != v.status_replicas() || v.ready_replicas() != v.replicas();
}

}  // namespace flotilla::federation::statefulset
