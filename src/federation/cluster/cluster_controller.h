// The cluster controller: watches federation/v1beta1 Clusters and their
// Secrets, probes every member's health every monitor period and writes what
// it sees into the Cluster's status (seed 003: clusters are first-class API
// objects whose status the federation maintains). docs/federation.md.
//
// Per cluster, every `monitor_period`: GET /readyz (/healthz when /readyz is
// 404) with the member's credentials and a `probe_timeout`, nothing retried.
// The health it reports has hysteresis: a Ready cluster becomes NotReady only
// after `failure_threshold` consecutive failed probes and a NotReady one
// Ready after `success_threshold` consecutive good ones; a cluster without a
// Ready condition takes the first probe's outcome. Conditions:
//   Ready   True  ClusterReady        / False ClusterNotReady
//   Offline True  ClusterNotReachable / False ClusterReachable
// with lastProbeTime and lastTransitionTime (only when the status changes).
// The status is written when a probe changes it, and otherwise every
// `status_report_period`, to move lastProbeTime: with 1,000 members a write
// per probe would be 100 writes a second that say nothing (Kubernetes
// reports unchanged node status every 5 minutes for the same reason). A
// change of status.federatedObjects alone, a count for people to read, is
// written at most every `count_report_period`, and such writes of all the
// clusters together at most `count_report_qps` a second: every propagated
// object changes the count in every member it goes to, all at once.
// After a good probe it also records status.zones and status.region from
// the member's nodes' topology labels (legacy failure-domain.beta labels
// too; a member that serves no nodes has none), read from the federation's
// cache of them once synced, and status.kubernetesVersion from GET /version
// (asked every `status_report_period`); from the federation's
// caches of the member (MemberInformers, once synced) status.nodeSummary,
// status.resourceSummary (allocatable of the ready, schedulable nodes
// against the requests of bound pods) and status.federatedObjects (the
// objects there that the federation manages).
//
// Each cluster's REST client and prober are built from the Secret named by
// spec.secretRef (namespace flotilla-system unless it names one) and rebuilt
// when that Secret changes. They share one transport, so the probes keep a
// connection open for the federation's writes to the member. Ready
// clusters and their clients are reported to a ClusterClients registry.
//
// Time (the period, condition times) runs on the context's clock; network
// timeouts on `io_clock`.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/token_bucket.h"
#include "client/client.h"
#include "federation/cluster/member_access.h"
#include "federation/common/cluster_clients.h"
#include "federation/common/context.h"
#include "federation/common/names.h"
#include "runtime/controller_manager.h"
#include "runtime/informer.h"

namespace flotilla::federation::cluster {

using federation::kClusters;
using federation::kNodes;
using federation::kSecrets;

class Tunnels;

struct ClusterControllerOptions {
  Duration monitor_period = std::chrono::seconds(10);
  // A status that only the probe times would change is written at most
  // this often, and GET /version is asked as often: the kubelet's
  // nodeStatusReportFrequency for an unchanged node status.
  Duration status_report_period = std::chrono::minutes(5);
  // A status whose federatedObjects is all that changed (besides the probe
  // times) is written at most this often: a ConfigMap propagated to 1,000
  // members would otherwise rewrite 1,000 Cluster statuses within a probe.
  Duration count_report_period = std::chrono::minutes(1);
  // And such writes of all the clusters together at most this many a
  // second (a burst of as many), so that they do not come all at once: a
  // fan-out to 5,000 members changes 5,000 counts in one probe round, and
  // each write is a durable one. Above count_report_qps ×
  // count_report_period members (1,200) a count is older than the period
  // while objects keep changing it. 0: no limit.
  double count_report_qps = 20;
  Duration probe_timeout = std::chrono::seconds(3);
  int failure_threshold = 3;
  int success_threshold = 1;
  // The client-side rate limit of the federation's clients of each member
  // (all federation controllers share a member's client): writes for
  // thousands of federated workloads go through it.
  double member_qps = 500;
  int member_burst = 1000;
  // HTTP/2 to members that offer it (client::RestOptions::http2).
  bool member_http2 = true;
  // The tunnels of agent-connected clusters (tunnel.h); null: such
  // clusters cannot be reached. Not owned.
  Tunnels* tunnels = nullptr;
  // Probes block a worker for up to probe_timeout: with 16, a round over
  // 100 unreachable members takes about 20 s.
  int workers = 16;
  // Times network I/O; null: the real clock. Not owned.
  Clock* io_clock = nullptr;
};

// What the controller last observed of one cluster, for metrics and tests.
struct ClusterHealth {
  bool ready = false;
  bool reachable = false;
  double probe_seconds = 0;  // the last probe's latency
  uint64_t probes = 0;
  uint64_t failures = 0;           // failed probes in all
  uint64_t client_generation = 0;  // how many times its clients were built
  uint64_t statuses_built = 0;     // desired statuses built to compare or write
};

class ClusterController {
 public:
  // Registers an informer on Secrets in flotilla-system, the controller
  // "cluster" and its metrics with `ctx`, which must outlive the controller
  // and be stopped before it is destroyed.
  ClusterController(FederationContext& ctx, ClusterControllerOptions options);
  ~ClusterController();

