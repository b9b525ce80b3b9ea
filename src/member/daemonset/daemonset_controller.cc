// The member's DaemonSet controller (daemonset_controller.h).
#include "member/daemonset/daemonset_controller.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "api/owner.h"
#include "api/patch.h"
#include "member/object_util.h"
#include "member/replicaset/controller_ref.h"
#include "member/replicaset/pod_util.h"
#include "member/scheduler/filters.h"

namespace flotilla::member {
namespace {

constexpr std::string_view kApiVersion = "apps/v1";
constexpr std::string_view kKind = "DaemonSet";
// The label a pod carries with its revision's hash (apps.DefaultDaemonSetUniqueLabelKey).
constexpr std::string_view kRevisionHashLabel = "controller-revision-hash";
// Where runtime::ControllerHistory's revisions keep their hash.
constexpr std::string_view kHistoryHashLabel = "controller.kubernetes.io/hash";

const json::object* ObjectAt(const json::object& obj, std::string_view path) {
  const json::value* v = Find(obj, path);
  return v != nullptr && v->is_object() ? &v->get_object() : nullptr;
}

std::string Label(const json::object& obj, std::string_view key) {
  const json::object* labels = ObjectAt(obj, "metadata.labels");
  if (labels == nullptr) return "";
  return std::string(GetString(*labels, key).value_or(""));
}

bool Terminating(const json::object& pod) { return !MetaAt(pod, "deletionTimestamp").empty(); }

// The node a DaemonSet pod runs on, or is made for (its required node
// affinity on metadata.name, before the scheduler binds it).
std::string TargetNode(const json::object& pod) {
  std::string node = StringAt(pod, "spec.nodeName");
  if (!node.empty()) return node;
  const json::object* required =
      ObjectAt(pod, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution");
  if (required == nullptr) return "";
  for (const json::object* term : ObjectsAt(*required, "nodeSelectorTerms")) {
    for (const json::object* f : ObjectsAt(*term, "matchFields")) {
      const json::array* values = GetArray(*f, "values");
      if (StringAt(*f, "key") == "metadata.name" && StringAt(*f, "operator") == "In" && values &&
          values->size() == 1 && values->at(0).is_string()) {
        return std::string(values->at(0).get_string());
      }
    }
  }
  return "";
}

// Oldest first; of the same age, running before pending
// (podByCreationTimestampAndPhase).
void SortOldestFirst(std::vector<runtime::ObjectPtr>& pods) {
  std::stable_sort(pods.begin(), pods.end(), [](const auto& a, const auto& b) {
    std::string ta = MetaAt(*a, "creationTimestamp");
    std::string tb = MetaAt(*b, "creationTimestamp");
    if (ta != tb) return ta < tb;
    bool ra = StringAt(*a, "status.phase") == "Running";
    bool rb = StringAt(*b, "status.phase") == "Running";
    if (ra != rb) return ra;
    return MetaAt(*a, "name") < MetaAt(*b, "name");
  });
}

// An intstr of spec.updateStrategy.rollingUpdate, scaled to `total`
// (rounded up, as intstr.GetScaledValueFromIntOrPercent with roundUp).
int64_t Scaled(const json::object& ds, std::string_view field, int64_t total) {
  const json::value* v = Find(ds, "spec.updateStrategy.rollingUpdate." + std::string(field));
  if (v == nullptr) return 0;
  if (v->is_int64()) return v->get_int64();
  if (!v->is_string()) return 0;
  std::string s(v->get_string());
  if (s.empty() || s.back() != '%') return std::atoll(s.c_str());
  int64_t percent = std::atoll(s.c_str());
  return (percent * total + 99) / 100;
}

// The tolerations every DaemonSet pod gets (AddOrUpdateDaemonPodTolerations).
void AddDaemonTolerations(json::object& spec) {
  json::value& v = spec["tolerations"];
  if (!v.is_array()) v = json::array();
  json::array& tolerations = v.get_array();
  auto add = [&](std::string_view key, std::string_view effect) {
    json::object t{{"key", key}, {"operator", "Exists"}, {"effect", effect}};
    for (const json::value& existing : tolerations) {
      if (existing == json::value(t)) return;
    }
    tolerations.push_back(std::move(t));
  };
  add("node.kubernetes.io/not-ready", "NoExecute");
  add("node.kubernetes.io/unreachable", "NoExecute");
  add("node.kubernetes.io/disk-pressure", "NoSchedule");
  add("node.kubernetes.io/memory-pressure", "NoSchedule");
  add("node.kubernetes.io/pid-pressure", "NoSchedule");
  add("node.kubernetes.io/unschedulable", "NoSchedule");
  const json::value* host_network = spec.if_contains("hostNetwork");
  if (host_network != nullptr && host_network->is_bool() && host_network->get_bool()) {
    add("node.kubernetes.io/network-unavailable", "NoSchedule");
  }
}

// What of a node decides where daemon pods run.
bool PlacementChanged(const json::object& a, const json::object& b) {
  for (std::string_view path : {"metadata.labels", "spec.taints", "spec.unschedulable"}) {
    const json::value* va = Find(a, path);
    const json::value* vb = Find(b, path);
    if ((va == nullptr) != (vb == nullptr) || (va != nullptr && *va != *vb)) return true;
  }
  auto ready = [](const json::object& node) {
    for (const json::object* c : ObjectsAt(node, "status.conditions")) {
      if (StringAt(*c, "type") == "Ready") return StringAt(*c, "status");
    }
    return std::string();
  };
  return ready(a) != ready(b);
}

}  // namespace

// What one reconcile of one DaemonSet works on and decides.
struct DaemonSetController::Pass {
  json::object ds;
  std::string hash;  // the update revision's
  // Its pod of that revision, not yet bound to a node: what the placement
  // checks read (its template's node affinity and tolerations).
  json::object pod;
  TimePoint now;
  int64_t min_ready = 0;
  struct Node {
    std::string name;
    bool should_run = false;
    bool should_continue = false;
    std::vector<runtime::ObjectPtr> pods;  // oldest first
  };
  std::vector<Node> nodes;                                          // by name
  std::map<std::string, std::vector<runtime::ObjectPtr>> orphaned;  // pods on nodes gone
  std::vector<std::string> create;                                  // nodes that get a new pod
  std::vector<runtime::ObjectPtr> remove;                           // pods to delete
  std::vector<std::pair<std::string, std::string>> failed;          // pod, node

