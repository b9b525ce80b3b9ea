// What every propagating federation controller does to the metadata of the
// copies it writes into member clusters (DESIGN §3, docs/federation.md
// "Propagation"): a copy carries the federated object's name, namespace,
// labels and annotations, minus the federation-only annotations, plus the
// managed-by label and the federated-object annotation that tell the
// federation it may update or delete the copy. A member object without the
// label is never touched.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/json.h"

namespace flotilla::federation {

// "<namespace>/<name>", or "<name>" for a cluster-scoped object: the value
// of api::kFederatedObjectAnnotation on its copies.
std::string FederatedObjectKey(const json::object& federated);

// True for annotations that steer the federation and mean nothing to a
// member (cluster selector, deletion propagation, replica placement
// preferences, a kind's status breakdown): every annotation in the
// federation's domains, federation.kubernetes.io/ and
// federation.alpha.kubernetes.io/, and the propagation policy's record
// (propagationpolicy.karmada.io/, clusterpropagationpolicy.karmada.io/).
// They are not copied; a new kind's annotations need no declaration.
bool IsFederationOnlyAnnotation(std::string_view key);

// Metadata for a member copy of `federated`: name, namespace (when it has
// one), labels, annotations without the federation-only ones, stamped as
// managed. Nothing else (no uid, resourceVersion, finalizers, owners).
json::object MemberMetadata(const json::object& federated);

// Adds the managed-by label and the federated-object annotation to
// `member_obj`'s metadata.
void MarkManaged(json::object& member_obj, const json::object& federated);

// True when `member_obj` carries api::kManagedByLabel = api::kManagedByValue.
bool IsManaged(const json::object& member_obj);

}  // namespace flotilla::federation
