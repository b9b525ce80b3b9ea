#include "member/nodes/nodes.h"

#include <algorithm>
#include <vector>

#include "base/due_time.h"
#include "base/mutex.h"
#include "member/nodes/node_status.h"
#include "member/object_util.h"

namespace flotilla::member {
namespace {

std::string Ipv4(uint32_t v) {
  return std::to_string(v >> 24) + "." + std::to_string((v >> 16) & 255) + "." +
         std::to_string((v >> 8) & 255) + "." + std::to_string(v & 255);
}

constexpr uint32_t kNodeNetwork = 10u << 24;  // 10.0.0.0/16
constexpr char kInternalIpIndex[] = "internal-ip";

}  // namespace

Nodes::Nodes(ControllerContext& ctx)
    : client_(ctx.client),
      clock_(ctx.clock),
      options_(ctx.options),
      nodes_(ctx.informers.For(kNodes)) {
  controller_ = &ctx.manager.AddController(
      "nodes", 1, [this](const std::string& name) { return Reconcile(name); });
  nodes_.AddIndex(kInternalIpIndex, [](const json::object& node) {
    std::string ip = InternalIp(node);
    return ip.empty() ? std::vector<std::string>{} : std::vector<std::string>{ip};
  });
  nodes_.AddEventHandler(controller_->EnqueueHandler());
  MutexLock lock(mu_);
  for (int i = 0; i < options_.nodes; ++i) {
    std::string name = nodes::NodeName(options_, i);
    to_create_[name] = i;
    controller_->queue().Add(name);
  }
}

StatusOr<runtime::Result> Nodes::Reconcile(const std::string& name) {
  runtime::ObjectPtr node = nodes_.cache().Get(name);
  if (node == nullptr) {
    Status created = Create(name);
    return created.ok() ? StatusOr<runtime::Result>(runtime::Result{}) : created;
  }
  {
    MutexLock lock(mu_);
    to_create_.erase(name);  // exists (e.g. from before a restart): never recreate it
  }
  if (json::object labels = nodes::MissingLabels(*node); !labels.empty()) {
    json::object patch = {{"metadata", json::object{{"labels", labels}}}};
    auto patched =
        client_.Patch(kNodes, "", name, client::PatchType::kMerge, json::serialize(patch));
    if (!patched.ok()) return patched.status();
  }
  if (nodes::NeedsRegistration(*node)) {
    // The update it causes brings the node back here for its lease.
    Status registered = Register(*node);
    return registered.ok() ? StatusOr<runtime::Result>(runtime::Result{}) : registered;
  }
  TimePoint now = clock_.Now();
  TimePoint renewed;
  {
    MutexLock lock(mu_);
    auto it = lease_renewed_.find(name);
    renewed = it == lease_renewed_.end() ? TimePoint::min() : it->second;
  }
  // Due on whole seconds (DueOnWholeSecond): the nodes of a process due
  // in the same second are renewed together.
  TimePoint lease_due =
      renewed == TimePoint::min() ? renewed : DueOnWholeSecond(renewed, LeaseRenewInterval());
  if (now >= lease_due) {
    if (Status s = RenewLease(*node); !s.ok()) return s;
    lease_due = DueOnWholeSecond(now, LeaseRenewInterval());
  }
  std::optional<TimePoint> beat = nodes::LastHeartbeat(*node);
  TimePoint beat_due = beat ? DueOnWholeSecond(*beat, kStatusReportInterval) : TimePoint::min();
  if (now >= beat_due) {
    std::string patch = json::serialize(nodes::HeartbeatPatch(*node, now));
    auto patched = client_.Patch(kNodes, "", name, client::PatchType::kStrategic, patch, "status");
    if (!patched.ok()) return patched.status();
    beat_due = DueOnWholeSecond(now, kStatusReportInterval);
  }
  // Measured now: the clock may have moved during the writes.
  Duration next = std::min(lease_due, beat_due) - clock_.Now();
  if (next > Duration::zero()) return runtime::Result{.requeue_after = next};
  controller_->queue().Add(name);  // already due: a delay would wait for the clock to move
  return runtime::Result{};
}

Duration Nodes::LeaseRenewInterval() const {
  return std::chrono::milliseconds(options_.node_lease_duration_seconds * 250);
}

Status Nodes::Create(const std::string& name) {
  int index = 0;
  {
    MutexLock lock(mu_);
    lease_renewed_.erase(name);
    auto it = to_create_.find(name);
    if (it == to_create_.end()) {
      // Deleted: its address is free again.
      if (auto given = addresses_.find(name); given != addresses_.end()) {
        given_.erase(given->second);
        addresses_.erase(given);
      }
      next_host_ = 2;
      return Status::Ok();
    }
    index = it->second;
  }
  auto created = client_.Create(kNodes, "", nodes::NewNode(options_, index));
  if (!created.ok() && !created.status().Is(Reason::kAlreadyExists)) return created.status();
  MutexLock lock(mu_);
  to_create_.erase(name);
  return Status::Ok();
}

Status Nodes::Register(const json::object& node) {
  std::string name = StringAt(node, "metadata.name");
  std::string ip = InternalIp(node);
  if (ip.empty()) ip = AddressFor(name);
  json::object patch = nodes::RegistrationPatch(node, options_, ip, clock_.Now());
  // Only onto the node as read: what it fills in must not overwrite what
  // someone set meanwhile (a Conflict brings the newer node back here).
  patch["metadata"] = json::object{{"resourceVersion", StringAt(node, "metadata.resourceVersion")}};
  auto patched = client_.Patch(kNodes, "", name, client::PatchType::kStrategic,
                               json::serialize(patch), "status");
  if (!patched.ok() && !patched.status().Is(Reason::kNotFound) &&
      !patched.status().Is(Reason::kConflict)) {
    return patched.status();
  }
  return Status::Ok();
}

// The lowest address of the node network, from the search's cursor on,
// that no node has and that was not given out already. A node's deletion
// moves the cursor back to the start (Create), so its address is taken
// again; else each address is looked at about once, not every node for
// every new one.
std::string Nodes::AddressFor(const std::string& name) {
  MutexLock lock(mu_);
  if (auto it = addresses_.find(name); it != addresses_.end()) return it->second;
  for (uint32_t host = std::max<uint32_t>(next_host_, 2); host < 65535; ++host) {
    std::string ip = Ipv4(kNodeNetwork + host);
    if (given_.contains(ip) || !nodes_.cache().ByIndex(kInternalIpIndex, ip).empty()) continue;
    addresses_[name] = ip;
    given_.insert(ip);
    next_host_ = host + 1;
    return ip;
  }
  return "";
}

Status Nodes::RenewLease(const json::object& node) {
  std::string name = StringAt(node, "metadata.name");
  std::string now = FormatRfc3339Micro(clock_.Now());
  json::object spec = {{"holderIdentity", name},
                       {"leaseDurationSeconds", options_.node_lease_duration_seconds},
                       {"renewTime", now}};
  json::object patch = {{"spec", spec}};
  auto renewed = client_.Patch(kLeases, std::string(kNodeLeaseNamespace), name,
                               client::PatchType::kMerge, json::serialize(patch));
  if (renewed.status().Is(Reason::kNotFound)) {
    json::object owner = {{"apiVersion", "v1"},
                          {"kind", "Node"},
                          {"name", name},
                          {"uid", StringAt(node, "metadata.uid")}};
    json::object lease = {{"apiVersion", "coordination.k8s.io/v1"},
                          {"kind", "Lease"},
                          {"metadata", json::object{{"name", name},
                                                    {"namespace", kNodeLeaseNamespace},
                                                    {"ownerReferences", json::array{owner}}}},
                          {"spec", spec}};
    auto created = client_.Create(kLeases, std::string(kNodeLeaseNamespace), lease);
    if (!created.ok() && !created.status().Is(Reason::kAlreadyExists)) return created.status();
  } else if (!renewed.ok()) {
    return renewed.status();
  }
  MutexLock lock(mu_);
  lease_renewed_[name] = clock_.Now();
  return Status::Ok();
}

}  // namespace flotilla::member
