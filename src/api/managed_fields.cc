// The field manager: managedFields on update and apply (managed_fields.h).
#include "api/managed_fields.h"

#include <algorithm>
#include <map>

namespace flotilla::api {
namespace {

using fieldpath::Element;
using fieldpath::Path;
using fieldpath::Set;

constexpr std::string_view kApply = "Apply";
constexpr std::string_view kUpdate = "Update";
constexpr size_t kMaxUpdateManagers = 10;
constexpr std::string_view kAncientChanges = "ancient-changes";
constexpr std::string_view kBeforeFirstApply = "before-first-apply";

// Fields no manager owns: the object's identity and what the server sets.
const Set& ServerFields() {
  static const Set kSet = [] {
    Set s;
    s.Insert({Element::Field("apiVersion")});
    s.Insert({Element::Field("kind")});
    for (const char* f : {"name", "namespace", "creationTimestamp", "selfLink", "uid",
                          "clusterName", "generation", "managedFields", "resourceVersion"}) {
      s.Insert({Element::Field("metadata"), Element::Field(f)});
    }
    return s;
  }();
  return kSet;
}

// The fields no manager owns: the server's and `ignored` (what the
// endpoint resets); `storage` holds their union when it is needed.
const Set& Unowned(const Set& ignored, Set& storage) {
  if (ignored.Empty()) return ServerFields();
  storage = ServerFields().Union(ignored);
  return storage;
}

const json::value* ManagedFieldsOf(const json::object& obj) {
  const json::object* meta = GetObject(obj, "metadata");
  return meta != nullptr ? meta->if_contains("managedFields") : nullptr;
}

json::object* AnnotationsOf(json::object& obj) {
  json::value* meta = obj.if_contains("metadata");
  json::value* a =
      meta != nullptr && meta->is_object() ? meta->as_object().if_contains("annotations") : nullptr;
  return a != nullptr && a->is_object() ? &a->as_object() : nullptr;
}

bool HasUid(const json::object& obj) { return !StringAt(obj, "metadata.uid").empty(); }

std::vector<ManagedFieldsEntry> Decoded(const json::value* v) {
  if (v == nullptr) return {};
  auto entries = DecodeManagedFields(*v);
  return entries.ok() ? std::move(*entries) : std::vector<ManagedFieldsEntry>{};
}

// `[{}]`: the writer asks for the managed fields to be cleared.
bool IsReset(const json::value* v) {
  return v != nullptr && v->is_array() && v->get_array().size() == 1 &&
         v->get_array()[0].is_object() && v->get_array()[0].get_object().empty();
}

// The managed fields a write starts from: what the request sets when it
// sets some (and is not a subresource), else what is stored.
std::vector<ManagedFieldsEntry> StartingPoint(const json::object& live, const json::object& updated,
                                              const FieldManagerRequest& req) {
  if (req.subresource.empty()) {
    const json::value* requested = ManagedFieldsOf(updated);
    if (IsReset(requested)) return {};
    std::vector<ManagedFieldsEntry> mine = Decoded(requested);
    if (!mine.empty()) return mine;
  }
  return Decoded(ManagedFieldsOf(live));
}

void SetManagedFields(json::object& obj, std::vector<ManagedFieldsEntry> entries) {
  json::array encoded = EncodeManagedFields(std::move(entries));
  json::object& meta = EnsureObject(obj, "metadata");
  if (encoded.empty()) {
    meta.erase("managedFields");
  } else {
    meta["managedFields"] = std::move(encoded);
  }
}

ManagedFieldsEntry EntryFor(const FieldManagerRequest& req, std::string_view operation) {
  ManagedFieldsEntry e;
  e.manager = req.manager.empty() ? "unknown" : req.manager;
  e.operation = operation;
  e.api_version = req.api_version;
  e.subresource = req.subresource;
  return e;
}

std::vector<ManagedFieldsEntry>::iterator EntryOf(std::vector<ManagedFieldsEntry>& entries,
                                                  const ManagedFieldsEntry& who) {
  return std::find_if(entries.begin(), entries.end(),
                      [&](const ManagedFieldsEntry& e) { return e.SameManager(who); });
}

void DropEmpty(std::vector<ManagedFieldsEntry>& entries) {
  std::erase_if(entries, [](const ManagedFieldsEntry& e) { return e.fields.Empty(); });
}

// Merges the oldest Update entries into "ancient-changes" (one per API
// version) while there are more than kMaxUpdateManagers of them.
void CapUpdateManagers(std::vector<ManagedFieldsEntry>& entries) {
  std::vector<size_t> updaters;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].operation == kUpdate) updaters.push_back(i);
  }
  if (updaters.size() <= kMaxUpdateManagers) return;
  std::sort(updaters.begin(), updaters.end(), [&](size_t a, size_t b) {
    return std::tie(entries[a].time, entries[a].manager) <
           std::tie(entries[b].time, entries[b].manager);
  });
  std::map<std::string, size_t> bucket;  // API version -> entry index
  size_t count = updaters.size();
  std::vector<size_t> merged;
  for (size_t i : updaters) {
    if (count <= kMaxUpdateManagers) break;
    auto [it, first] = bucket.emplace(entries[i].api_version, i);
    if (first) continue;
    ManagedFieldsEntry& into = entries[it->second];
    into.manager = kAncientChanges;
    into.subresource.clear();
    into.fields = into.fields.Union(entries[i].fields);
    into.time = entries[i].time;
    merged.push_back(i);
    --count;
  }
  std::sort(merged.rbegin(), merged.rend());
  for (size_t i : merged) entries.erase(entries.begin() + static_cast<ptrdiff_t>(i));
}

