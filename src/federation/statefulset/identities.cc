// A federated StatefulSet's identities (identities.h).
#include "federation/statefulset/identities.h"

#include "api/federated.h"

namespace flotilla::federation::statefulset {
namespace {

json::object ObjectAt(const json::object& obj, std::string_view path) {
  const json::value* v = Find(obj, path);
  return v != nullptr && v->is_object() ? v->get_object() : json::object();
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
  json::object owner{{"apiVersion", "apps/v1"},
                     {"kind", "StatefulSet"},
                     {"name", StringAt(sts, "metadata.name")},
                     {"uid", StringAt(sts, "metadata.uid")},
                     {"controller", true},
                     {"blockOwnerDeletion", true}};
  json::object meta{{"name", pod.name},
                    {"namespace", StringAt(sts, "metadata.namespace")},
                    {"labels", json::object{{kStatefulSetLabel, StringAt(sts, "metadata.name")}}},
                    {"annotations", json::object{{api::kPlacementClusterAnnotation, pod.cluster}}},
                    {"ownerReferences", json::array{std::move(owner)}}};
  json::object spec{{"type", "LoadBalancer"},
                    {"selector", json::object{{kPodNameLabel, pod.name}}},
                    {"ports", std::move(kept)}};
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Service"},
                      {"metadata", std::move(meta)},
                      {"spec", std::move(spec)}};
}

bool ServiceNeedsUpdate(const json::object& existing, const json::object& desired) {
  json::object want = ObjectAt(desired, "spec");
  json::object have = ObjectAt(existing, "spec");
  for (const auto& [k, v] : want) {
    if (k == "ports") {
      // The server fills in targetPort and protocol; compare what was asked.
      const json::value* ports = have.if_contains("ports");
      if (ports == nullptr || !ports->is_array() ||
          ports->get_array().size() != v.get_array().size()) {
        return true;
      }
      for (size_t i = 0; i < v.get_array().size(); ++i) {
        for (const auto& [field, value] : v.get_array()[i].get_object()) {
          const json::value* h = ports->get_array()[i].is_object()
                                     ? ports->get_array()[i].get_object().if_contains(field)
                                     : nullptr;
          if (h == nullptr || *h != value) return true;
        }
      }
      continue;
    }
    const json::value* h = have.if_contains(k);
    if (h == nullptr || *h != v) return true;
  }
  for (const char* path : {"metadata.labels", "metadata.annotations"}) {
    json::object want_meta = ObjectAt(desired, path);
    json::object have_meta = ObjectAt(existing, path);
    for (const auto& [k, v] : want_meta) {
      const json::value* h = have_meta.if_contains(k);
      if (h == nullptr || *h != v) return true;
    }
  }
  const json::value* owners = Find(existing, "metadata.ownerReferences");
  return owners == nullptr || *owners != *Find(desired, "metadata.ownerReferences");
}

bool MidUpdate(const json::object& local) {
  return IntAt(local, "status.observedGeneration") != IntAt(local, "metadata.generation") ||
         StringAt(local, "status.currentRevision") != StringAt(local, "status.updateRevision") ||
         IntAt(local, "status.updatedReplicas") != IntAt(local, "status.replicas") ||
         IntAt(local, "status.readyReplicas") != IntAt(local, "spec.replicas");
}

}  // namespace flotilla::federation::statefulset
