// How a federated object's deletion reaches its member copies (DESIGN §3,
// docs/federation.md "Deletion"). A controller that propagates an object
// holds api::kDeleteFromUnderlyingClustersFinalizer on it; when the object
// is deleted the API server records the DELETE's propagation policy in
// api::kDeletionPropagationAnnotation. Orphan (also a DELETE without
// policy) leaves the copies; Background and Foreground delete the managed
// copies. Once the copies are dealt with, the controller removes its
// finalizer and the object goes.
//
// Thread-safe; the client calls are single writes that fail with Conflict
// when the object changed meanwhile (the caller requeues).
#pragma once

#include "base/json.h"
#include "base/status.h"
#include "client/client.h"

namespace flotilla::federation {

bool HasFinalizer(const json::object& obj, std::string_view finalizer);

// True when the deletion of `obj` (being deleted) must delete its managed
// member copies: its deletion-propagation annotation says Background or
// Foreground. Absent or Orphan keeps them.
bool DeletesMemberCopies(const json::object& obj);

// Whether `obj` lacks api::kDeleteFromUnderlyingClustersFinalizer and is not
// being deleted: what AddFederationFinalizer would change.
bool NeedsFederationFinalizer(const json::object& obj);

// Adds api::kDeleteFromUnderlyingClustersFinalizer to `obj` in place unless
// it has it or is being deleted; true when it added it. The federation's
// admission adds it so to a new object, in the create itself.
bool AddFederationFinalizer(json::object& obj);

// Removes that finalizer from the stored `obj` when it has it; returns the
// object as stored afterwards (`obj` itself when nothing was written). The
// update carries obj's resourceVersion. NotFound (the object is already
// gone) is OK.
StatusOr<json::object> RemoveFederationFinalizer(client::Client& client,
                                                 const client::ResourceRef& resource,
                                                 const json::object& obj);

}  // namespace flotilla::federation