  std::optional<ClusterHealth> Health(const std::string& name) const;

 private:
  struct Member;
  struct Observation;
  StatusOr<runtime::Result> Reconcile(const std::string& name);
  std::shared_ptr<Member> MemberFor(const std::string& name, const json::object& cluster);
  // Drops the cluster from the registry (and closes its agent's tunnel).
  void Forget(const std::string& name, bool close_tunnel);
  // A Cluster being deleted: forgotten, its tunnel kept, its Ready
  // condition False with kUnjoiningReason.
  StatusOr<runtime::Result> Unjoining(const json::object& cluster);
  // Rebuilds the member's clients when its Secret changed; true if it did.
  bool RefreshClients(Member& m, const json::object& cluster);
  void Probe(const std::string& name, Member& m, TimePoint now);
  Status WriteStatus(const json::object& cached, Member& m);
  // What m's unwritten probe would add to `cached`, judged without building
  // a status, when `cached` is the object last judged and the health and
  // the report period are as they were:
  //   kNothing    nothing (a new count of federated objects alone while
  //               `count_report_period` is not over counts as nothing);
  //   kCountAlone a new count alone, its period over: written when
  //               count_writes_ gives a token;
  //   kMore       something else, or it cannot be judged so.
  enum class Pending { kNothing, kCountAlone, kMore };
  Pending WhatIsNew(const json::object& cached, const Member& m) const;
  // Whether a write of a new count alone may go now (a token taken).
  bool CountWriteAllowed() { return count_writes_.TryTake() == Duration::zero(); }
  // Records m's unwritten probe as what the status at `resource_version`
  // says, judged against (or written onto) the Cluster at `basis`.
  static void RecordJudged(Member& m, std::string_view basis, std::string resource_version);
  Observation Observe(const std::string& name, Member& m, TimePoint now);
  // The resource summary and the count of managed objects, from the
  // federation's caches of the member, when they are synced.
  void ObserveCaches(const std::string& name, Observation& obs) const;
  bool Judge(Member& m, const Observation& obs) const;
  // `cluster` with the observation's conditions and topology, and the
  // Schedulable condition (False while `cordoned`).
  json::object WithStatus(const json::object& cluster, const Observation& obs, bool healthy,
                          TimePoint now, bool cordoned) const;

  void WriteMetrics(metrics::TextWriter& w) const;

  FederationContext& ctx_;
  client::Client& fed_;
  Clock& clock_;
  Clock& io_clock_;
  const ClusterControllerOptions options_;
  ClusterClients& registry_;
  runtime::Informer& clusters_;
  runtime::Informer secrets_;
  runtime::Controller* controller_ = nullptr;
  // The writes of a new count alone, across the clusters.
  TokenBucket count_writes_;

  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<Member>> members_ GUARDED_BY(mu_);
};

}  // namespace flotilla::federation::cluster
