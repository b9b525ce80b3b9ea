// The federation at a glance (overview.h).
#include "federation/overview/overview.h"

#include <algorithm>
#include <tuple>

#include "api/conditions.h"
#include "api/federated.h"
#include "api/hpa/quantity.h"
#include "api/resources.h"
#include "api/views.h"

namespace flotilla::federation::overview {
namespace {

std::string ConditionField(const json::object* c, std::string_view key) {
  return c == nullptr ? "" : std::string(GetString(*c, key).value_or(""));
}

std::optional<int64_t> Quantity(const json::object& obj, std::string_view path, int64_t scale) {
  const json::value* q = Find(obj, path);
  if (q == nullptr) return std::nullopt;
  return api::QuantityValue(*q, scale);
}

std::optional<int64_t> OptionalInt(const json::object& obj, std::string_view path) {
  const json::value* v = Find(obj, path);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  return IntAt(obj, path);
}

// The object a breakdown annotation holds, {} when absent or not JSON.
json::object Breakdown(const json::object& obj, std::string_view annotation) {
  std::string_view text = api::ObjectView(obj).annotation(annotation);
  if (text.empty()) return {};
  auto doc = ParseJsonObject(text);
  return doc.ok() ? *doc : json::object{};
}

// The overall rollout from the clusters': the worst state wins.
std::string OverallRollout(const WorkloadInfo& w) {
  auto any = [&](const char* state) {
    return std::any_of(w.cells.begin(), w.cells.end(),
                       [&](const auto& c) { return c.second.rollout == state; });
  };
  if (any("failed")) return "failed";
  if (any("paused")) return "paused";
  if (!w.updating.empty() || !w.waiting.empty()) return "progressing";
  return "complete";
}

void AddHpa(WorkloadInfo& w, const json::object& hpa) {
  w.hpa = api::ObjectView(hpa).name();
  w.hpa_min = OptionalInt(hpa, "spec.minReplicas").value_or(1);
  w.hpa_max = OptionalInt(hpa, "spec.maxReplicas");
  const json::object breakdown = Breakdown(hpa, api::kHpaStatusAnnotation);
  const json::value* clusters = breakdown.if_contains("clusters");
  if (clusters == nullptr || !clusters->is_object()) return;
  for (const auto& [name, v] : clusters->get_object()) {
    if (!v.is_object()) continue;
    Cell& cell = w.cells[std::string(name)];
    cell.min_replicas = GetInt(v.get_object(), "minReplicas");
    cell.max_replicas = GetInt(v.get_object(), "maxReplicas");
  }
}

json::value Optional(const std::optional<int64_t>& v) {
  return v ? json::value(*v) : json::value(nullptr);
}

}  // namespace

ClusterInfo ClusterInfoOf(const json::object& cluster) {
  ClusterInfo c;
  api::ClusterView view(cluster);
  c.name = view.name();
  const json::object* ready = api::ConditionOf(cluster, "Ready");
  const json::object* offline = api::ConditionOf(cluster, "Offline");
  std::string status = ConditionField(ready, "status");
  if (status == "True") {
    c.health = "Ready";
  } else if (status == "False") {
    c.health = ConditionField(offline, "status") == "True" ? "Offline" : "NotReady";
    c.message = ConditionField(ready, "message");
  } else {
    c.health = "Unknown";
  }
  c.scheduling = view.draining() ? "Draining" : view.cordoned() ? "Cordoned" : "Schedulable";
  c.region = view.region();
  c.zones = StringsAt(cluster, "status.zones");
  c.version = view.kubernetes_version();

  c.nodes = OptionalInt(cluster, "status.nodeSummary.totalNum");
  c.ready_nodes = OptionalInt(cluster, "status.nodeSummary.readyNum");
  c.cpu_allocatable = Quantity(cluster, "status.resourceSummary.allocatable.cpu", 1000);
  c.cpu_allocated = Quantity(cluster, "status.resourceSummary.allocated.cpu", 1000);
  c.memory_allocatable = Quantity(cluster, "status.resourceSummary.allocatable.memory", 1);
  c.memory_allocated = Quantity(cluster, "status.resourceSummary.allocated.memory", 1);
  c.pods_allocatable = Quantity(cluster, "status.resourceSummary.allocatable.pods", 1);
  c.pods_allocated = Quantity(cluster, "status.resourceSummary.allocated.pods", 1);
  c.federated_objects = OptionalInt(cluster, "status.federatedObjects");
  c.unsupported = StringsAt(cluster, "status.unsupportedKinds");
  return c;
}

bool IsShadow(const json::object& replicaset) {
  return api::ObjectView(replicaset).annotation(api::kShadowReplicaSetAnnotation) == "true";
}

WorkloadInfo WorkloadInfoOf(const json::object& obj, const json::object* hpa,
                            std::string_view breakdown_annotation) {
  WorkloadInfo w;
  api::WorkloadView view(obj);
  w.kind = view.kind();
  w.ns = view.ns();
  w.name = view.name();
  w.desired = view.replicas();
  w.ready = view.ready_replicas();
  if (w.kind == "DaemonSet") {  // a pod per node: the nodes that should run one
    w.desired = IntAt(obj, "status.desiredNumberScheduled", 0);
    w.ready = IntAt(obj, "status.numberReady", 0);
  } else if (w.kind == "Job") {  // completions, and those that succeeded
    w.desired = IntAt(obj, "spec.completions", IntAt(obj, "spec.parallelism", 1));
    w.ready = IntAt(obj, "status.succeeded", 0);
  } else if (w.kind == "PodDisruptionBudget") {  // healthy pods the budgets want, and have
    w.desired = IntAt(obj, "status.desiredHealthy", 0);
    w.ready = IntAt(obj, "status.currentHealthy", 0);
  }
  const json::object breakdown =
      breakdown_annotation.empty() ? json::object{} : Breakdown(obj, breakdown_annotation);
  const json::value* clusters = breakdown.if_contains("clusters");
  if (clusters != nullptr && clusters->is_object()) {
    for (const auto& [key, v] : clusters->get_object()) {
      if (!v.is_object()) continue;
      std::string name(key);
      const json::object& b = v.get_object();
      Cell& cell = w.cells[name];
      cell.planned = GetInt(b, "planned").value_or(0);
      cell.ready = GetInt(b, "ready").value_or(0);
      cell.rollout = std::string(GetString(b, "rollout").value_or(""));
      if (const json::value* r = b.if_contains("reachable"); r && r->is_bool()) {
        cell.reachable = r->get_bool();
      }
      if (cell.rollout == "updating" || cell.rollout == "failed") w.updating.push_back(name);
      if (cell.rollout == "complete") w.done.push_back(name);
      if (cell.rollout == "waiting" || cell.rollout == "paused") w.waiting.push_back(name);
    }
  }
  if (w.kind == "Ingress" || w.kind == "PersistentVolumeClaim") {
    // Copies, and those served (an address) or Bound.
    w.desired = w.ready = 0;
    for (const auto& [cluster, cell] : w.cells) {
      w.desired += cell.planned;
      w.ready += cell.ready;
    }
  }
  if (w.kind == "Deployment" || w.kind == "StatefulSet" || w.kind == "DaemonSet") {
    w.rollout = OverallRollout(w);
  }
  if (hpa != nullptr) AddHpa(w, *hpa);
  std::string_view affinity = view.annotation(api::kLocationAffinityAnnotation);
  w.affinity = affinity.empty() ? std::string_view(api::kStrictlyDecoupled) : affinity;
  w.application = view.label(api::kApplicationLabel);

  return w;
}

Overview Build(const std::vector<json::object>& clusters,
               const std::vector<json::object>& workloads, const std::vector<json::object>& hpas,
               const BreakdownAnnotations& breakdowns) {
  Overview out;
  for (const json::object& c : clusters) out.clusters.push_back(ClusterInfoOf(c));
  std::sort(out.clusters.begin(), out.clusters.end(),
            [](const ClusterInfo& a, const ClusterInfo& b) { return a.name < b.name; });
  for (const json::object& w : workloads) {
    api::ObjectView workload(w);
    if (workload.kind() == "ReplicaSet" && IsShadow(w)) continue;
    const json::object* scaler = nullptr;
    for (const json::object& h : hpas) {
      api::HpaView hpa(h);
      if (hpa.ns() == workload.ns() && hpa.target_kind() == workload.kind() &&
          hpa.target_name() == workload.name()) {
        scaler = &h;
      }
    }
    auto breakdown = breakdowns.find(workload.kind());
    out.workloads.push_back(
        WorkloadInfoOf(w, scaler, breakdown == breakdowns.end() ? "" : breakdown->second));
  }
  std::sort(out.workloads.begin(), out.workloads.end(),
            [](const WorkloadInfo& a, const WorkloadInfo& b) {
              return std::tie(a.ns, a.name, a.kind) < std::tie(b.ns, b.name, b.kind);
            });
  return out;
}

json::object ToJson(const ClusterInfo& c) {
  json::array zones(c.zones.begin(), c.zones.end());
  return {
      {"name", c.name},
      {"health", c.health},
      {"message", c.message},
      {"scheduling", c.scheduling},
      {"region", c.region},
      {"zones", std::move(zones)},
      {"kubernetesVersion", c.version},
      {"nodes", Optional(c.nodes)},
      {"readyNodes", Optional(c.ready_nodes)},
      {"cpu",
       {{"allocatable", c.cpu_allocatable ? json::value(api::FormatMilliCpu(*c.cpu_allocatable))
                                          : json::value(nullptr)},
        {"allocated", c.cpu_allocated ? json::value(api::FormatMilliCpu(*c.cpu_allocated))
                                      : json::value(nullptr)}}},
      {"memory",
       {{"allocatable", c.memory_allocatable ? json::value(api::FormatBytes(*c.memory_allocatable))
                                             : json::value(nullptr)},
        {"allocated", c.memory_allocated ? json::value(api::FormatBytes(*c.memory_allocated))
                                         : json::value(nullptr)}}},
      {"pods",
       {{"allocatable", Optional(c.pods_allocatable)}, {"allocated", Optional(c.pods_allocated)}}},
      {"federatedObjects", Optional(c.federated_objects)},
      {"unsupportedKinds", json::array(c.unsupported.begin(), c.unsupported.end())}};
}

json::object ToJson(const WorkloadInfo& w) {
  json::object cells;
  for (const auto& [name, c] : w.cells) {
    json::object cell{{"planned", c.planned}, {"ready", c.ready}, {"reachable", c.reachable}};
    if (!c.rollout.empty()) cell["rollout"] = c.rollout;
    if (c.min_replicas) cell["minReplicas"] = *c.min_replicas;
    if (c.max_replicas) cell["maxReplicas"] = *c.max_replicas;
    cells[name] = std::move(cell);
  }
  json::object out{{"kind", w.kind},           {"namespace", w.ns},
                   {"name", w.name},           {"replicas", w.desired},
                   {"readyReplicas", w.ready}, {"clusters", std::move(cells)},
                   {"affinity", w.affinity}};
  if (!w.rollout.empty()) {
    out["rollout"] = json::object{{"state", w.rollout},
                                  {"updating", json::array(w.updating.begin(), w.updating.end())},
                                  {"done", json::array(w.done.begin(), w.done.end())},
                                  {"waiting", json::array(w.waiting.begin(), w.waiting.end())}};
  }
  if (!w.hpa.empty()) {
    out["hpa"] = json::object{{"name", w.hpa},
                              {"minReplicas", Optional(w.hpa_min)},
                              {"maxReplicas", Optional(w.hpa_max)}};
  }
  if (!w.application.empty()) out["application"] = w.application;
  return out;
}

}  // namespace flotilla::federation::overview
