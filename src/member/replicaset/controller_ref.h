// Controller references, as client-go's ControllerRefManager handles them:
// a workload claims the objects its selector matches (adopting orphans,
// releasing owned objects that no longer match) and ignores objects another
// controller owns. Shared by the ReplicaSet controller (claiming pods) and
// the Deployment controller (claiming ReplicaSets).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "api/labels.h"
#include "base/json.h"
#include "base/status.h"
#include "client/client.h"
#include "runtime/cache.h"

namespace flotilla::member {

struct ClaimRequest {
  const client::ResourceRef* resource;  // of the objects claimed
  const json::object* owner;
  std::string owner_api_version;
  std::string owner_kind;
  const api::LabelSelector* selector;
  // Checked once before the first adoption (client-go's
  // RecheckDeletionTimestamp: a fresh read of the owner, still there, same
  // uid, not being deleted).
  std::function<Status()> can_adopt;
};

struct ClaimResult {
  std::vector<runtime::ObjectPtr> claimed;  // owned and matching, adoptions included
  Status error;                             // the first failed adoption or release
};

// Claims `candidates` for req.owner: owned and matching objects are kept;
// owned objects that no longer match are released (a strategic merge patch
// deleting the ownerReference); orphans that match and are not being deleted
// are adopted (a patch adding a controller ref, with the object's uid as a
// precondition). An owner being deleted adopts and releases nothing.
ClaimResult ClaimObjects(client::Client& client, const ClaimRequest& req,
                         const std::vector<runtime::ObjectPtr>& candidates);

// An index of the objects no controller owns, by namespace.
inline constexpr char kControllerlessIndex[] = "controllerless";
std::vector<std::string> ControllerlessValues(const json::object& obj);
// What `owner` may claim among a cache's objects (which carry
// kControllerlessIndex): those with an ownerReference to it, and those no
// controller owns in its namespace; in key order. The same as every object
// of the namespace for ClaimObjects, without looking at the objects other
// controllers own. Each object once, even when the cache changes meanwhile.
std::vector<runtime::ObjectPtr> ClaimCandidates(const runtime::Lister& lister,
                                                const json::object& owner);

// The objects of namespace `ns` whose controller (ownerReference with
// controller true) is the object with uid `owner_uid`, in key order: what a
// controller's sync reads of what it owns, through the owner index, so a
// sync costs the owner's own objects and not a pass over its namespace.
std::vector<runtime::ObjectPtr> ControlledBy(const runtime::Lister& lister, std::string_view ns,
                                             std::string_view owner_uid);

}  // namespace flotilla::member
