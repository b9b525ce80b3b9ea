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
#pragma once

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
};

// Namespaces, ConfigMaps, Secrets, Services.
const std::vector<SyncKind>& SyncKinds();

// False for what is the federation's own or exists in every cluster anyway:
// anything in (or being) flotilla-system, kube-system, kube-public or
// kube-node-lease, the default Namespace, service-account-token Secrets and
// the `kubernetes` Service in default.
bool Propagates(const SyncKind& kind, const json::object& federated);

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
