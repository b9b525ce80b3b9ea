// The member fan-out (fanout.h).
#include "federation/common/fanout.h"

#include "api/annotations.h"
#include "api/views.h"
#include "federation/common/member_copy.h"

namespace flotilla::federation {
namespace {

std::string WithDetail(std::string message, const std::string& detail) {
  if (!detail.empty()) message += " " + detail;
  return message;
}

}  // namespace

MemberTargets ReadyTargets(FederationContext& ctx, std::span<const client::ResourceRef> resources,
                           Duration grace) {
  MemberTargets out;
  TimePoint now = ctx.clock().Now();
  for (const auto& [cluster, synced, served] : ctx.members().Synced(resources)) {
    Target t{.cluster = cluster, .client = ctx.clusters().Get(cluster)};
    if (t.client == nullptr) continue;  // no longer ready
    if (synced && !served) {
      // The member does not serve the kind: no copy there.
      out.not_served.push_back(cluster);
      continue;
    }
    if (!synced) {
      // Its on_synced brings every object back.
      std::optional<TimePoint> since = ctx.ReadySince(cluster);
      if (grace > Duration::zero() && (!since || now < *since + grace)) out.waiting = true;
      continue;
    }
    t.cluster_object = ctx.cluster_objects().cache().Get(cluster);
    out.ready.push_back(std::move(t));
  }
  // A cluster whose stored status says Ready that this process has not
  // probed yet (a restarted control plane): planning without it would move
  // its replicas away at every restart.
  std::optional<TimePoint> started = ctx.StartedAt();
  if (grace > Duration::zero() && started && now < *started + grace) {
    for (const runtime::ObjectPtr& c : ctx.cluster_objects().lister().List()) {
      std::string name(api::ObjectView(*c).name());
      if (!ctx.clusters().Known(name) && api::ClusterView(*c).ready()) out.waiting = true;
    }
  }
  return out;
}

std::string Describe(const json::object& federated) {
  return StringAt(federated, "kind") + " " + FederatedObjectKey(federated);
}

std::string Describe(const Status& s) {
  std::string out = s.ToString();
  return out.size() > 300 ? out.substr(0, 300) + "..." : out;
}

MemberWriter::MemberWriter(FederationContext& ctx, runtime::EventRecorder& events)
    : ctx_(ctx),
      events_(events),
      latency_(ctx.metrics().Histogram("flotilla_federation_member_request_duration_seconds",
                                       "Latency of the federation's requests to member clusters.",
                                       {"cluster", "resource", "operation"})),
      requests_(ctx.metrics().Counter("flotilla_federation_member_requests_total",
                                      "Requests of the federation to member clusters.",
                                      {"cluster", "resource", "operation", "result"})) {}

void MemberWriter::Record(const Target& t, const client::ResourceRef& resource,
                          const char* operation, Duration took, bool ok) {
  latency_.Observe({t.cluster, resource.resource, operation},
                   std::chrono::duration<double>(took).count());
  requests_.Add({t.cluster, resource.resource, operation, ok ? "ok" : "failed"});
}

StatusOr<json::object> MemberWriter::Create(const json::object& federated, const Target& t,
                                            const client::ResourceRef& resource,
                                            const json::object& copy, const std::string& detail) {
  TimePoint start = ctx_.io_clock().Now();
  StatusOr<json::object> made = t.client->Create(resource, "", copy);
  Record(t, resource, "create", ctx_.io_clock().Now() - start, made.ok());
  if (made.ok()) {
    events_.Event(
        federated, runtime::kEventTypeNormal, "CreateInCluster",
        WithDetail("Created " + Describe(federated) + " in cluster " + t.cluster, detail));
  } else if (!made.status().Is(Reason::kAlreadyExists)) {
    events_.Event(federated, runtime::kEventTypeWarning, "FailedCreateInCluster",
                  "Creating " + Describe(federated) + " in cluster " + t.cluster +
                      " failed: " + Describe(made.status()));
  }
  return made;
}

StatusOr<json::object> MemberWriter::Update(const json::object& federated, const Target& t,
                                            const client::ResourceRef& resource,
                                            const json::object& copy, const std::string& detail) {
  TimePoint start = ctx_.io_clock().Now();
  StatusOr<json::object> updated = t.client->Update(resource, "", copy);
  Record(t, resource, "update", ctx_.io_clock().Now() - start, updated.ok());
  if (updated.ok()) {
    events_.Event(
        federated, runtime::kEventTypeNormal, "UpdateInCluster",
        WithDetail("Updated " + Describe(federated) + " in cluster " + t.cluster, detail));
  } else if (!updated.status().Is(Reason::kConflict) && !updated.status().Is(Reason::kNotFound)) {
    events_.Event(federated, runtime::kEventTypeWarning, "FailedUpdateInCluster",
                  "Updating " + Describe(federated) + " in cluster " + t.cluster +
                      " failed: " + Describe(updated.status()));
  }
  return updated;
}

Status MemberWriter::Delete(const json::object& federated, const Target& t,
                            const client::ResourceRef& resource, const std::string& ns,
                            const std::string& name, const client::DeleteOptions& opts,
                            const std::string& why) {
  TimePoint start = ctx_.io_clock().Now();
  Status s = t.client->Delete(resource, ns, name, opts);
  if (s.Is(Reason::kNotFound)) s = Status::Ok();
  Record(t, resource, "delete", ctx_.io_clock().Now() - start, s.ok());
  if (s.ok()) {
    events_.Event(federated, runtime::kEventTypeNormal, "DeleteInCluster",
                  WithDetail("Deleted " + Describe(federated) + " in cluster " + t.cluster, why));
  } else if (!s.Is(Reason::kConflict)) {
    events_.Event(
        federated, runtime::kEventTypeWarning, "FailedDeleteInCluster",
        "Deleting " + Describe(federated) + " in cluster " + t.cluster + " failed: " + Describe(s));
  }
  return s;
}

StatusOr<json::object> MemberWriter::Get(const Target& t, const client::ResourceRef& resource,
                                         const std::string& ns, const std::string& name) {
  TimePoint start = ctx_.io_clock().Now();
  StatusOr<json::object> got = t.client->Get(resource, ns, name);
  Record(t, resource, "get", ctx_.io_clock().Now() - start,
         got.ok() || got.status().Is(Reason::kNotFound));
  return got;
}

void MemberWriter::ForEach(size_t n, const std::function<void(size_t)>& fn) {
  ctx_.pool().ParallelFor(n, fn);
}

}  // namespace flotilla::federation
