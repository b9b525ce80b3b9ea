// StatefulSet revisions as apps/v1 ControllerRevisions, as the StatefulSet
// controller keeps them (pkg/controller/history): a revision's data is the
// patch that restores the set's pod template,
// {"spec":{"template":{...,"$patch":"replace"}}}, so `kubectl rollout undo`
// can apply it; its name is "<set>-<hash>", the hash being FNV-1 32 of that
// data (plus the set's collisionCount) encoded as rand.SafeEncodeString.
// Shared by the members' StatefulSet and DaemonSet controllers and the
// federation's.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "base/json.h"

namespace flotilla::api::statefulset {

// The revision data for `set`'s current spec.template.
json::object RevisionData(const json::object& set);

// controller.HashControllerRevision: fnv32 of the canonical data, then the
// collision count in decimal, then SafeEncodeString of the decimal sum.
std::string RevisionHash(const json::object& data, int64_t collision_count);

// A ControllerRevision for `set`, an apps/v1 object of `kind` (a
// DaemonSet's revisions are made the same way; labels: the template's plus
// controller.kubernetes.io/hash; controller ownerReference to the set).
json::object NewRevision(const json::object& set, int64_t revision, int64_t collision_count,
                         std::string_view kind = "StatefulSet");

// Whether two revisions hold the same data (history.EqualRevision).
bool EqualRevision(const json::object& a, const json::object& b);

// `set` with its spec.template replaced by the one `revision` records.
json::object ApplyRevision(const json::object& set, const json::object& revision);

}  // namespace flotilla::api::statefulset
