// The RBAC objects a new server starts with, as data: Kubernetes' default
// roles (cluster-admin, admin, edit, view built by aggregation from
// system:aggregate-to-*, system:discovery, system:public-info-viewer,
// system:basic-user, system:monitoring) with the bindings Kubernetes gives
// them, plus Flotilla's: the federation kinds in the aggregated roles, the
// federation controllers' role and identity, and the read-only group bound
// to view. docs/security.md lists them.
#pragma once

#include <string_view>
#include <vector>

#include "apiserver/rbac.h"
#include "base/json.h"

namespace flotilla::apiserver::rbac {

// ClusterRoles first, then ClusterRoleBindings; each carries apiVersion,
// kind, metadata (labels kubernetes.io/bootstrapping=rbac-defaults and the
// annotation rbac.authorization.kubernetes.io/autoupdate=true) and its body.
const std::vector<json::object>& BootstrapPolicy();

// The same, with the federation controllers' ClusterRole also granting every
// verb on every resource of `controller_groups` (the API groups of the kinds
// the federation propagates, from the kinds' declarations; those already
// named are not repeated). rbac.authorization.k8s.io is never added: the
// controllers' identity holds nothing in RBAC.
std::vector<json::object> BootstrapPolicy(const std::vector<std::string>& controller_groups);

// The policy a new server decides by: the objects above, aggregated.
Policy BootstrappedPolicy();

}  // namespace flotilla::apiserver::rbac