// How kube-apiserver names a manager in a conflict.
std::string PrintManager(const ManagedFieldsEntry& e) {
  std::string out = "\"" + e.manager + "\"";
  if (!e.subresource.empty()) out += " with subresource \"" + e.subresource + "\"";
  if (e.operation == kUpdate) out += " using " + e.api_version;
  return out;
}

Status ConflictError(const std::vector<std::pair<std::string, Path>>& conflicts) {
  std::vector<StatusCause> causes;
  for (const auto& [manager, path] : conflicts) {
    causes.push_back({"FieldManagerConflict", "conflict with " + manager, PathString(path)});
  }
  std::string message;
  if (conflicts.size() == 1) {
    message = "Apply failed with 1 conflict: conflict with " + conflicts[0].first + ": " +
              PathString(conflicts[0].second);
  } else {
    std::map<std::string, std::vector<std::string>> by_manager;
    for (const auto& [manager, path] : conflicts) by_manager[manager].push_back(PathString(path));
    message = "Apply failed with " + std::to_string(conflicts.size()) + " conflicts: ";
    bool first = true;
    for (const auto& [manager, paths] : by_manager) {
      message += (first ? "" : "\n") + std::string("conflicts with ") + manager + ":";
      for (const std::string& p : paths) message += "\n- " + p;
      first = false;
    }
  }
  return Status(Reason::kConflict, std::move(message), std::move(causes));
}

// The fields of the live object that client-side apply's last-applied
// annotation set and that still hold those values: `kubectl apply
// --server-side` may take them over from the client-side managers.
Set TakeableFromLastApplied(const Typed& typed, const json::object& live) {
  const json::value* annotations = Find(live, "metadata.annotations");
  if (annotations == nullptr || !annotations->is_object()) return {};
  const json::value* last = annotations->get_object().if_contains(kLastAppliedAnnotation);
  if (last == nullptr || !last->is_string()) return {};
  auto parsed = ParseJson(last->get_string());
  if (!parsed.ok() || !parsed->is_object()) return {};
  auto fields = typed.ToFieldSet(*parsed);
  if (!fields.ok()) return {};
  Comparison differs = typed.Compare(*parsed, live);
  return fields->Difference(differs.modified).Difference(differs.added).Difference(differs.removed);
}

// Whether the FieldsV1 tree `fields` has a member that `s` has.
bool Touches(const json::value& fields, const Set& s) {
  if (!fields.is_object()) return false;
  const json::object& o = fields.get_object();
  for (const auto& [e, child] : s.children()) {
    const json::value* sub = o.if_contains(e.Serialize());
    if (sub == nullptr || !sub->is_object()) continue;
    const json::object& node = sub->get_object();
    if (child.member() && (node.empty() || node.contains("."))) return true;
    if (Touches(*sub, child)) return true;
  }
  return false;
}

// Whether every member of `s` is a member of the FieldsV1 tree `fields`.
bool Covers(const json::value& fields, const Set& s) {
  if (!fields.is_object()) return s.children().empty();
  const json::object& o = fields.get_object();
  for (const auto& [e, child] : s.children()) {
    const json::value* sub = o.if_contains(e.Serialize());
    if (sub == nullptr || !sub->is_object()) return false;
    const json::object& node = sub->get_object();
    if (child.member() && !node.empty() && !node.contains(".")) return false;
    if (!Covers(*sub, child)) return false;
  }
  return true;
}

