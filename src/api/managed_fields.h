// metadata.managedFields: which field manager owns which fields of an
// object, and how each write changes that, as kube-apiserver's field
// manager does (server-side apply).
//
//  - Update (create, update, a non-apply patch): the writer's `Update` entry
//    gains every field the write added or changed; every other entry loses
//    them, and every entry loses the fields the write removed.
//  - Apply: the applied configuration is merged into the live object by the
//    schema (typed.h); the applier's `Apply` entry becomes exactly the fields
//    of its configuration; fields it applied last time and no longer does
//    are removed from the object unless another manager owns them; changing
//    a field another manager owns is a conflict (409) unless forced, which
//    moves the field to the applier. Applying the same value another manager
//    set shares the field.
//
// Entries are keyed by manager, operation and subresource (and API version
// for updates), written sorted as kube-apiserver does (Apply before Update,
// then by time). A writer's own request may set managedFields (`[{}]`
// clears them). Objects without managedFields that are updated are left
// untracked until they are applied, as in Kubernetes; the first apply
// records what was there as "before-first-apply".
//
// Pure functions over values; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/fieldpath.h"
#include "api/typed.h"
#include "base/json.h"
#include "base/status.h"

namespace flotilla::api {

inline constexpr std::string_view kLastAppliedAnnotation =
    "kubectl.kubernetes.io/last-applied-configuration";

struct ManagedFieldsEntry {
  std::string manager;
  std::string operation;  // "Apply" or "Update"
  std::string api_version;
  std::string subresource;  // "" for the main resource
  std::string time;         // RFC 3339; "" when not known
  fieldpath::Set fields;

  // Whether `o` is the same manager (the entry a write of it replaces).
  bool SameManager(const ManagedFieldsEntry& o) const;
};

// Parses metadata.managedFields. BadRequest when it is not a list of
// entries with FieldsV1 sets.
StatusOr<std::vector<ManagedFieldsEntry>> DecodeManagedFields(const json::value& v);
// The entries sorted and serialized; empty entries are left out.
json::array EncodeManagedFields(std::vector<ManagedFieldsEntry> entries);
// `obj` without its metadata.managedFields (what a view of another
// server's objects keeps: the managers are that server's).
json::object WithoutManagedFields(json::object obj);

// One write as the field manager sees it.
struct FieldManagerRequest {
  std::string manager;      // the fieldManager; "" is "unknown"
  std::string api_version;  // the object's apiVersion, e.g. "apps/v1"
  std::string kind;         // the object's kind; apply checks it when set
  std::string subresource;  // "", "status" or "scale"
  std::string now;          // RFC 3339
  bool force = false;       // apply only: take conflicting fields over
  // Fields the endpoint resets and nobody owns through it (the main
  // resource's status, or everything but status through /status).
  fieldpath::Set ignored;
};

class FieldManager {
 public:
  explicit FieldManager(Typed typed) : typed_(typed) {}

  // Records a create (`live` empty), update or non-apply patch: `updated`
  // is the object about to be stored; it is returned with its
  // managedFields.
  json::object Update(const json::object& live, json::object updated,
                      const FieldManagerRequest& req) const;

  // Applies `config` to `live` (empty for a create). Returns the object to
  // store with its managedFields. Conflict (409, every conflicting field
  // and its manager as kube-apiserver words it) unless req.force;
  // BadRequest for a configuration of another apiVersion or kind, one that
  // sets managedFields, or lists without their keys.
  StatusOr<json::object> Apply(const json::object& live, const json::object& config,
                               const FieldManagerRequest& req) const;

 private:
  // Update's common case: the stored entries with the write's changes,
  // decoding only the entries it touches; nullopt when they need the full
  // path (malformed entries, too many updaters).
  std::optional<json::array> UpdateStored(const json::value& stored, const Comparison& cmp,
                                          const FieldManagerRequest& req) const;

  Typed typed_;
};

}  // namespace flotilla::api
