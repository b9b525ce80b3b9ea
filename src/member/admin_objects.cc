// The admin endpoint's writes to a member's objects (admin.h): nodes added,
// resized and removed, pods failed or crashed. All through the member's
// client, as anyone else would write them.
#include <set>

#include "base/mutex.h"
#include "member/admin.h"
#include "member/object_util.h"

namespace flotilla::member {
namespace {

// What a resource quantity the admin takes may look like; the API server
// validates it for real when it is written.
Status CheckQuantity(const std::string& field, const std::string& value) {
  if (value.empty() || !std::isdigit(static_cast<unsigned char>(value[0])) ||
      value.find_first_not_of("0123456789.eEkKMGTPimun") != std::string::npos) {
    return Status::BadRequest(field + ": invalid quantity \"" + value + "\"");
  }
  return Status::Ok();
}

// A status merge patch setting capacity and allocatable of the resources
// `body` names (cpu, memory, pods); empty when it names none.
StatusOr<json::object> ResourcesPatch(const json::object& body) {
  json::object resources;
  for (const char* key : {"cpu", "memory", "pods"}) {
    const json::value* v = body.if_contains(key);
    if (v == nullptr) continue;
    std::string text = v->is_string()   ? std::string(v->get_string())
                       : v->is_int64()  ? std::to_string(v->get_int64())
                       : v->is_uint64() ? std::to_string(v->get_uint64())
                                        : "";
    FLOTILLA_RETURN_IF_ERROR(CheckQuantity(key, text));
    resources[key] = text;
  }
  if (resources.empty()) return json::object();
  return json::object{{"status", {{"capacity", resources}, {"allocatable", resources}}}};
}

json::object& Condition(json::object& status, std::string_view type) {
  json::value& conds = status["conditions"];
  if (!conds.is_array()) conds = json::array();
  for (json::value& c : conds.as_array()) {
    if (c.is_object() && FieldString(c.as_object(), "type") == type) return c.as_object();
  }
  conds.as_array().push_back(json::object{{"type", type}});
  return conds.as_array().back().as_object();
}

void SetCondition(json::object& status, std::string_view type, const std::string& reason,
                  const std::string& message, TimePoint now) {
  json::object& c = Condition(status, type);
  if (FieldString(c, "status") != "False") c["lastTransitionTime"] = FormatRfc3339(now);
  c["status"] = "False";
  c["reason"] = reason;
  c["message"] = message;
  if (!c.contains("lastProbeTime")) c["lastProbeTime"] = nullptr;
}

// Container names of a pod's spec.
std::vector<std::string> ContainerNames(const json::object& pod) {
  std::vector<std::string> names;
  const json::value* cs = Find(pod, "spec.containers");
  if (cs == nullptr || !cs->is_array()) return names;
  for (const auto& c : cs->as_array()) {
    if (c.is_object()) names.push_back(FieldString(c.as_object(), "name"));
  }
  return names;
}

// The pod's container status for `name`, created when missing.
json::object& ContainerStatus(json::object& status, const std::string& name) {
  json::value& list = status["containerStatuses"];
  if (!list.is_array()) list = json::array();
  for (json::value& c : list.as_array()) {
    if (c.is_object() && FieldString(c.as_object(), "name") == name) return c.as_object();
  }
  list.as_array().push_back(json::object{{"name", name}, {"restartCount", 0}, {"image", ""}});
  return list.as_array().back().as_object();
}

std::string Unready(const std::vector<std::string>& names) {
  std::string out = "containers with unready status: [";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? " " : "") + names[i];
  return out + "]";
}

}  // namespace

StatusOr<json::object> Admin::AddNode(const json::object& body) {
  FLOTILLA_ASSIGN_OR_RETURN(json::object resources, ResourcesPatch(body));
  MutexLock lock(nodes_mu_);
  FLOTILLA_ASSIGN_OR_RETURN(client::ObjectList nodes, client_.List(kNodes, "", {}));
  std::set<std::string> taken;
  for (const auto& n : nodes.items) taken.insert(FieldString(*GetObject(n, "metadata"), "name"));
  std::string name = FieldString(body, "name");
  int index = static_cast<int>(nodes.items.size());
  if (name.empty()) {
    for (index = 0;; ++index) {
      name = options_.cluster_name + "-node-" + std::to_string(index);
      if (taken.count(name) == 0) break;
    }
  }
  json::object labels{{"kubernetes.io/hostname", name}};
  if (!options_.zones.empty()) {
    labels["topology.kubernetes.io/zone"] =
        options_.zones[static_cast<size_t>(index) % options_.zones.size()];
  }
  if (!options_.region.empty()) labels["topology.kubernetes.io/region"] = options_.region;
  json::object node{{"apiVersion", "v1"},
                    {"kind", "Node"},
                    {"metadata", {{"name", name}, {"labels", labels}}},
                    {"spec", json::object()}};
  FLOTILLA_ASSIGN_OR_RETURN(json::object created, client_.Create(kNodes, "", node));
  if (resources.empty()) return created;
  // The nodes component registers the node (capacity and allocatable from
  // the member's template when absent): set ours once it has, so its
  // registration does not race ours. Bounded: without it, ours goes first.
  for (int i = 0; i < 50; ++i) {
    auto current = client_.Get(kNodes, "", name);
    if (current.ok() && Find(*current, "status.allocatable") != nullptr) break;
    clock_.SleepUntil(clock_.Now() + std::chrono::milliseconds(100));
  }
  return client_.Patch(kNodes, "", name, client::PatchType::kMerge, json::serialize(resources),
                       "status");
}