// The entry's sort key, as EncodeManagedFields orders entries.
auto SortKey(const json::object& e) {
  return std::make_tuple(StringAt(e, "operation"), StringAt(e, "time"), StringAt(e, "manager"),
                         StringAt(e, "apiVersion"), StringAt(e, "subresource"));
}

}  // namespace

json::object WithoutManagedFields(json::object obj) {
  if (json::value* meta = obj.if_contains("metadata"); meta != nullptr && meta->is_object()) {
    meta->as_object().erase("managedFields");
  }
  return obj;
}

std::optional<json::array> FieldManager::UpdateStored(const json::value& stored,
                                                      const Comparison& cmp,
                                                      const FieldManagerRequest& req) const {
  // Only the entries the write touches are decoded and written again; the
  // others stay the JSON they were. Anything unusual takes the full path.
  if (!stored.is_array() || stored.get_array().empty()) return std::nullopt;
  Set changed = cmp.modified;
  changed.Add(cmp.added);
  ManagedFieldsEntry self = EntryFor(req, kUpdate);
  std::vector<ManagedFieldsEntry> rewritten;
  std::optional<ManagedFieldsEntry> mine;
  bool mine_kept = false;  // in `out` already, its fields as they were
  json::array out;
  size_t updaters = 0;
  for (const json::value& item : stored.get_array()) {
    if (!item.is_object()) return std::nullopt;
    const json::object& o = item.get_object();
    const json::value* fields = o.if_contains("fieldsV1");
    if (fields == nullptr || !fields->is_object()) return std::nullopt;
    ManagedFieldsEntry header{StringAt(o, "manager"),    StringAt(o, "operation"),
                              StringAt(o, "apiVersion"), StringAt(o, "subresource"),
                              StringAt(o, "time"),       {}};
    if (header.operation != kApply && header.operation != kUpdate) return std::nullopt;
    if (header.operation == kUpdate) ++updaters;
    bool is_mine = header.SameManager(self);
    if (!is_mine && !Touches(*fields, changed) && !Touches(*fields, cmp.removed)) {
      out.push_back(item);
      continue;
    }
    if (is_mine && !changed.Empty() && cmp.removed.Empty() && Covers(*fields, changed)) {
      // The writer changed only fields it owns already (a Lease renewed, a
      // status rewritten): its entry's fields stay as they are, its time
      // moves. Encoded as EncodeManagedFields would, without decoding them.
      json::object kept{{"manager", header.manager},        {"operation", header.operation},
                        {"apiVersion", header.api_version}, {"time", req.now},
                        {"fieldsType", "FieldsV1"},         {"fieldsV1", *fields}};
      if (!header.subresource.empty()) kept["subresource"] = header.subresource;
      out.push_back(std::move(kept));
      mine_kept = true;
      continue;
    }
    auto decoded = Set::FromFieldsV1(*fields);
    if (!decoded.ok()) return std::nullopt;
    header.fields = std::move(*decoded);
    if (is_mine) {
      mine = std::move(header);
      --updaters;
      continue;
    }
    header.fields.Remove(changed);
    header.fields.Remove(cmp.removed);
    if (header.fields.Empty() && header.operation == kUpdate) --updaters;
    rewritten.push_back(std::move(header));
  }
  if (!mine_kept) {
    if (!mine) mine = self;
    mine->fields.Remove(cmp.removed);
    mine->fields.Add(changed);
    if (!changed.Empty()) mine->time = req.now;
    if (!mine->fields.Empty()) ++updaters;
    rewritten.push_back(std::move(*mine));
  }
  if (updaters > kMaxUpdateManagers) return std::nullopt;  // capping decodes them all
  for (json::value& e : EncodeManagedFields(std::move(rewritten))) out.push_back(std::move(e));
  std::stable_sort(out.begin(), out.end(), [](const json::value& a, const json::value& b) {
    return SortKey(a.get_object()) < SortKey(b.get_object());
  });
  return out;
}

bool ManagedFieldsEntry::SameManager(const ManagedFieldsEntry& o) const {
  if (manager != o.manager || operation != o.operation || subresource != o.subresource) {
    return false;
  }
  return operation == kApply || api_version == o.api_version;
}

