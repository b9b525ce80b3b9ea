#include "apiserver/custom_resources.h"

#include <algorithm>
#include <map>

#include "api/conditions.h"
#include "api/crd/crd.h"
#include "api/kinds/kinds.h"
#include "api/views.h"
#include "apiserver/meta.h"
#include "base/log.h"

namespace flotilla::apiserver {
namespace {

// One condition as the status should hold it, keeping lastTransitionTime
// when the status did not change.
json::object Condition(const json::object& current, const std::string& type, bool ok,
                       const std::string& reason, const std::string& message,
                       const std::string& now) {
  std::string status = ok ? "True" : "False";
  std::string since = now;
  if (const json::object* was = api::ConditionOf(current, type)) {
    if (StringAt(*was, "status") == status) since = StringAt(*was, "lastTransitionTime");
  }
  return json::object{{"type", type},
                      {"status", status},
                      {"lastTransitionTime", since},
                      {"reason", reason},
                      {"message", message}};
}

json::object AcceptedNames(const api::crd::Definition& d) {
  json::object names{
      {"plural", d.plural}, {"singular", d.singular}, {"kind", d.kind}, {"listKind", d.list_kind}};
  if (!d.short_names.empty()) names["shortNames"] = ToJsonArray(d.short_names);
  if (!d.categories.empty()) names["categories"] = ToJsonArray(d.categories);
  return names;
}

}  // namespace

CustomResources::CustomResources(Objects& objects, const api::Resource& crds, Publish publish,
                                 const api::Resource* cluster_roles, Duration recheck)
    : objects_(objects),
      crds_(crds),
      publish_(std::move(publish)),
      cluster_roles_(cluster_roles),
      recheck_(recheck) {}

CustomResources::~CustomResources() { Stop(); }

Status CustomResources::Start() {
  FLOTILLA_ASSIGN_OR_RETURN(storage::ListResult list,
                            objects_.store().List(Objects::Prefix(crds_, ""), {}));
  // The first pass here, before the watch exists (so that no pass it
  // triggers runs beside this one); the watch starts at the listed
  // revision, so what changed meanwhile (this pass's status writes too)
  // brings another.
  Sync();
  FLOTILLA_ASSIGN_OR_RETURN(
      watcher_,
      objects_.store().Watch(Objects::Prefix(crds_, ""), list.revision,
                             [this](const std::vector<storage::Event>&) { trigger_.Kick(); }));
  return Status::Ok();
}

void CustomResources::Stop() {
  if (watcher_) watcher_->Stop();
  retry_.Cancel();
  trigger_.Stop();
}

void CustomResources::Sync() {
  auto page = objects_.List(crds_, "", {});
  if (!page.ok()) {
    spdlog::warn("custom resources: listing CustomResourceDefinitions failed: {}",
                 page.status().ToString());
    retry_.ArmAfter(recheck_);
    return;
  }
  std::vector<json::object>& crds = page->items;
  std::sort(crds.begin(), crds.end(), [](const json::object& a, const json::object& b) {
    return std::make_pair(StringAt(a, "metadata.creationTimestamp"), StringAt(a, "metadata.name")) <
           std::make_pair(StringAt(b, "metadata.creationTimestamp"), StringAt(b, "metadata.name"));
  });
  struct Entry {
    json::object obj;
    api::crd::Definition def;
    std::vector<std::string> conflicts;
  };
  std::vector<Entry> entries;
  std::vector<std::shared_ptr<api::Resource>> served;
  std::string signature;  // what is served: the accepted CRDs' specs
  json::array rules;      // what the federation's controllers may do with them
  for (json::object& obj : crds) {
    auto def = api::crd::Read(obj);
    if (!def.ok()) {
      spdlog::warn("custom resources: {} cannot be served: {}", StringAt(obj, "metadata.name"),
                   def.status().ToString());
      continue;
    }
    Entry e{std::move(obj), *std::move(def), {}};
    for (const Entry& earlier : entries) {
      if (!earlier.conflicts.empty()) continue;
      for (std::string& n : api::crd::ConflictingNames(e.def, earlier.def)) {
        e.conflicts.push_back(std::move(n));
      }
    }
    if (e.conflicts.empty()) {
      for (auto& r : api::CustomResources(e.def)) served.push_back(std::move(r));
      signature += json::serialize(e.obj.at("spec")) + "\n";
      rules.push_back(json::object{{"apiGroups", json::array{json::value(e.def.group)}},
                                   {"resources", json::array{json::value(e.def.plural),
                                                             json::value(e.def.plural + "/status"),
                                                             json::value(e.def.plural + "/scale")}},
                                   {"verbs", json::array{"*"}}});
    }
    entries.push_back(std::move(e));
  }
  // Served before anyone sees Established; published again only when what
  // is served changed (not for a status write).
  if (!published_ || signature != published_signature_) {
    publish_(served);
    published_ = true;
    published_signature_ = std::move(signature);
  }
  bool again = cluster_roles_ != nullptr && !GrantControllers(rules);

  const std::string now = FormatRfc3339(objects_.clock().Now());
  for (Entry& e : entries) {
    const std::string name = e.def.name;
    json::object status;
    const json::object* current = GetObject(e.obj, "status");
    json::object was = current ? *current : json::object{};
    bool accepted = e.conflicts.empty();
    json::array conditions;
    std::string message =
        accepted ? "no conflicts found" : "\"" + e.conflicts.front() + "\" is already in use";
    conditions.push_back(Condition(e.obj, "NamesAccepted", accepted,
                                   accepted ? "NoConflicts" : "NameConflict", message, now));
    conditions.push_back(Condition(
        e.obj, "Established", accepted, accepted ? "InitialNamesAccepted" : "NotAccepted",
        accepted ? "the initial names have been accepted" : "not all names are accepted", now));
    bool deleting = api::IsBeingDeleted(e.obj);
    if (deleting) {
      conditions.push_back(Condition(e.obj, "Terminating", true, "InstanceDeletionInProgress",
                                     "CustomResource deletion is in progress", now));
    }
    status["conditions"] = std::move(conditions);
    status["acceptedNames"] = accepted ? AcceptedNames(e.def) : json::object{};
    std::vector<std::string> stored = StringsAt(was, "storedVersions");
    const api::crd::Version* storage = e.def.StorageVersion();
    if (storage != nullptr &&
        std::find(stored.begin(), stored.end(), storage->name) == stored.end()) {
      stored.push_back(storage->name);
    }
    status["storedVersions"] = ToJsonArray(stored);
    if (json::value(status) != json::value(was)) {
      json::object updated = e.obj;
      updated["status"] = std::move(status);
      auto written = objects_.Update(crds_, "", name, "status", std::move(updated), {});
      if (!written.ok()) {
        // A conflict means a newer CRD is on its way: its event kicks again.
        if (!written.status().Is(Reason::kConflict)) {
          spdlog::warn("custom resources: status of {}: {}", name, written.status().ToString());
        }
        again = true;
        continue;
      }
      e.obj = *std::move(written);
    }
    if (!deleting || !api::ObjectView(e.obj).HasFinalizer(api::crd::kCleanupFinalizer)) continue;
    // Its objects go first: any served version reaches the storage.
    std::vector<std::shared_ptr<api::Resource>> own = api::CustomResources(e.def);
    if (!own.empty() && !CleanUp(*own.front())) {
      again = true;
      continue;
    }
    auto fresh = objects_.Get(crds_, "", name);
    if (!fresh.ok()) continue;
    json::object updated = *fresh;
    RemoveFinalizer(updated, api::crd::kCleanupFinalizer);
    auto written = objects_.Update(crds_, "", name, "", std::move(updated), {});
    if (!written.ok() && !written.status().Is(Reason::kNotFound)) again = true;
  }
  if (again) retry_.ArmAfter(recheck_);
}

bool CustomResources::GrantControllers(const json::array& rules) {
  if (granted_ == rules) return true;
  json::object role{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                    {"kind", "ClusterRole"},
                    {"metadata", json::object{{"name", kControllerRole}}},
                    {"rules", rules}};
  auto current = objects_.Get(*cluster_roles_, "", kControllerRole);
  Status written = current.status();
  if (current.ok()) {
    json::object updated = *current;
    updated["rules"] = rules;
    written =
        objects_.Update(*cluster_roles_, "", kControllerRole, "", std::move(updated), {}).status();
  } else if (current.status().Is(Reason::kNotFound)) {
    written = objects_.Create(*cluster_roles_, "", std::move(role), {}).status();
  }
  if (!written.ok()) {
    spdlog::warn("custom resources: writing ClusterRole {}: {}", kControllerRole,
                 written.ToString());
    return false;
  }
  granted_ = rules;
  return true;
}

bool CustomResources::CleanUp(const api::Resource& res) {
  auto page = objects_.List(res, "", {});
  if (!page.ok()) return false;
  bool gone = true;
  for (const json::object& obj : page->items) {
    if (api::IsBeingDeleted(obj)) {
      gone = false;  // waits on its own finalizers
      continue;
    }
    auto deleted = objects_.Delete(res, StringAt(obj, "metadata.namespace"),
                                   StringAt(obj, "metadata.name"), {});
    if (!deleted.ok()) {
      if (!deleted.status().Is(Reason::kNotFound)) gone = false;
      continue;
    }
    if (Find(*deleted, "metadata.deletionTimestamp") != nullptr) gone = false;
  }
  return gone;
}

}  // namespace flotilla::apiserver
