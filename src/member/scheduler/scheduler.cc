#include "member/scheduler/scheduler.h"

#include <algorithm>
#include <vector>

#include "base/log.h"
#include "base/mutex.h"
#include "member/object_util.h"
#include "member/scheduler/filters.h"

namespace flotilla::member {
namespace {

using scheduler::NodeUsage;
using scheduler::NodeVerdict;
using scheduler::Resources;

bool Terminal(const json::object& pod) {
  std::string phase = StringAt(pod, "status.phase");
  return phase == "Succeeded" || phase == "Failed";
}

bool Pending(const json::object& pod) {
  std::string scheduler = StringAt(pod, "spec.schedulerName");
  const json::value* gates = Find(pod, "spec.schedulingGates");
  bool gated = gates != nullptr && gates->is_array() && !gates->get_array().empty();
  return StringAt(pod, "spec.nodeName").empty() && !gated &&
         (scheduler.empty() || scheduler == "default-scheduler") &&
         StringAt(pod, "metadata.deletionTimestamp").empty() && !Terminal(pod);
}

// A pod whose requests occupy its node.
bool Occupies(const json::object& pod) {
  return !StringAt(pod, "spec.nodeName").empty() && !Terminal(pod);
}

bool Same(const json::object& a, const json::object& b, std::string_view path) {
  const json::value* x = Find(a, path);
  const json::value* y = Find(b, path);
  if (x == nullptr || y == nullptr) return x == y;
  return *x == *y;
}

std::string ReadyStatus(const json::object& node) {
  if (const json::value* c = Find(node, "status.conditions"); c && c->is_array()) {
    for (const json::value& e : c->get_array()) {
      if (e.is_object() && StringAt(e.get_object(), "type") == "Ready")
        return StringAt(e.get_object(), "status");
    }
  }
  return "";
}

// Whether a node change may let a pending pod fit (heartbeats do not).
bool SchedulingFactsChanged(const json::object& a, const json::object& b) {
  return !Same(a, b, "metadata.labels") || !Same(a, b, "spec") ||
         !Same(a, b, "status.allocatable") || ReadyStatus(a) != ReadyStatus(b);
}

const json::object* PodScheduledCondition(const json::object& pod) {
  if (const json::value* c = Find(pod, "status.conditions"); c && c->is_array()) {
    for (const json::value& e : c->get_array()) {
      if (e.is_object() && StringAt(e.get_object(), "type") == "PodScheduled")
        return &e.get_object();
    }
  }
  return nullptr;
}

}  // namespace

struct Scheduler::Choice {
  std::string node;        // empty: fits nowhere
  std::string pre_filter;  // a PreFilter's refusal: no node was tried
  std::vector<NodeVerdict> verdicts;
  Resources requested;
  Resources non_zero;
};

Scheduler::Scheduler(ControllerContext& ctx)
    : client_(ctx.client),
      clock_(ctx.clock),
      pods_(ctx.informers.For(kPods)),
      nodes_(ctx.informers.For(kNodes)),
      claims_(ctx.informers.For(kPersistentVolumeClaims)),
      classes_(ctx.informers.For(kStorageClasses)),
      events_(ctx.client, ctx.clock, runtime::EventSource{"default-scheduler", ""}) {
  controller_ = &ctx.manager.AddController(
      "scheduler", 1, [this](const std::string& key) { return Reconcile(key); });
  pods_.AddEventHandler(runtime::EventHandler{
      .on_add =
          [this](const runtime::ObjectPtr& pod) {
            Count(*pod);
            if (Pending(*pod)) controller_->queue().Add(runtime::ObjectKey(*pod));
          },
      .on_update = [this](const runtime::ObjectPtr& old_pod,
                          const runtime::ObjectPtr& new_pod) { OnPodUpdate(old_pod, new_pod); },
      .on_delete = [this](const runtime::ObjectPtr& pod) { OnPodDelete(pod); }});
  nodes_.AddEventHandler(runtime::EventHandler{
      .on_add = [this](const runtime::ObjectPtr&) { RetryUnschedulable(); },
      .on_update =
          [this](const runtime::ObjectPtr& old_node, const runtime::ObjectPtr& new_node) {
            if (SchedulingFactsChanged(*old_node, *new_node)) RetryUnschedulable();
          },
      .on_delete = nullptr});
  // A claim or class that comes or changes (bound, say) may let a pod
  // waiting for it be scheduled.
  runtime::EventHandler volumes{
      .on_add = [this](const runtime::ObjectPtr&) { RetryUnschedulable(); },
      .on_update = [this](const runtime::ObjectPtr&,
                          const runtime::ObjectPtr&) { RetryUnschedulable(); },
      .on_delete = nullptr};
  claims_.AddEventHandler(volumes);
  classes_.AddEventHandler(volumes);
}

void Scheduler::OnPodUpdate(const runtime::ObjectPtr& old_pod, const runtime::ObjectPtr& new_pod) {
  Count(*new_pod);
  std::string key = runtime::ObjectKey(*new_pod);
  if (Pending(*new_pod)) {
    // Our own status writes change nothing the scheduler reads.
    if (!Pending(*old_pod) || !Same(*old_pod, *new_pod, "spec")) controller_->queue().Add(key);
    return;
  }
  Forget(key);
  if (Occupies(*old_pod) && !Occupies(*new_pod)) RetryUnschedulable();
}

void Scheduler::OnPodDelete(const runtime::ObjectPtr& pod) {
  std::string key = runtime::ObjectKey(*pod);
  Forget(key);
  {
    MutexLock lock(mu_);
    Uncount(key);
  }
  if (Occupies(*pod)) RetryUnschedulable();
}

void Scheduler::Count(const json::object& pod) {
  std::string key = runtime::ObjectKey(pod);
  std::string uid = StringAt(pod, "metadata.uid");
  std::string node = Occupies(pod) ? StringAt(pod, "spec.nodeName") : "";
  MutexLock lock(mu_);
  auto it = counted_.find(key);
  if (it != counted_.end() && it->second.uid == uid && it->second.node == node) return;
  Uncount(key);
  if (node.empty()) return;
  Requests r{scheduler::PodRequests(pod), scheduler::NonZeroPodRequests(pod)};
  Requests& u = usage_[node];
  u.requested += r.requested;
  u.non_zero += r.non_zero;
  counted_.emplace(key, Counted{uid, node, r});
}

void Scheduler::Uncount(const std::string& key) {
  auto it = counted_.find(key);
  if (it == counted_.end()) return;
  auto u = usage_.find(it->second.node);
  u->second.requested -= it->second.requests.requested;
  u->second.non_zero -= it->second.requests.non_zero;
  if (u->second.requested.pods == 0) usage_.erase(u);
  counted_.erase(it);
}

void Scheduler::Forget(const std::string& key) {
  MutexLock lock(mu_);
  unschedulable_.erase(key);
}

void Scheduler::RetryUnschedulable() {
  MutexLock lock(mu_);
  ++capacity_changes_;
  for (const std::string& key : unschedulable_) controller_->queue().Add(key);
}

void Scheduler::PruneAssumed() {
  MutexLock lock(mu_);
  for (auto it = assumed_.begin(); it != assumed_.end();) {
    runtime::ObjectPtr pod = pods_.cache().Get(it->first);
    bool done = pod == nullptr || StringAt(*pod, "metadata.uid") != it->second.uid;
    if (!done && !StringAt(*pod, "spec.nodeName").empty()) {
      // Bound in the cache: counted on its node once its event was handled
      // (the cache shows it first), or holding nothing any more.
      auto c = counted_.find(it->first);
      done = (c != counted_.end() && c->second.uid == it->second.uid) || !Occupies(*pod);
    }
    it = done ? assumed_.erase(it) : std::next(it);
  }
}

Scheduler::Choice Scheduler::Choose(const json::object& pod) {
  Choice choice;
  choice.requested = scheduler::PodRequests(pod);
  choice.non_zero = scheduler::NonZeroPodRequests(pod);
  std::string ns = StringAt(pod, "metadata.namespace");
  choice.pre_filter = scheduler::ClaimsPreFilter(
      pod, [&](const std::string& name) { return claims_.lister().Get(ns, name); },
      [&](const std::string& name) { return classes_.lister().Get("", name); });
  if (!choice.pre_filter.empty()) {
    choice.verdicts.resize(nodes_.cache().Size());
    return choice;
  }
  std::vector<runtime::ObjectPtr> nodes = nodes_.cache().List();
  const size_t all = nodes.size();
  const size_t wanted = scheduler::FeasibleNodesToFind(all);
  MutexLock lock(mu_);
  // Under the lock the pod events count under: an assumed pod is counted
  // once, on its node or as assumed, however far the events have come.
  // PruneAssumed made the same check to forget assumed pods, but under an
  // earlier lock: a pod counted since is still assumed here.
  std::map<std::string, NodeUsage> assumed;
  for (const auto& [key, a] : assumed_) {
    auto c = counted_.find(key);
    if (c != counted_.end() && c->second.uid == a.uid) continue;
    assumed[a.node].requested += a.requested;
    assumed[a.node].non_zero_requested += a.non_zero;
  }
  // Every node in name order when all are looked at (ties: the first);
  // else from where the last search ended.
  const size_t start = wanted < all ? next_start_ % all : 0;
  size_t processed = 0, found = 0;
  int64_t best = -1;
  for (; processed < all && found < wanted; ++processed) {
    const json::object& node = *nodes[(start + processed) % all];
    std::string name = StringAt(node, "metadata.name");
    NodeUsage usage;
    if (auto u = usage_.find(name); u != usage_.end()) {
      usage.requested = u->second.requested;
      usage.non_zero_requested = u->second.non_zero;
    }
    if (auto a = assumed.find(name); a != assumed.end()) {
      usage.requested += a->second.requested;
      usage.non_zero_requested += a->second.non_zero_requested;
    }
    NodeVerdict verdict = scheduler::Filter(pod, choice.requested, node, usage);
    if (verdict.Fits()) {
      ++found;
      int64_t score = scheduler::Score(choice.non_zero, node, usage);
      if (score > best) best = score, choice.node = std::move(name);
    }
    choice.verdicts.push_back(std::move(verdict));
  }
  if (all > 0) next_start_ = (start + processed) % all;
  return choice;
}

StatusOr<runtime::Result> Scheduler::Reconcile(const std::string& key) {
  runtime::ObjectPtr pod = pods_.cache().Get(key);
  if (pod == nullptr || !Pending(*pod)) {
    Forget(key);
    return runtime::Result{};
  }
  PruneAssumed();
  uint64_t changes_seen = 0;
  {
    MutexLock lock(mu_);
    if (assumed_.contains(key)) return runtime::Result{};  // bound; the informer lags
    changes_seen = capacity_changes_;
  }
  Choice choice = Choose(*pod);
  if (!choice.node.empty()) {
    Status bound = Bind(*pod, choice.node, choice);
    if (!bound.ok()) return bound;
    return runtime::Result{};
  }
  Status marked = MarkUnschedulable(
      *pod, scheduler::FitErrorMessage(*pod, choice.verdicts, choice.pre_filter), changes_seen);
  if (!marked.ok()) return marked;
  return runtime::Result{.requeue_after = kRetryPeriod};
}

Status Scheduler::Bind(const json::object& pod, const std::string& node, const Choice& choice) {
  std::string ns = StringAt(pod, "metadata.namespace");
  std::string name = StringAt(pod, "metadata.name");
  std::string uid = StringAt(pod, "metadata.uid");
  json::object binding = {
      {"apiVersion", "v1"},
      {"kind", "Binding"},
      {"metadata", json::object{{"name", name}, {"namespace", ns}, {"uid", uid}}},
      {"target", json::object{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  auto result = client_.CreateSubresource(kPods, ns, name, "binding", binding);
  if (!result.ok()) {
    // Bound or deleted meanwhile: the informer brings the news.
    if (result.status().Is(Reason::kConflict) || result.status().Is(Reason::kNotFound)) {
      return Status::Ok();
    }
    return result.status();
  }
  {
    MutexLock lock(mu_);
    assumed_[ns + "/" + name] = Assumed{uid, node, choice.requested, choice.non_zero};
    unschedulable_.erase(ns + "/" + name);
  }
  events_.Event(pod, runtime::kEventTypeNormal, "Scheduled",
                "Successfully assigned " + ns + "/" + name + " to " + node);
  return Status::Ok();
}

Status Scheduler::MarkUnschedulable(const json::object& pod, const std::string& message,
                                    uint64_t changes_seen) {
  std::string ns = StringAt(pod, "metadata.namespace");
  std::string name = StringAt(pod, "metadata.name");
  {
    MutexLock lock(mu_);
    unschedulable_.insert(ns + "/" + name);
    // Capacity may have appeared while the pod was being placed.
    if (capacity_changes_ != changes_seen) controller_->queue().Add(ns + "/" + name);
  }
  events_.Event(pod, runtime::kEventTypeWarning, "FailedScheduling", message);
  const json::object* current = PodScheduledCondition(pod);
  std::string since = FormatRfc3339(clock_.Now());
  if (current != nullptr && StringAt(*current, "status") == "False") {
    if (StringAt(*current, "reason") == "Unschedulable" &&
        StringAt(*current, "message") == message) {
      return Status::Ok();
    }
    if (std::string t = StringAt(*current, "lastTransitionTime"); !t.empty()) since = t;
  }
  json::object condition = {{"type", "PodScheduled"},    {"status", "False"},
                            {"reason", "Unschedulable"}, {"message", message},
                            {"lastProbeTime", nullptr},  {"lastTransitionTime", since}};
  json::object patch = {{"status", json::object{{"conditions", json::array{condition}}}}};
  auto patched = client_.Patch(kPods, ns, name, client::PatchType::kStrategic,
                               json::serialize(patch), "status");
  if (!patched.ok() && !patched.status().Is(Reason::kNotFound)) return patched.status();
  return Status::Ok();
}

}  // namespace flotilla::member