StatusOr<std::vector<ManagedFieldsEntry>> DecodeManagedFields(const json::value& v) {
  if (!v.is_array()) return Status::BadRequest("metadata.managedFields must be a list");
  std::vector<ManagedFieldsEntry> out;
  for (const json::value& item : v.get_array()) {
    if (!item.is_object())
      return Status::BadRequest("metadata.managedFields: entries must be objects");
    const json::object& o = item.get_object();
    ManagedFieldsEntry e;
    e.manager = GetString(o, "manager").value_or("");
    e.operation = GetString(o, "operation").value_or("");
    e.api_version = GetString(o, "apiVersion").value_or("");
    e.subresource = GetString(o, "subresource").value_or("");
    e.time = GetString(o, "time").value_or("");
    if (e.operation != kApply && e.operation != kUpdate) {
      return Status::BadRequest(
          "metadata.managedFields: operation must be Apply or Update, got \"" + e.operation + "\"");
    }
    std::string_view type = GetString(o, "fieldsType").value_or("FieldsV1");
    if (type != "FieldsV1") {
      return Status::BadRequest("metadata.managedFields: unknown fieldsType \"" +
                                std::string(type) + "\"");
    }
    if (const json::value* fields = o.if_contains("fieldsV1")) {
      FLOTILLA_ASSIGN_OR_RETURN(e.fields, fieldpath::Set::FromFieldsV1(*fields));
    }
    out.push_back(std::move(e));
  }
  return out;
}

json::array EncodeManagedFields(std::vector<ManagedFieldsEntry> entries) {
  DropEmpty(entries);
  std::sort(entries.begin(), entries.end(),
            [](const ManagedFieldsEntry& a, const ManagedFieldsEntry& b) {
              return std::tie(a.operation, a.time, a.manager, a.api_version, a.subresource) <
                     std::tie(b.operation, b.time, b.manager, b.api_version, b.subresource);
            });
  json::array out;
  for (const ManagedFieldsEntry& e : entries) {
    json::object o;
    o.reserve(7);  // all its fields at once: each insert past the capacity moves the rest
    o["manager"] = e.manager;
    o["operation"] = e.operation;
    o["apiVersion"] = e.api_version;
    if (!e.time.empty()) o["time"] = e.time;
    o["fieldsType"] = "FieldsV1";
    o["fieldsV1"] = e.fields.ToFieldsV1();
    if (!e.subresource.empty()) o["subresource"] = e.subresource;
    out.push_back(std::move(o));
  }
  return out;
}

json::object FieldManager::Update(const json::object& live, json::object updated,
                                  const FieldManagerRequest& req) const {
  Set skip_storage;
  const Set& skip = Unowned(req.ignored, skip_storage);
  Comparison cmp = typed_.Compare(live, updated, &skip);
  const json::value* stored = ManagedFieldsOf(live);
  const json::value* requested = ManagedFieldsOf(updated);
  // Whether the write starts from the stored entries: a subresource's
  // always does; a request that sends none, or sends them back unchanged.
  const bool from_stored = !req.subresource.empty() || requested == nullptr ||
                           (stored != nullptr && *requested == *stored);
  if (cmp.added.Empty() && cmp.modified.Empty() && cmp.removed.Empty() && from_stored) {
    // Nothing changed hands: the stored entries stay as they are (none for
    // an object nobody tracks).
    if (stored != nullptr) {
      EnsureObject(updated, "metadata")["managedFields"] = *stored;
    } else {
      SetManagedFields(updated, {});
    }
    return updated;
  }
  if (stored != nullptr && from_stored) {
    if (auto out = UpdateStored(*stored, cmp, req)) {
      EnsureObject(updated, "metadata")["managedFields"] = std::move(*out);
      return updated;
    }
  }
  std::vector<ManagedFieldsEntry> entries = StartingPoint(live, updated, req);
  if (entries.empty() && HasUid(live)) {
    // An object nobody tracks (or whose tracking the writer cleared) stays
    // untracked until it is applied, as in Kubernetes.
    SetManagedFields(updated, {});
    return updated;
  }
  Set changed = cmp.modified;
  changed.Add(cmp.added);
  ManagedFieldsEntry self = EntryFor(req, kUpdate);
  for (ManagedFieldsEntry& e : entries) {
    if (e.SameManager(self)) continue;
    e.fields.Remove(changed);
    e.fields.Remove(cmp.removed);
  }
  auto mine = EntryOf(entries, self);
  if (mine == entries.end()) {
    entries.push_back(self);
    mine = std::prev(entries.end());
  }
  mine->fields.Remove(cmp.removed);
  mine->fields.Add(changed);
  if (!changed.Empty()) mine->time = req.now;
  DropEmpty(entries);
  CapUpdateManagers(entries);
  SetManagedFields(updated, std::move(entries));
  return updated;
}