StatusOr<json::object> Admin::SetNode(const std::string& name, const json::object& body) {
  FLOTILLA_ASSIGN_OR_RETURN(json::object resources, ResourcesPatch(body));
  if (resources.empty()) return Status::BadRequest("name at least one of cpu, memory, pods");
  return client_.Patch(kNodes, "", name, client::PatchType::kMerge, json::serialize(resources),
                       "status");
}

StatusOr<json::object> Admin::RemoveNode(const std::string& name) {
  FLOTILLA_RETURN_IF_ERROR(client_.Delete(kNodes, "", name));
  // kube-controller-manager's pod garbage collector force-deletes the pods
  // of a node that is gone; their controllers then replace them.
  client::ListOptions on_node;
  on_node.field_selector = "spec.nodeName=" + name;
  FLOTILLA_ASSIGN_OR_RETURN(client::ObjectList pods, client_.List(kPods, "", on_node));
  client::DeleteOptions now;
  now.grace_period_seconds = 0;
  int deleted = 0;
  for (const auto& pod : pods.items) {
    const json::object& meta = *GetObject(pod, "metadata");
    Status s =
        client_.Delete(kPods, FieldString(meta, "namespace"), FieldString(meta, "name"), now);
    if (s.ok()) ++deleted;
    if (!s.ok() && !s.Is(Reason::kNotFound)) return s;
  }
  return json::object{{"node", name}, {"podsDeleted", deleted}};
}

StatusOr<json::object> Admin::ChangePodStatus(const std::string& ns, const std::string& name,
                                              const PodChange& change) {
  for (int attempt = 0;; ++attempt) {
    FLOTILLA_ASSIGN_OR_RETURN(json::object pod, client_.Get(kPods, ns, name));
    change(pod);
    auto updated = client_.UpdateStatus(kPods, ns, pod);
    if (updated.ok() || !updated.status().Is(Reason::kConflict) || attempt >= 5) return updated;
  }
}

StatusOr<json::object> Admin::FailPod(const std::string& ns, const std::string& name,
                                      const json::object& body) {
  std::string reason = FieldString(body, "reason");
  std::string message = FieldString(body, "message");
  if (reason.empty()) reason = "InjectedFailure";
  if (message.empty()) message = "The pod was failed by the member's admin endpoint";
  TimePoint now = clock_.Now();
  return ChangePodStatus(ns, name, [&](json::object& pod) {
    json::object& status = EnsureObject(pod, "status");
    status["phase"] = "Failed";
    status["reason"] = reason;
    status["message"] = message;
    std::vector<std::string> names = ContainerNames(pod);
    for (const auto& c : names) {
      json::object& cs = ContainerStatus(status, c);
      cs["ready"] = false;
      cs["started"] = false;
      cs["state"] = json::object{
          {"terminated",
           {{"exitCode", 137}, {"reason", "Error"}, {"finishedAt", FormatRfc3339(now)}}}};
    }
    SetCondition(status, "Ready", "PodFailed", "", now);
    SetCondition(status, "ContainersReady", "PodFailed", "", now);
  });
}

StatusOr<json::object> Admin::CrashPod(const std::string& ns, const std::string& name) {
  TimePoint now = clock_.Now();
  return ChangePodStatus(ns, name, [&](json::object& pod) {
    json::object& status = EnsureObject(pod, "status");
    std::string uid = FieldString(*GetObject(pod, "metadata"), "uid");
    std::vector<std::string> names = ContainerNames(pod);
    for (const auto& c : names) {
      json::object& cs = ContainerStatus(status, c);
      cs["restartCount"] = GetInt(cs, "restartCount").value_or(0) + 1;
      cs["ready"] = false;
      cs["started"] = false;
      cs["lastState"] = json::object{
          {"terminated",
           {{"exitCode", 1}, {"reason", "Error"}, {"finishedAt", FormatRfc3339(now)}}}};
      cs["state"] = json::object{{"waiting",
                                  {{"reason", "CrashLoopBackOff"},
                                   {"message", "back-off 10s restarting failed container=" + c +
                                                   " pod=" + name + "_" + ns + "(" + uid + ")"}}}};
    }
    SetCondition(status, "Ready", "ContainersNotReady", Unready(names), now);
    SetCondition(status, "ContainersReady", "ContainersNotReady", Unready(names), now);
  });
}

}  // namespace flotilla::member