  bool Available(const json::object& pod) const { return IsPodAvailable(pod, min_ready, now); }
  bool Updated(const json::object& pod) const { return Label(pod, kRevisionHashLabel) == hash; }
};

DaemonSetController::DaemonSetController(ControllerContext& ctx)
    : client_(ctx.client),
      clock_(ctx.clock),
      events_(ctx.client, ctx.clock, runtime::EventSource{kControllerName, ""}),
      sets_(ctx.informers.For(kDaemonSets)),
      pods_(ctx.informers.For(kPods)),
      nodes_(ctx.informers.For(kNodes)),
      revisions_(ctx.informers.For(runtime::kControllerRevisions)),
      history_(ctx.client, revisions_, kDaemonSets, std::string(kKind)),
      expectations_(ctx.clock) {
  controller_ = &ctx.manager.AddController(
      "daemonset", 2, [this](const std::string& key) { return Reconcile(key); });
  runtime::EventHandler set_handler = controller_->EnqueueHandler();
  set_handler.on_delete = [this](const runtime::ObjectPtr& ds) {
    expectations_.Forget(runtime::ObjectKey(*ds));
  };
  sets_.AddEventHandler(std::move(set_handler));
  pods_.AddEventHandler(OwnedPodHandler(expectations_, controller_->queue(),
                                        [this](const json::object& pod) { return OwnerKey(pod); }));
  auto enqueue_all = [this] {
    for (const runtime::ObjectPtr& ds : sets_.cache().List()) {
      controller_->queue().Add(runtime::ObjectKey(*ds));
    }
  };
  nodes_.AddEventHandler(runtime::EventHandler{
      .on_add = [enqueue_all](const runtime::ObjectPtr&) { enqueue_all(); },
      .on_update =
          [enqueue_all](const runtime::ObjectPtr& old_node, const runtime::ObjectPtr& node) {
            if (PlacementChanged(*old_node, *node)) enqueue_all();
          },
      .on_delete = [enqueue_all](const runtime::ObjectPtr&) { enqueue_all(); }});
}

std::string DaemonSetController::OwnerKey(const json::object& pod) const {
  return ControllerKey(pod, kKind);
}

std::map<std::string, std::vector<runtime::ObjectPtr>> DaemonSetController::PodsByNode(
    const json::object& ds) const {
  std::map<std::string, std::vector<runtime::ObjectPtr>> out;
  for (runtime::ObjectPtr& pod :
       ControlledBy(pods_.lister(), MetaAt(ds, "namespace"), MetaAt(ds, "uid"))) {
    std::string node = TargetNode(*pod);
    out[node].push_back(std::move(pod));
  }
  for (auto& [node, pods] : out) SortOldestFirst(pods);
  return out;
}

json::object DaemonSetController::NewPod(const json::object& ds, const std::string& hash) const {
  json::object meta = {
      {"generateName", MetaAt(ds, "name") + "-"},
      {"namespace", MetaAt(ds, "namespace")},
      {"ownerReferences", json::array{api::NewControllerRef(ds, kApiVersion, kKind)}}};
  for (const char* field : {"labels", "annotations", "finalizers"}) {
    const json::value* v = Find(ds, std::string("spec.template.metadata.") + field);
    if (v != nullptr && (v->is_object() || v->is_array())) meta[field] = *v;
  }
  EnsureObject(meta, "labels")[kRevisionHashLabel] = hash;
  const json::object* template_spec = ObjectAt(ds, "spec.template.spec");
  json::object spec = template_spec != nullptr ? *template_spec : json::object();
  AddDaemonTolerations(spec);
  return json::object{
      {"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", std::move(meta)}, {"spec", spec}};
}

namespace {

// ReplaceDaemonSetPodNodeNameNodeAffinity: `pod` with a required node
// affinity on `node`'s name alone (the controller checked the template's),
// so that the scheduler binds it there.
json::object BoundTo(json::object pod, const std::string& node) {
  json::object term{
      {"matchFields", json::array{json::object{{"key", "metadata.name"},
                                               {"operator", "In"},
                                               {"values", json::array{json::string(node)}}}}}};
  EnsureObject(EnsureObject(EnsureObject(pod, "spec"), "affinity"),
               "nodeAffinity")["requiredDuringSchedulingIgnoredDuringExecution"] =
      json::object{{"nodeSelectorTerms", json::array{std::move(term)}}};
  return pod;
}

}  // namespace

// manage: a pod where one should run and none is; failed pods, pods where
// none should continue and surplus pods deleted.
void DaemonSetController::Manage(Pass& pass) const {
  bool surge = Scaled(pass.ds, "maxSurge", 1) > 0 &&
               StringAt(pass.ds, "spec.updateStrategy.type") == "RollingUpdate";
  for (const Pass::Node& node : pass.nodes) {
    if (node.should_run && node.pods.empty()) {
      pass.create.push_back(node.name);
      continue;
    }
    if (!node.should_continue) {
      for (const runtime::ObjectPtr& pod : node.pods) {
        if (!Terminating(*pod)) pass.remove.push_back(pod);
      }
      continue;
    }
    std::vector<runtime::ObjectPtr> running;
    for (const runtime::ObjectPtr& pod : node.pods) {
      if (Terminating(*pod)) continue;
      std::string phase = StringAt(*pod, "status.phase");
      if (phase == "Failed" || phase == "Succeeded") {
        pass.remove.push_back(pod);
        if (phase == "Failed") pass.failed.emplace_back(MetaAt(*pod, "name"), node.name);
        continue;
      }
      running.push_back(pod);
    }
    // One pod per node; while surging, the oldest updated one beside the
    // oldest old one.
    bool kept_updated = false;
    bool kept_old = false;
    for (size_t i = 0; i < running.size(); ++i) {
      bool updated = pass.Updated(*running[i]);
      bool keep = surge ? (updated ? !kept_updated : !kept_old) : i == 0;
      if (keep) {
        (updated ? kept_updated : kept_old) = true;
      } else {
        pass.remove.push_back(running[i]);
      }
    }
  }
  for (const auto& [node, pods] : pass.orphaned) {
    for (const runtime::ObjectPtr& pod : pods) {
      if (!Terminating(*pod)) pass.remove.push_back(pod);
    }
  }
}

// rollingUpdate (maxSurge 0) and updatedPodsOnNode surge (maxSurge > 0).
void DaemonSetController::RollingUpdate(Pass& pass) const {
  int64_t desired = 0;
  for (const Pass::Node& node : pass.nodes) desired += node.should_run ? 1 : 0;
  int64_t max_surge = Scaled(pass.ds, "maxSurge", desired);
  int64_t max_unavailable = Scaled(pass.ds, "maxUnavailable", desired);
  int64_t unavailable = 0;
  int64_t surging = 0;
  std::vector<runtime::ObjectPtr> replace_now, candidates;
  std::vector<std::string> create_now, create_candidates;
  for (const Pass::Node& node : pass.nodes) {
    if (node.pods.empty()) continue;
    runtime::ObjectPtr new_pod, old_pod;
    bool ok = true;
    for (const runtime::ObjectPtr& pod : node.pods) {
      if (Terminating(*pod)) continue;
      runtime::ObjectPtr& slot = pass.Updated(*pod) ? new_pod : old_pod;
      if (slot != nullptr) ok = false;  // manage prunes duplicates first
      slot = pod;
    }
    if (!ok) {
      ++unavailable;
      continue;
    }
    if (max_surge == 0) {
      if ((new_pod == nullptr) == (old_pod == nullptr)) {
        ++unavailable;  // manage creates or deletes here
      } else if (new_pod != nullptr) {
        if (!pass.Available(*new_pod)) ++unavailable;
      } else if (!pass.Available(*old_pod)) {
        replace_now.push_back(old_pod);
      } else if (unavailable < max_unavailable) {
        candidates.push_back(old_pod);
      }
      continue;
    }
    if (old_pod == nullptr) continue;
    if (new_pod == nullptr) {
      if (!pass.Available(*old_pod)) {
        create_now.push_back(node.name);
      } else if (surging < max_surge) {
        create_candidates.push_back(node.name);
      }
    } else if (pass.Available(*new_pod)) {
      pass.remove.push_back(old_pod);
    } else {
      ++surging;
    }
  }
  int64_t room = std::max<int64_t>(0, max_unavailable - unavailable);
  room = std::min<int64_t>(room, static_cast<int64_t>(candidates.size()));
  pass.remove.insert(pass.remove.end(), replace_now.begin(), replace_now.end());
  pass.remove.insert(pass.remove.end(), candidates.begin(), candidates.begin() + room);
  int64_t surge_room = std::max<int64_t>(0, max_surge - surging);
  surge_room = std::min<int64_t>(surge_room, static_cast<int64_t>(create_candidates.size()));
  pass.create.insert(pass.create.end(), create_now.begin(), create_now.end());
  pass.create.insert(pass.create.end(), create_candidates.begin(),
                     create_candidates.begin() + surge_room);
}

Status DaemonSetController::Apply(const std::string& key, const Pass& pass) {
  json::object ds_ref = WithKind(pass.ds, kApiVersion, kKind);
  for (const auto& [pod, node] : pass.failed) {
    events_.Event(ds_ref, runtime::kEventTypeWarning, "FailedDaemonPod",
                  "Found failed daemon pod " + MetaAt(pass.ds, "namespace") + "/" + pod +
                      " on node " + node + ", will try to kill it");
  }
  if (!pass.remove.empty()) {
    std::vector<std::string> keys;
    for (const runtime::ObjectPtr& p : pass.remove) keys.push_back(runtime::ObjectKey(*p));
    expectations_.ExpectDeletions(key, keys);
  }
  if (!pass.create.empty()) {
    expectations_.ExpectCreations(key, static_cast<int>(pass.create.size()));
  }
  Status first;
  for (const runtime::ObjectPtr& p : pass.remove) {
    Status s = client_.Delete(kPods, MetaAt(*p, "namespace"), MetaAt(*p, "name"));
    if (!s.ok() && !s.Is(Reason::kNotFound)) {
      expectations_.DeletionObserved(key, runtime::ObjectKey(*p));
      if (first.ok()) first = s;
      continue;
    }
    events_.Event(ds_ref, runtime::kEventTypeNormal, "SuccessfulDelete",
                  "Deleted pod: " + MetaAt(*p, "name"));
  }
  for (const std::string& node : pass.create) {
    auto created = client_.Create(kPods, MetaAt(pass.ds, "namespace"), BoundTo(pass.pod, node));
    if (!created.ok()) {
      expectations_.CreationObserved(key);
      events_.Event(ds_ref, runtime::kEventTypeWarning, "FailedCreate",
                    "Error creating: " + created.status().message());
      if (first.ok()) first = created.status();
      continue;
    }
    events_.Event(ds_ref, runtime::kEventTypeNormal, "SuccessfulCreate",
                  "Created pod: " + MetaAt(*created, "name"));
  }
  return first;
}

Status DaemonSetController::WriteStatus(const json::object& ds, const json::object& status) {
  const json::value* old_status = ds.if_contains("status");
  json::object merged =
      old_status != nullptr && old_status->is_object() ? old_status->get_object() : json::object();
  for (const auto& [k, v] : status) merged[k] = v;
  if (old_status != nullptr && *old_status == json::value(merged)) return Status::Ok();
  // A merge patch: the status is this controller's alone, and a patch does
  // not conflict with a write the cache has not shown yet.
  auto written =
      client_.Patch(kDaemonSets, MetaAt(ds, "namespace"), MetaAt(ds, "name"),
                    client::PatchType::kMerge, api::StatusMergePatch(old_status, merged), "status");
  if (!written.ok() && !written.status().Is(Reason::kNotFound)) return written.status();
  return Status::Ok();
}

StatusOr<runtime::Result> DaemonSetController::Reconcile(const std::string& key) {
  runtime::ObjectPtr cached = sets_.cache().Get(key);
  if (cached == nullptr || Terminating(*cached)) return runtime::Result{};
  StatusOr<api::LabelSelector> selector =
      api::LabelSelector::FromJson(Find(*cached, "spec.selector"), "spec.selector");
  if (!selector.ok() || selector->Empty()) return runtime::Result{};  // validation refuses these
  FLOTILLA_ASSIGN_OR_RETURN(runtime::Revisions revisions, history_.Sync(*cached));
  const json::object* rev_labels = ObjectAt(revisions.update, "metadata.labels");

  Pass pass;
  pass.ds = *cached;
  pass.hash = rev_labels ? std::string(GetString(*rev_labels, kHistoryHashLabel).value_or("")) : "";
  pass.pod = NewPod(pass.ds, pass.hash);
  pass.now = clock_.Now();
  pass.min_ready = IntAt(pass.ds, "spec.minReadySeconds", 0);
  // Before the pods are read (kube's order): a creation observed after the
  // read would make a stale read look complete, and pods be made twice.
  const bool satisfied = expectations_.Satisfied(key);
  std::map<std::string, std::vector<runtime::ObjectPtr>> by_node = PodsByNode(pass.ds);
  std::vector<runtime::ObjectPtr> nodes = nodes_.cache().List();
  std::sort(nodes.begin(), nodes.end(),
            [](const auto& a, const auto& b) { return MetaAt(*a, "name") < MetaAt(*b, "name"); });
  for (const runtime::ObjectPtr& n : nodes) {
    Pass::Node node{.name = MetaAt(*n, "name")};
    scheduler::DaemonPlacement placement = scheduler::PlaceDaemonPod(pass.pod, *n);
    node.should_run = placement.should_run;
    node.should_continue = placement.should_continue;
    auto it = by_node.find(node.name);
    if (it != by_node.end()) {
      node.pods = std::move(it->second);
      by_node.erase(it);
    }
    pass.nodes.push_back(std::move(node));
  }
  pass.orphaned = std::move(by_node);  // on nodes that are gone (or unnamed)

  // updateDaemonSetStatus, from what is there before this pass's writes.
  json::object status{{"observedGeneration", IntAt(pass.ds, "metadata.generation", 0)}};
  int64_t desired = 0, current = 0, misscheduled = 0, ready = 0, available = 0, updated = 0;
  Duration requeue = Duration::zero();
  std::set<std::string> live;
  for (const Pass::Node& node : pass.nodes) {
    for (const runtime::ObjectPtr& pod : node.pods) {
      live.insert(MetaAt(pass.ds, "name") + "-" + Label(*pod, kRevisionHashLabel));
    }
    if (!node.should_run) {
      misscheduled += node.pods.empty() ? 0 : 1;
      continue;
    }
    ++desired;
    if (node.pods.empty()) continue;
    ++current;
    const json::object& pod = *node.pods.front();
    if (IsPodReady(pod)) {
      ++ready;
      if (pass.Available(pod)) {
        ++available;
      } else if (std::optional<TimePoint> at = AvailableAt(pod, pass.min_ready)) {
        Duration wait = *at - pass.now;
        if (wait > Duration::zero() && (requeue == Duration::zero() || wait < requeue)) {
          requeue = wait;
        }
      }
    }
    if (pass.Updated(pod)) ++updated;
  }
  status["desiredNumberScheduled"] = desired;
  status["currentNumberScheduled"] = current;
  status["numberMisscheduled"] = misscheduled;
  status["numberReady"] = ready;
  status["numberAvailable"] = available;
  status["numberUnavailable"] = desired - available;
  status["updatedNumberScheduled"] = updated;

  Status applied;
  if (satisfied) {
    Manage(pass);
    if (pass.create.empty() && pass.remove.empty() &&
        StringAt(pass.ds, "spec.updateStrategy.type") == "RollingUpdate") {
      RollingUpdate(pass);
    }
    applied = Apply(key, pass);
  }
  FLOTILLA_RETURN_IF_ERROR(WriteStatus(pass.ds, status));
  FLOTILLA_RETURN_IF_ERROR(applied);
  FLOTILLA_RETURN_IF_ERROR(history_.Truncate(pass.ds, revisions, live));
  return runtime::Result{.requeue_after = requeue};
}

}  // namespace flotilla::member
