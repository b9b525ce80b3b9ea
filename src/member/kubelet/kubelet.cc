#include "member/kubelet/kubelet.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <set>
#include <vector>

#include "base/mutex.h"
#include "member/kubelet/pod_dependencies.h"
#include "member/object_util.h"

namespace flotilla::member {
namespace {

// Pods by spec.nodeName.
constexpr std::string_view kNodeNameIndex = "spec.nodeName";
// The pods by the objects they may wait for (kubelet::DependencyKeys).
constexpr std::string_view kDependencyIndex = "kubelet.dependencies";

std::string Ipv4(uint32_t v) {
  return std::to_string(v >> 24) + "." + std::to_string((v >> 16) & 255) + "." +
         std::to_string((v >> 8) & 255) + "." + std::to_string(v & 255);
}

// "10.244.0.0/16" -> network and number of addresses; false when malformed.
bool ParseCidr(const std::string& cidr, uint32_t* network, uint32_t* size) {
  unsigned a, b, c, d, prefix;
  char tail;
  if (std::sscanf(cidr.c_str(), "%u.%u.%u.%u/%u%c", &a, &b, &c, &d, &prefix, &tail) != 5 ||
      a > 255 || b > 255 || c > 255 || d > 255 || prefix < 8 || prefix > 30) {
    return false;
  }
  *size = 1u << (32 - prefix);
  *network = ((a << 24) | (b << 16) | (c << 8) | d) & ~(*size - 1);
  return true;
}

bool Terminal(const json::object& pod) {
  std::string phase = StringAt(pod, "status.phase");
  return phase == "Succeeded" || phase == "Failed";
}

bool Ready(const json::object& pod) {
  for (const json::object* c : ObjectsAt(pod, "status.conditions")) {
    if (StringAt(*c, "type") == "Ready") return StringAt(*c, "status") == "True";
  }
  return false;
}

}  // namespace

Kubelet::Kubelet(ControllerContext& ctx)
    : client_(ctx.client),
      clock_(ctx.clock),
      options_(ctx.options),
      pods_(ctx.informers.For(kPods)),
      nodes_(ctx.informers.For(kNodes)),
      config_maps_(ctx.informers.For(client::kConfigMaps)),
      secrets_(ctx.informers.For(kSecrets)),
      claims_(ctx.informers.For(kPersistentVolumeClaims)),
      events_(ctx.client, ctx.clock, runtime::EventSource{"kubelet", ""}) {
  if (!ParseCidr(options_.pod_cidr, &network_, &size_)) {
    ParseCidr("10.244.0.0/16", &network_, &size_);
  }
  pods_.AddIndex(std::string(kNodeNameIndex), [](const json::object& pod) {
    std::string node = StringAt(pod, "spec.nodeName");
    return node.empty() ? std::vector<std::string>{} : std::vector<std::string>{node};
  });
  pods_.AddIndex(std::string(kDependencyIndex), kubelet::DependencyKeys);
  controller_ = &ctx.manager.AddController(
      "kubelet", 2, [this](const std::string& key) { return Reconcile(key); });
  pods_.AddEventHandler(controller_->EnqueueHandler());
  pods_.AddEventHandler(runtime::EventHandler{
      .on_add = nullptr, .on_update = nullptr, .on_delete = [this](const runtime::ObjectPtr& pod) {
        Forget(StringAt(*pod, "metadata.uid"));
      }});
  nodes_.AddEventHandler(runtime::EventHandler{
      .on_add =
          [this](const runtime::ObjectPtr& n) { EnqueuePodsOn(StringAt(*n, "metadata.name")); },
      .on_update = nullptr,
      .on_delete =
          [this](const runtime::ObjectPtr& n) { EnqueuePodsOn(StringAt(*n, "metadata.name")); }});
  for (auto [informer, kind] : {std::pair{&config_maps_, kubelet::kConfigMapDependency},
                                std::pair{&secrets_, kubelet::kSecretDependency},
                                std::pair{&claims_, kubelet::kClaimDependency}}) {
    std::string_view dependency = kind;
    informer->AddEventHandler(runtime::EventHandler{
        .on_add = [this,
                   dependency](const runtime::ObjectPtr& o) { EnqueueWaitingPods(dependency, o); },
        .on_update = [this, dependency](
                         const runtime::ObjectPtr&,
                         const runtime::ObjectPtr& o) { EnqueueWaitingPods(dependency, o); },
        .on_delete = nullptr});
  }
}

void Kubelet::EnqueueWaitingPods(std::string_view kind, const runtime::ObjectPtr& obj) {
  const std::string key = kubelet::DependencyKey(StringAt(*obj, "metadata.namespace"), kind,
                                                 StringAt(*obj, "metadata.name"));
  for (const runtime::ObjectPtr& pod : pods_.cache().ByIndex(kDependencyIndex, key)) {
    if (StringAt(*pod, "spec.nodeName").empty() || Terminal(*pod) || Ready(*pod)) continue;
    controller_->queue().Add(runtime::ObjectKey(*pod));
  }
}

kubelet::Dependencies Kubelet::Missing(const json::object& pod) {
  std::string ns = StringAt(pod, "metadata.namespace");
  auto lookup = [&ns](runtime::Informer& informer) -> kubelet::Lookup {
    return [&ns, &informer](const std::string& name) { return informer.lister().Get(ns, name); };
  };
  kubelet::Dependencies missing =
      kubelet::CheckDependencies(pod, {.config_maps = lookup(config_maps_),
                                       .secrets = lookup(secrets_),
                                       .claims = lookup(claims_)});
  if (StringAt(pod, "status.phase") != "Running") return missing;
  // Running: its volumes are mounted; of its containers, only those still
  // waiting for their config are.
  missing.mount_error.clear();
  std::set<std::string> waiting;
  for (const json::object* cs : ObjectsAt(pod, "status.containerStatuses")) {
    if (StringAt(*cs, "state.waiting.reason") == "CreateContainerConfigError")
      waiting.insert(StringAt(*cs, "name"));
  }
  std::erase_if(missing.config_errors, [&](const auto& e) { return !waiting.contains(e.first); });
  return missing;
}

// Measured when the reconcile ends: the clock may have moved meanwhile, and
// a time already reached is handled at once rather than after a delay.
runtime::Result Kubelet::After(const std::string& key, std::optional<TimePoint> next) {
  if (!next) return {};
  Duration delay = *next - clock_.Now();
  if (delay > Duration::zero()) return {.requeue_after = delay};
  controller_->queue().Add(key);
  return {};
}

void Kubelet::EnqueuePodsOn(const std::string& node) {
  for (const runtime::ObjectPtr& pod : pods_.cache().ByIndex(kNodeNameIndex, node)) {
    controller_->queue().Add(runtime::ObjectKey(*pod));
  }
}

StatusOr<runtime::Result> Kubelet::Reconcile(const std::string& key) {
  runtime::ObjectPtr pod = pods_.cache().Get(key);
  if (pod == nullptr) {
    Release(key);
    return runtime::Result{};
  }
  std::string node_name = StringAt(*pod, "spec.nodeName");
  if (node_name.empty()) return runtime::Result{};
  runtime::ObjectPtr node = nodes_.cache().Get(node_name);
  if (node == nullptr) {
    // The node informer may lag the pod informer: only a node the API does
    // not have is gone, and then its pods go too (the pod garbage
    // collector's part).
    auto live = client_.Get(kNodes, "", node_name);
    if (live.ok()) {
      node = std::make_shared<const json::object>(std::move(*live));
    } else if (live.status().Is(Reason::kNotFound)) {
      return Orphaned(*pod);
    } else {
      return live.status();
    }
  }
  bool deleting = !StringAt(*pod, "metadata.deletionTimestamp").empty();
  if (Terminal(*pod)) {
    Status deleted = deleting ? ForceDelete(*pod) : Status::Ok();
    return deleted.ok() ? StatusOr<runtime::Result>(runtime::Result{}) : deleted;
  }
  if (deleting) return Terminating(*pod);
  return Running(*pod, *node);
}

size_t Kubelet::Quarantined() {
  MutexLock lock(mu_);
  return orphaned_since_.size();
}

size_t Kubelet::Remembered() {
  MutexLock lock(mu_);
  std::set<std::string> uids;
  for (const auto* m : {&first_seen_, &orphaned_since_}) {
    for (const auto& [uid, _] : *m) uids.insert(uid);
  }
  for (const auto& [uid, _] : mount_errors_) uids.insert(uid);
  return uids.size();
}

// As the pod garbage collector: a pod whose node is gone is deleted once
// the node has been missing for kOrphanQuarantine.
StatusOr<runtime::Result> Kubelet::Orphaned(const json::object& pod) {
  std::string uid = StringAt(pod, "metadata.uid");
  TimePoint since;
  {
    MutexLock lock(mu_);
    since = orphaned_since_.try_emplace(uid, clock_.Now()).first->second;
  }
  if (clock_.Now() < since + kOrphanQuarantine) {
    return After(runtime::ObjectKey(pod), since + kOrphanQuarantine);
  }
  Status deleted = ForceDelete(pod);
  return deleted.ok() ? StatusOr<runtime::Result>(runtime::Result{}) : deleted;
}

StatusOr<runtime::Result> Kubelet::Terminating(const json::object& pod) {
  TimePoint now = clock_.Now();
  kubelet::Simulated sim = kubelet::Terminate(pod, now);
  if (Status s = WriteStatus(pod, sim); !s.ok()) return s;
  TimePoint deadline;
  if (!ParseRfc3339(StringAt(pod, "metadata.deletionTimestamp"), &deadline) || now >= deadline) {
    Status deleted = ForceDelete(pod);
    return deleted.ok() ? StatusOr<runtime::Result>(runtime::Result{}) : deleted;
  }
  return After(runtime::ObjectKey(pod), deadline);
}

StatusOr<runtime::Result> Kubelet::Running(const json::object& pod, const json::object& node) {
  TimePoint now = clock_.Now();
  kubelet::PodFacts facts;
  facts.now = now;
  facts.start_at = FirstSeen(StringAt(pod, "metadata.uid")) + options_.pod_startup;
  // Started before (e.g. by a kubelet before a restart): stays started.
  if (StringAt(pod, "status.phase") == "Running") facts.start_at = std::min(facts.start_at, now);
  facts.host_ip = InternalIp(node);
  facts.missing = Missing(pod);
  if (now >= facts.start_at && facts.missing.mount_error.empty()) {
    facts.pod_ip = AllocateIp(runtime::ObjectKey(pod), pod);
  }
  kubelet::Simulated sim = kubelet::Run(pod, facts);
  if (Status s = WriteStatus(pod, sim); !s.ok()) return s;
  ReportMount(pod, facts.missing.mount_error);
  return After(runtime::ObjectKey(pod), sim.next);
}

void Kubelet::ReportMount(const json::object& pod, const std::string& error) {
  std::string uid = StringAt(pod, "metadata.uid");
  {
    MutexLock lock(mu_);
    if (error.empty()) {
      mount_errors_.erase(uid);
      return;
    }
    std::string& last = mount_errors_[uid];
    if (last == error) return;
    last = error;
  }
  events_.Event(pod, runtime::kEventTypeWarning, "FailedMount", error);
}

Status Kubelet::WriteStatus(const json::object& pod, const kubelet::Simulated& sim) {
  const json::value* current = Find(pod, "status");
  if (current != nullptr && *current == json::value(sim.status)) return Status::Ok();
  json::object updated = pod;
  updated["status"] = sim.status;
  auto written = client_.UpdateStatus(kPods, StringAt(pod, "metadata.namespace"), updated);
  if (!written.ok()) {
    // Deleted meanwhile: nothing left to run.
    return written.status().Is(Reason::kNotFound) ? Status::Ok() : written.status();
  }
  for (const kubelet::Event& e : sim.events) events_.Event(pod, e.type, e.reason, e.message);
  return Status::Ok();
}

Status Kubelet::ForceDelete(const json::object& pod) {
  client::DeleteOptions opts;
  opts.precondition_uid = StringAt(pod, "metadata.uid");
  opts.grace_period_seconds = 0;
  Status deleted = client_.Delete(kPods, StringAt(pod, "metadata.namespace"),
                                  StringAt(pod, "metadata.name"), opts);
  if (!deleted.ok() && !deleted.Is(Reason::kNotFound) && !deleted.Is(Reason::kConflict)) {
    return deleted;
  }
  return Status::Ok();
}

void Kubelet::Forget(const std::string& uid) {
  MutexLock lock(mu_);
  first_seen_.erase(uid);
  orphaned_since_.erase(uid);
  mount_errors_.erase(uid);
}

TimePoint Kubelet::FirstSeen(const std::string& uid) {
  MutexLock lock(mu_);
  return first_seen_.try_emplace(uid, clock_.Now()).first->second;
}

std::string Kubelet::AllocateIp(const std::string& key, const json::object& pod) {
  MutexLock lock(mu_);
  if (!ips_loaded_) {
    // Pods that got their addresses before a restart keep them.
    for (const runtime::ObjectPtr& p : pods_.cache().List()) {
      std::string ip = StringAt(*p, "status.podIP");
      if (ip.empty()) continue;
      used_ips_.insert(ip);
      ips_[runtime::ObjectKey(*p)] = ip;
    }
    ips_loaded_ = true;
  }
  if (std::string ip = StringAt(pod, "status.podIP"); !ip.empty()) {
    used_ips_.insert(ip);
    return ips_[key] = ip;
  }
  if (auto it = ips_.find(key); it != ips_.end()) return it->second;
  for (uint32_t tried = 0; tried < size_; ++tried) {
    uint32_t offset = next_ip_++ % size_;
    uint32_t last = (network_ + offset) & 255;
    if (offset < 2 || offset == size_ - 1 || last == 0 || last == 255) continue;
    std::string ip = Ipv4(network_ + offset);
    if (used_ips_.contains(ip)) continue;
    used_ips_.insert(ip);
    return ips_[key] = ip;
  }
  return "";  // the pod CIDR is full: the pod runs without an address
}

void Kubelet::Release(const std::string& key) {
  MutexLock lock(mu_);
  auto it = ips_.find(key);
  if (it == ips_.end()) return;
  used_ips_.erase(it->second);
  ips_.erase(it);
}

}  // namespace flotilla::member
