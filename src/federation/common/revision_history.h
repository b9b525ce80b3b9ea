// The ControllerRevisions the federation keeps for a federated StatefulSet
// or DaemonSet (runtime/controller_history.h writes them), so that
// `kubectl rollout history|undo` work on the federation: which are its,
// and their deletion with it.
#pragma once

#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "client/client.h"
#include "runtime/informer.h"

namespace flotilla::federation {

// The revisions of `set` in `revisions` (an informer on the federation's
// ControllerRevisions): named <name>-<hash>, controlled by it or left
// without owner by an orphaning delete of it.
std::vector<runtime::ObjectPtr> RevisionsOf(runtime::Informer& revisions, const json::object& set);

// Deletes the revisions of `set` (asking the server when the cache shows
// none: it may lag one the last check wrote). True once none remain.
StatusOr<bool> DeleteRevisions(client::Client& fed, runtime::Informer& revisions,
                               const json::object& set);

}  // namespace flotilla::federation
