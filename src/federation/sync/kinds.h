// What the sync controller propagates of each plain kind (docs/federation.md,
// "Propagation"): which federated objects stay on the federation, what a
// member copy holds, when a copy is up to date and how an out-of-date copy
// is rewritten. Pure functions; thread-safe.
//
// A copy holds the federated object's name, namespace, labels and
// annotations (member_copy.h) and its user content:
//   Namespace  nothing more (its spec and status are the member's);
//   ConfigMap  data, binaryData, immutable;
//   Secret     data, type, immutable;
//   Service    spec without what the member allocates (clusterIP and
//              clusterIPs unless headless, ipFamilies, ipFamilyPolicy,
//              healthCheckNodePort, ports[].nodePort); an update keeps the
//              member's values of those. Never status.
//   ServiceAccount  automountServiceAccountToken, imagePullSecrets (the
//              member's token secrets stay);
//   Role       rules;
//   RoleBinding  roleRef and subjects (what the member defaults in them
//              does not make the copy out of date); a copy whose roleRef
//              differs, which Kubernetes does not let change, is replaced;
//   PersistentVolumeClaim  spec; an update sets its fields over the
//              member's (the volume it was bound to and the class it was
//              given stay); it goes only where its dependents are unless
//              its own annotations or a policy place it; its status is the
//              copies' (PersistentVolumeClaimStatus);
//   LimitRange, NetworkPolicy, IngressClass, ResourceQuota  spec (what the
//              member's API server defaults in it does not make the copy out
//              of date); a ResourceQuota's status is the copies' hard and
//              used summed (QuotaStatus);
//   CustomResourceDefinition  spec (what the member's API server defaults
//              in it does not make the copy out of date): a member serves a
//              custom kind before its objects go there;
//   a custom kind (custom_kinds.h)  every top-level field but apiVersion,
//              kind, metadata and status (what the member defaults does not
//              make the copy out of date); each managed copy's status is
//              gathered into the federated object's annotation
//              federation.kubernetes.io/status-by-cluster.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/json.h"
#include "client/client.h"

namespace flotilla::federation::sync {

struct SyncKind {
  client::ResourceRef resource;
  std::string kind;  // "ConfigMap"
  // Top-level fields a copy takes from the federated object.
  std::vector<std::string> content;
  // The member fills in defaults in the content: a copy is up to date when
  // it holds every field the federation's object has (JsonContains).
  bool member_defaults = false;
  // A kind federated whole (a custom kind): the content is every top-level
  // field but apiVersion, kind, metadata and status (`content` is unused),
  // the member defaults it, and the copies' status is gathered.
  bool whole = false;
  // A kind federated whole: it has the status subresource.
  bool status_subresource = false;
  // An update sets the content's top-level fields over the member's (which
  // keeps what the member set in them: a claim's volumeName).
  bool merge_content = false;
  // A content field Kubernetes does not let change: a copy whose value
  // differs is deleted and created anew.
  std::string immutable;
  // Nothing but its dependents places an object of the kind that neither
  // its annotations nor a policy place (a claim is storage: one copy in
  // every cluster would provision a volume in each).
  bool follows_dependents = false;
};

// A custom kind federated whole, as its CustomResourceDefinition serves it.
SyncKind WholeKind(client::ResourceRef resource, std::string kind);

// The content fields of `obj` for `kind`: its content, or for a kind
// federated whole the top-level fields of `obj` but apiVersion, kind,
// metadata and status.
std::vector<std::string> ContentOf(const SyncKind& kind, const json::object& obj);

// The annotation federation.kubernetes.io/status-by-cluster for the
// statuses of the managed copies, by cluster (those without one left out):
// compact JSON with the clusters sorted; "" when none has a status.
std::string StatusByCluster(const std::map<std::string, json::value>& statuses);

// Namespaces, ConfigMaps, Secrets, ServiceAccounts, Services, LimitRanges,
// ResourceQuotas, PersistentVolumeClaims, NetworkPolicies, IngressClasses,
// Roles, RoleBindings, CustomResourceDefinitions.
const std::vector<SyncKind>& SyncKinds();

// False for what is the federation's own or exists in every cluster anyway:
// anything in (or being) flotilla-system, kube-system, kube-public or
// kube-node-lease, the default Namespace, service-account-token Secrets,
// `default` ServiceAccounts and the `kubernetes` Service in default.
bool Propagates(const SyncKind& kind, const json::object& federated);

// A federated ResourceQuota's status: each name of its spec.hard with the
// members' status.hard and status.used summed over the copies that reported
// (null: a copy not there yet), so `kubectl describe quota` on the federation
// shows the namespace's use and limits in all the members together; none
// while no member reported. Each member enforces its own copy.
json::object QuotaStatus(const json::object& federated,
                         const std::vector<const json::object*>& copies);

// A federated PersistentVolumeClaim's status: Bound with the copies' access
// modes and the least capacity among them when every copy (at least one)
// is bound; Pending otherwise (no copy: no workload uses it yet, as a
// claim waits for its first consumer).
json::object PersistentVolumeClaimStatus(const json::object& federated,
                                         const std::vector<const json::object*>& copies);

// True when `existing` must be deleted and created anew for `desired`: a
// field Kubernetes does not let change differs.
bool MustReplaceCopy(const SyncKind& kind, const json::object& desired,
                     const json::object& existing);

// The copy to create in a member.
json::object DesiredCopy(const SyncKind& kind, const json::object& federated);

// True when the member's `existing` copy matches `desired` in every field
// the federation propagates (labels, annotations, content).
bool CopyUpToDate(const SyncKind& kind, const json::object& desired, const json::object& existing);

// `existing` with the propagated fields of `desired`, for an update (it
// keeps existing's resourceVersion and the member's allocated fields).
json::object UpdatedCopy(const SyncKind& kind, const json::object& desired,
                         const json::object& existing);

}  // namespace flotilla::federation::sync
