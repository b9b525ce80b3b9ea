#include "runtime/controller_history.h"

#include <algorithm>

#include "api/statefulset/revisions.h"

namespace flotilla::runtime {

using api::statefulset::EqualRevision;
using api::statefulset::NewRevision;
namespace {

bool ControlledBy(const json::object& obj, const std::string& uid) {
  const json::value* refs = Find(obj, "metadata.ownerReferences");
  if (refs == nullptr || !refs->is_array()) return false;
  for (const json::value& r : refs->get_array()) {
    if (!r.is_object()) continue;
    const json::object& ref = r.get_object();
    if (StringAt(ref, "uid") == uid && GetBool(ref, "controller").value_or(false)) return true;
  }
  return false;
}

}  // namespace

std::vector<ObjectPtr> ControllerHistory::Owned(const json::object& set) const {
  std::string uid = StringAt(set, "metadata.uid");
  std::vector<ObjectPtr> out;
  for (const ObjectPtr& r : revisions_.lister().ByOwner(uid)) {
    if (ControlledBy(*r, uid)) out.push_back(r);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return IntAt(*a, "revision", 0) < IntAt(*b, "revision", 0);
  });
  return out;
}

StatusOr<json::object> ControllerHistory::CreateOrFind(const json::object& set,
                                                       const json::object& revision) {
  StatusOr<json::object> created = client_.Create(kControllerRevisions, "", revision);
  if (created.ok() || !created.status().Is(Reason::kAlreadyExists)) return created;
  std::string ns = StringAt(revision, "metadata.namespace");
  StatusOr<json::object> existing =
      client_.Get(kControllerRevisions, ns, StringAt(revision, "metadata.name"));
  if (!existing.ok()) return existing.status();
  if (EqualRevision(*existing, revision)) return existing;
  json::object bumped = set;
  json::object& status = EnsureObject(bumped, "status");
  status["collisionCount"] = IntAt(set, "status.collisionCount", 0) + 1;
  StatusOr<json::object> written = client_.UpdateStatus(sets_, "", bumped);
  if (!written.ok()) return written.status();
  return Status::Conflict("controller revision " + StringAt(revision, "metadata.name") +
                          " holds other data; collisionCount raised");
}

StatusOr<Revisions> ControllerHistory::Sync(const json::object& set) {
  std::vector<ObjectPtr> owned = Owned(set);
  int64_t next = owned.empty() ? 1 : IntAt(*owned.back(), "revision", 0) + 1;
  json::object wanted = NewRevision(set, next, IntAt(set, "status.collisionCount", 0), kind_);
  ObjectPtr equal;
  for (const ObjectPtr& r : owned) {
    if (EqualRevision(*r, wanted)) equal = r;
  }
  Revisions out;
  if (equal != nullptr && equal == owned.back()) {
    out.update = *equal;
  } else if (equal != nullptr) {
    // Rolling back to an earlier template makes that revision the newest.
    json::object again = *equal;
    again["revision"] = next;
    StatusOr<json::object> updated = client_.Update(kControllerRevisions, "", again);
    if (!updated.ok()) return updated.status();
    out.update = std::move(*updated);
  } else {
    StatusOr<json::object> created = CreateOrFind(set, wanted);
    if (!created.ok()) return created.status();
    out.update = std::move(*created);
  }
  std::string current_name = StringAt(set, "status.currentRevision");
  out.current = out.update;
  for (const ObjectPtr& r : owned) {
    if (!current_name.empty() && StringAt(*r, "metadata.name") == current_name &&
        current_name != StringAt(out.update, "metadata.name")) {
      out.current = *r;
    }
  }
  return out;
}

Status ControllerHistory::Truncate(const json::object& set, const Revisions& revisions,
                                   const std::set<std::string>& live) {
  std::vector<ObjectPtr> history;
  for (const ObjectPtr& r : Owned(set)) {
    std::string name = StringAt(*r, "metadata.name");
    if (live.contains(name) || name == StringAt(revisions.current, "metadata.name") ||
        name == StringAt(revisions.update, "metadata.name")) {
      continue;
    }
    history.push_back(r);
  }
  int64_t limit = std::max<int64_t>(0, IntAt(set, "spec.revisionHistoryLimit", 10));
  for (size_t i = 0; i + limit < history.size(); ++i) {
    Status s = client_.Delete(kControllerRevisions, StringAt(*history[i], "metadata.namespace"),
                              StringAt(*history[i], "metadata.name"));
    if (!s.ok() && !s.Is(Reason::kNotFound)) return s;
  }
  return Status();
}

}  // namespace flotilla::runtime
