// Joining a member cluster to the federation and removing it: what
// `flotilla join` and `flotilla unjoin` do (docs/federation.md).
//
// Join checks that the member answers GET /version with the given
// credentials, stores them as a self-contained kubeconfig in the Secret
// "<name>-kubeconfig" in flotilla-system (created when missing), then creates
// the federation/v1beta1 Cluster <name> pointing at it. Nothing is left
// behind when a step fails.
//
// Unjoin deletes the Cluster and its Secret; with `cascade`, in between, the
// objects in the member that carry the federation's managed-by label (after
// the Cluster, so that the federation no longer restores them; when that
// fails, the Secret is kept and the error names the member).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "client/client.h"
#include "client/kubeconfig.h"

namespace flotilla::federation::cluster {

struct JoinOptions {
  std::string name;                           // the Cluster's name
  client::RestConfig member;                  // how to reach the member
  std::map<std::string, std::string> labels;  // the Cluster's labels
  // Where the cluster is (spec.provider, spec.region, spec.zones): what
  // propagation policies' field selectors match. Empty: the region and
  // zones the cluster controller reads from the member's nodes.
  std::string provider;
  std::string region;
  std::vector<std::string> zones;
  std::string secret_namespace = "flotilla-system";
  Duration timeout = std::chrono::seconds(10);  // for the check that the member answers
  Clock* io_clock = nullptr;                    // null: the real clock
  // A Cluster of this name already joined is pointed at the member anew
  // (its Secret's kubeconfig, its address, labels and location; its other
  // fields, a cordon among them, kept) instead of refused: `flotilla up` on
  // the directory of an earlier run, whose members come back on new ports.
  bool rejoin = false;
};

// The Cluster Join creates: its name, labels, spec.secretRef (the Secret
// Join writes), spec.serverAddressByClientCIDRs (opts.member.server),
// provider, region and zones.
json::object ClusterObject(const JoinOptions& opts);

// Returns the created (or, with opts.rejoin, updated) Cluster.
// AlreadyExists when the Cluster (or its Secret) exists and opts.rejoin is
// not set; Conflict when it is being unjoined; ServiceUnavailable, naming the member's address,
// when the member does not answer; Unauthorized/Forbidden when it refuses the credentials; the
// federation's error otherwise.
StatusOr<json::object> Join(client::Client& fed, const JoinOptions& opts);

// Parses "k=v,k2=v2" (empty: none). BadRequest naming a bad item.
StatusOr<std::map<std::string, std::string>> ParseLabels(const std::string& text);

struct UnjoinResult {
  std::vector<std::string> deleted;  // "resource ns/name" deleted in the member (cascade)
};

// The finalizer a cascading unjoin of an agent-connected cluster holds the
// Cluster with, and the reason of the Ready condition the cluster
// controller then writes once it has let go of the cluster.
inline constexpr std::string_view kUnjoinFinalizer = "federation.kubernetes.io/unjoin";
inline constexpr std::string_view kUnjoiningReason = "ClusterUnjoining";

// NotFound when there is no such Cluster. With cascade, the member must be
// reachable, and the managed objects of `managed` are deleted in that order
// (federation::MemberKinds(): what the federated kinds create there);
// objects of kinds the member does not serve are skipped.
//
// An agent-connected member is reached through the federation's cluster
// proxy, as `federation` (the federation's address and credentials; its
// cascade is refused without them), while its tunnel is still up: the
// Cluster is deleted holding kUnjoinFinalizer, the cascade waits (up to
// `unjoining_timeout`) for the cluster controller to say it has let go of
// the cluster (Ready False, kUnjoiningReason), deletes the objects, and
// lets the Cluster go.
StatusOr<UnjoinResult> Unjoin(client::Client& fed, const std::string& name, bool cascade,
                              const std::vector<client::ResourceRef>& managed = {},
                              Clock* io_clock = nullptr,
                              const client::RestConfig* federation = nullptr,
                              Duration unjoining_timeout = std::chrono::seconds(30));

// Cordons (`unschedulable`) or uncordons the Cluster `name`: sets or
// removes its spec.unschedulable (kubectl flotilla cordon/uncordon).
// Returns whether anything changed; NotFound when there is no such Cluster.
// Uncordoning also ends a drain.
StatusOr<bool> SetUnschedulable(client::Client& fed, const std::string& name, bool unschedulable);
// Drains the Cluster `name` (spec.unschedulable and spec.draining; kubectl
// flotilla drain). Returns whether anything changed; NotFound when there is
// no such Cluster.
StatusOr<bool> SetDraining(client::Client& fed, const std::string& name);

}  // namespace flotilla::federation::cluster