StatusOr<json::object> FieldManager::Apply(const json::object& live, const json::object& config,
                                           const FieldManagerRequest& req) const {
  std::string version = StringAt(config, "apiVersion");
  if (version != req.api_version) {
    return Status::BadRequest(
        "Incorrect version specified in apply patch. Specified patch version: " + version +
        ", expected: " + req.api_version);
  }
  std::string kind = StringAt(config, "kind");
  if (kind.empty() || (!req.kind.empty() && kind != req.kind)) {
    return Status::BadRequest("the kind of the applied configuration (" + kind +
                              ") does not match the kind of the object (" + req.kind + ")");
  }
  if (ManagedFieldsOf(config) != nullptr) {
    return Status::BadRequest("metadata.managedFields must be nil");
  }
  Set skip_storage;
  const Set& skip = Unowned(req.ignored, skip_storage);
  FLOTILLA_ASSIGN_OR_RETURN(Set applied, typed_.ToFieldSet(config));
  applied = applied.RecursiveDifference(skip);

  json::object base = live;
  std::vector<ManagedFieldsEntry> entries = Decoded(ManagedFieldsOf(live));
  if (entries.empty() && HasUid(live)) {
    // What was there before the first apply belongs to an updater.
    FieldManagerRequest before = req;
    before.manager = kBeforeFirstApply;
    before.subresource.clear();
    base = Update(json::object(), base, before);
    entries = Decoded(ManagedFieldsOf(base));
  }
  base = WithoutManagedFields(std::move(base));

  FLOTILLA_ASSIGN_OR_RETURN(json::value merged, typed_.Merge(base, config));
  ManagedFieldsEntry self = EntryFor(req, kApply);
  Set last;
  auto mine = EntryOf(entries, self);
  if (mine == entries.end()) {
    entries.push_back(self);
    mine = std::prev(entries.end());
  } else {
    last = mine->fields;
  }
  mine->fields = applied;

  // Fields applied last time and not now go, unless someone owns them.
  Set owned;
  for (const ManagedFieldsEntry& e : entries) owned = owned.Union(e.fields);
  merged = typed_.Prune(merged, last.Difference(applied), owned);

  Comparison cmp = typed_.Compare(base, merged, &skip);
  Set changed = cmp.modified;
  changed.Add(cmp.added);
  std::vector<std::pair<std::string, Path>> conflicts;
  for (const ManagedFieldsEntry& e : entries) {
    if (e.SameManager(self)) continue;
    e.fields.Intersection(changed).ForEach(
        [&](const Path& p) { conflicts.emplace_back(PrintManager(e), p); });
  }
  if (!conflicts.empty() && !req.force) {
    // `kubectl apply --server-side` over client-side apply takes over the
    // fields its last-applied annotation still describes.
    Set takeable = req.manager == "kubectl" ? TakeableFromLastApplied(typed_, base) : Set();
    std::erase_if(conflicts, [&](const auto& c) { return takeable.Has(c.second); });
    if (!conflicts.empty()) return ConflictError(conflicts);
  }
  for (ManagedFieldsEntry& e : entries) {
    if (e.SameManager(self)) continue;
    e.fields.Remove(changed);
    e.fields.Remove(cmp.removed);
  }
  mine = EntryOf(entries, self);
  if (mine->time.empty() || !changed.Empty() || !cmp.removed.Empty()) mine->time = req.now;
  DropEmpty(entries);

  json::object out = std::move(merged.as_object());
  json::object* annotations = AnnotationsOf(out);
  if (req.manager == "kubectl" && annotations != nullptr &&
      annotations->contains(kLastAppliedAnnotation)) {
    // Keeps client-side apply's annotation in step with what was applied.
    json::object recorded = config;
    if (json::object* a = AnnotationsOf(recorded)) a->erase(kLastAppliedAnnotation);
    (*annotations)[kLastAppliedAnnotation] = json::serialize(recorded);
  }
  SetManagedFields(out, std::move(entries));
  return out;
}

}  // namespace flotilla::api
