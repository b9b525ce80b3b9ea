// The member fan-out (DESIGN §2): which member clusters a federated object
// can be written to now, and one writer that creates, updates and deletes
// copies in them with the standard events and per-cluster metrics, on the
// context's bounded pool.
//
// Events on the federated object: CreateInCluster, UpdateInCluster,
// DeleteInCluster (Normal); FailedCreateInCluster, FailedUpdateInCluster,
// FailedDeleteInCluster (Warning). A write that lost a race with the member
// (AlreadyExists on create, Conflict or NotFound on update, NotFound on
// delete) records no event: the member's own event brings the object back
// for another check.
//
// Metrics (labels cluster, resource, operation = get|create|update|delete):
//   flotilla_federation_member_request_duration_seconds  histogram
//   flotilla_federation_member_requests_total{...,result=ok|failed}
//
// Thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/metrics.h"
#include "client/client.h"
#include "federation/common/context.h"
#include "runtime/event_recorder.h"

namespace flotilla::federation {

// One ready member cluster whose caches of what a controller reads have
// synced.
struct Target {
  std::string cluster;
  std::shared_ptr<client::Client> client;
  // Its Cluster object (labels); null while the cluster is leaving (its
  // Cluster deleted, its informers not stopped yet): nothing is written
  // there then.
  runtime::ObjectPtr cluster_object;
};

struct MemberTargets {
  std::vector<Target> ready;  // sorted by cluster name
  // A ready cluster's caches have not synced and it became ready less than
  // the grace ago, or the context started less than the grace ago and a
  // cluster whose Cluster status says Ready was not probed yet: a
  // controller that must not plan without it waits.
  bool waiting = false;
  // Ready clusters that do not serve the first of `resources` (an older
  // Kubernetes): no target, so no copy and no write there. Sorted.
  std::vector<std::string> not_served;
};

// The ready clusters whose member informers on every one of `resources`
// have synced and that serve the first of them, with their Cluster
// objects.
MemberTargets ReadyTargets(FederationContext& ctx, std::span<const client::ResourceRef> resources,
                           Duration grace);

// "ReplicaSet default/web"
std::string Describe(const json::object& federated);
// A status message cut to 300 characters, for events.
std::string Describe(const Status& s);

class MemberWriter {
 public:
  // `ctx` must outlive the writer; events go to `events`.
  MemberWriter(FederationContext& ctx, runtime::EventRecorder& events);

  // Creates `copy` of `federated` in `t`. `detail` ends the event's message
  // (e.g. "with 16 replicas").
  StatusOr<json::object> Create(const json::object& federated, const Target& t,
                                const client::ResourceRef& resource, const json::object& copy,
                                const std::string& detail = "");
  StatusOr<json::object> Update(const json::object& federated, const Target& t,
                                const client::ResourceRef& resource, const json::object& copy,
                                const std::string& detail = "");
  // Deletes the copy `name` in `ns` with `opts`; NotFound is OK. `why` ends
  // the event's message.
  Status Delete(const json::object& federated, const Target& t, const client::ResourceRef& resource,
                const std::string& ns, const std::string& name, const client::DeleteOptions& opts,
                const std::string& why = "");
  // A GET, timed and counted like the writes.
  StatusOr<json::object> Get(const Target& t, const client::ResourceRef& resource,
                             const std::string& ns, const std::string& name);

  // Runs fn(0..n-1) side by side on the context's pool.
  void ForEach(size_t n, const std::function<void(size_t)>& fn);

  runtime::EventRecorder& events() { return events_; }

 private:
  void Record(const Target& t, const client::ResourceRef& resource, const char* operation,
              Duration took, bool ok);

  FederationContext& ctx_;
  runtime::EventRecorder& events_;
  metrics::HistogramVec& latency_;
  metrics::CounterVec& requests_;
};

}  // namespace flotilla::federation
