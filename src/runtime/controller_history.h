// A StatefulSet's or DaemonSet's revision history (stateful_set_control.go's
// getStatefulSetRevisions and truncateHistory, on pkg/controller/history)
// over apps/v1 ControllerRevisions: finds or creates the revision of the
// set's current template (the update revision), looks up the one
// status.currentRevision names, and deletes the oldest revisions that no pod
// uses beyond spec.revisionHistoryLimit. The members' StatefulSet and DaemonSet
// controllers and the federated ones keep their histories with it.
#pragma once

#include <set>
#include <string>

#include "api/statefulset/revisions.h"
#include "client/client.h"
#include "client/resources.h"
#include "runtime/informer.h"

namespace flotilla::runtime {

using client::kControllerRevisions;

struct Revisions {
  json::object current;
  json::object update;
};

class ControllerHistory {
 public:
  // `client` and `revisions` (an informer on ControllerRevisions) must
  // outlive it; the sets are apps/v1 objects of `kind` served as `sets`.
  ControllerHistory(client::Client& client, Informer& revisions,
                    const client::ResourceRef& sets = client::kStatefulSets,
                    std::string kind = "StatefulSet")
      : client_(client), revisions_(revisions), sets_(sets), kind_(std::move(kind)) {}

  // The current and update revisions of `set`. When the name of a new
  // revision is taken by other data (a hash collision), bumps
  // status.collisionCount on the server and returns Conflict so that the
  // caller tries again with the new count.
  StatusOr<Revisions> Sync(const json::object& set);

  // Deletes the oldest revisions beyond revisionHistoryLimit, sparing
  // `live` (revision names pods carry) and the current and update ones.
  Status Truncate(const json::object& set, const Revisions& revisions,
                  const std::set<std::string>& live);

 private:
  std::vector<ObjectPtr> Owned(const json::object& set) const;
  StatusOr<json::object> CreateOrFind(const json::object& set, const json::object& revision);

  client::Client& client_;
  Informer& revisions_;
  const client::ResourceRef sets_;
  const std::string kind_;
};

}  // namespace flotilla::runtime
