// Strategic merge patch, following apimachinery's
// strategicpatch.StrategicMergeMapPatch (the server side of kubectl patch and
// kubectl apply) step by step: $patch directives on maps, $retainKeys, then
// $setElementOrder lists, then every other key. Lists merge by merge key or
// as sets and are put in the order apimachinery produces: patch items in
// patch order, server-only items slotted in by their order on the server.
//
// Deliberate differences, all on malformed or meaningless input (see
// docs/api-machinery.md): values added where the original has nothing are
// cleaned like merged ones (nulls dropped, directives applied) instead of
// being stored raw; $deleteFromPrimitiveList on an absent list does nothing;
// `$patch: merge` on a map is accepted as the default; errors kube-apiserver
// reports as 500 are 400 here.
#include <unordered_set>

#include "api/patch.h"
#include "api/strategic_merge_order.h"

namespace flotilla::api {
namespace {

using smp::CheckElementTypes;
using smp::Entry;
using smp::Identities;
using smp::Identity;
using smp::IndexMap;
using smp::IndexOf;
using smp::Render;

constexpr std::string_view kDirective = "$patch";
constexpr std::string_view kRetainKeys = "$retainKeys";
constexpr std::string_view kDeleteFromPrimitiveList = "$deleteFromPrimitiveList/";
constexpr std::string_view kSetElementOrder = "$setElementOrder/";

using Path = std::vector<std::string>;

Path Child(const Path& path, std::string_view key) {
  Path out = path;
  out.emplace_back(key);
  return out;
}

Status BadRequest(std::string message) { return Status::BadRequest(std::move(message)); }

// Whether one of the comma-separated strategies is `name`.
bool HasStrategy(std::string_view strategies, std::string_view name) {
  while (true) {
    size_t comma = strategies.find(',');
    if (strategies.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) return false;
    strategies.remove_prefix(comma + 1);
  }
}

// The value of an object's "$patch" member, if any.
const json::value* DirectiveOf(const json::value& v) {
  return v.is_object() ? v.get_object().if_contains(kDirective) : nullptr;
}

bool IsDirective(const json::value* d, std::string_view name) {
  return d != nullptr && d->is_string() && d->get_string() == name;
}

std::string RenderDirective(const json::value& d) {
  return d.is_string() ? std::string(d.get_string()) : Render(d);
}

std::string PathString(const Path& path) {
  std::string out;
  for (const std::string& p : path) out += (out.empty() ? "" : ".") + p;
  return out;
}

class Merger {
 public:
  explicit Merger(const PatchInfoLookup& lookup) : lookup_(lookup) {}

  StatusOr<json::object> MergeMap(json::object original, json::object patch, const Path& path) {
    if (const json::value* d = patch.if_contains(kDirective)) {
      if (IsDirective(d, "delete")) return json::object();
      if (!IsDirective(d, "replace") && !IsDirective(d, "merge")) {
        return BadRequest("unknown patch type: " + RenderDirective(*d) +
                          " in map: " + Render(patch));
      }
      if (IsDirective(d, "replace")) original.clear();
      patch.erase(kDirective);
    }
    FLOTILLA_RETURN_IF_ERROR(ApplyRetainKeys(original, patch));
    FLOTILLA_RETURN_IF_ERROR(ApplySetElementOrder(original, patch, path));
    for (auto& [key, value] : patch) {
      FLOTILLA_RETURN_IF_ERROR(MergeField(original, key, std::move(value), path));
    }
    return original;
  }

 private:
  FieldPatchInfo Info(const Path& path) const { return lookup_ ? lookup_(path) : FieldPatchInfo{}; }

  // A patch value for a place the original does not have.
  StatusOr<json::value> Fresh(json::value value, const Path& path) {
    if (value.is_object()) {
      FLOTILLA_ASSIGN_OR_RETURN(json::object obj,
                                MergeMap(json::object(), std::move(value.get_object()), path));
      return json::value(std::move(obj));
    }
    if (!value.is_array()) return value;
    FieldPatchInfo info = Info(path);
    bool merge_list = HasStrategy(info.strategy, "merge") && !info.merge_key.empty();
    json::array out;
    for (json::value& item : value.get_array()) {
      if (merge_list && DirectiveOf(item) != nullptr) continue;  // nothing to delete or replace
      FLOTILLA_ASSIGN_OR_RETURN(json::value fresh, Fresh(std::move(item), path));
      out.push_back(std::move(fresh));
    }
    return json::value(std::move(out));
  }

  Status MergeField(json::object& original, std::string_view key, json::value value,
                    const Path& path) {
    if (key.starts_with(kDeleteFromPrimitiveList)) {
      return DeleteFromPrimitiveList(original, key.substr(kDeleteFromPrimitiveList.size()), value);
    }
    if (value.is_null()) {
      original.erase(key);
      return Status::Ok();
    }
    Path child = Child(path, key);
    json::value* existing = original.if_contains(key);
    bool both_objects = existing != nullptr && existing->is_object() && value.is_object();
    bool both_lists = existing != nullptr && existing->is_array() && value.is_array();
    FieldPatchInfo info = both_objects || both_lists ? Info(child) : FieldPatchInfo{};
    if (both_objects && !HasStrategy(info.strategy, "replace")) {
      FLOTILLA_ASSIGN_OR_RETURN(
          json::object merged,
          MergeMap(std::move(existing->get_object()), std::move(value.get_object()), child));
      original[key] = std::move(merged);
    } else if (both_lists && HasStrategy(info.strategy, "merge")) {
      FLOTILLA_ASSIGN_OR_RETURN(
          json::array merged,
          MergeList(std::move(existing->get_array()), std::move(value.get_array()), info, child));
      original[key] = std::move(merged);
    } else {
      FLOTILLA_ASSIGN_OR_RETURN(json::value fresh, Fresh(std::move(value), child));
      original[key] = std::move(fresh);
    }
    return Status::Ok();
  }

  static Status DeleteFromPrimitiveList(json::object& original, std::string_view key,
                                        const json::value& to_delete) {
    if (!to_delete.is_array()) return BadRequest("invalid patch format of primitive list");
    json::value* list = original.if_contains(key);
    if (list == nullptr || !list->is_array()) return Status::Ok();
    std::unordered_set<std::string> doomed;
    for (const json::value& v : to_delete.get_array()) doomed.insert(Render(v));
    json::array& items = list->get_array();
    json::array kept;
    for (json::value& item : items) {
      if (!doomed.contains(Render(item))) kept.push_back(std::move(item));
    }
    items = std::move(kept);
    return Status::Ok();
  }

  // $retainKeys: drop original keys not listed; every non-null patch key
  // must be listed.
  static Status ApplyRetainKeys(json::object& original, json::object& patch) {
    const json::value* retain = patch.if_contains(kRetainKeys);
    if (retain == nullptr) return Status::Ok();
    if (!retain->is_array()) return BadRequest("invalid patch format of retainKeys");
    std::unordered_set<std::string> keep;
    for (const json::value& k : retain->get_array()) {
      if (k.is_string()) keep.emplace(k.get_string());
    }
    patch.erase(kRetainKeys);
    for (const auto& [key, value] : patch) {
      if (value.is_null() || key.starts_with(kDeleteFromPrimitiveList) ||
          key.starts_with(kSetElementOrder) || keep.contains(std::string(key))) {
        continue;
      }
      return BadRequest("invalid patch format of retainKeys: field \"" + std::string(key) +
                        "\" is in the patch but not in $retainKeys");
    }
    std::vector<std::string> drop;
    for (const auto& kv : original) {
      if (!keep.contains(std::string(kv.key()))) drop.emplace_back(kv.key());
    }
    for (const std::string& key : drop) original.erase(key);
    return Status::Ok();
  }

  Status ApplySetElementOrder(json::object& original, json::object& patch, const Path& path) {
    std::vector<std::string> keys;
    for (const auto& kv : patch) {
      if (kv.key().starts_with(kSetElementOrder)) keys.emplace_back(kv.key());
    }
    for (const std::string& key : keys) {
      json::value order = std::move(patch[key]);
      patch.erase(key);
      if (!order.is_array()) return BadRequest("invalid patch format of setElementOrder list");
      std::string field = key.substr(kSetElementOrder.size());
      FLOTILLA_RETURN_IF_ERROR(OrderField(original, patch, field, order.get_array(), path));
    }
    return Status::Ok();
  }

  // Merges patch[field] into original[field] and orders the result by the
  // $setElementOrder list `order`.
  Status OrderField(json::object& original, json::object& patch, const std::string& field,
                    const json::array& order, const Path& path) {
    Path child = Child(path, field);
    FieldPatchInfo info = Info(child);
    json::value* orig = original.if_contains(field);
    json::value* pat = patch.if_contains(field);
    if ((orig != nullptr && !orig->is_array()) || (pat != nullptr && !pat->is_array())) {
      return BadRequest("invalid patch format of setElementOrder list: " + field +
                        " is not a list");
    }
    FLOTILLA_RETURN_IF_ERROR(
        CheckOrderMatchesPatch(pat ? pat->get_array() : json::array(), order, info.merge_key));
    if (orig == nullptr && pat == nullptr) return Status::Ok();
    json::array server = orig ? orig->get_array() : json::array();
    json::array merged = server;
    if (pat != nullptr) {
      // mergeSliceHandler: merge lists merge, others are replaced by the patch.
      json::value list = std::move(*pat);
      if (orig != nullptr && HasStrategy(info.strategy, "merge")) {
        FLOTILLA_ASSIGN_OR_RETURN(merged,
                                  MergeList(server, std::move(list.get_array()), info, child));
      } else {
        FLOTILLA_ASSIGN_OR_RETURN(json::value fresh, Fresh(std::move(list), child));
        merged = std::move(fresh.get_array());
      }
    }
    FLOTILLA_ASSIGN_OR_RETURN(json::array ordered,
                              OrderBy(std::move(merged), order, server, info.merge_key));
    original[field] = std::move(ordered);
    patch.erase(field);
    return Status::Ok();
  }

  // Puts `merged` in $setElementOrder order, server-only items by `server`.
  static StatusOr<json::array> OrderBy(json::array merged, const json::array& order,
                                       const json::array& server, const std::string& merge_key) {
    FLOTILLA_ASSIGN_OR_RETURN(std::vector<std::string> ids, Identities(merged, merge_key));
    FLOTILLA_ASSIGN_OR_RETURN(std::vector<std::string> order_ids, Identities(order, merge_key));
    FLOTILLA_ASSIGN_OR_RETURN(std::vector<std::string> server_ids, Identities(server, merge_key));
    std::vector<Entry> entries;
    for (size_t i = 0; i < merged.size(); ++i) entries.push_back({std::move(merged[i]), ids[i]});
    return Reorder(std::move(entries), IndexOf(order_ids), IndexOf(server_ids));
  }

  // validatePatchWithSetOrderList: the patch's items (deletions and other
  // directives aside) must appear in the order list, in the same order.
  static Status CheckOrderMatchesPatch(const json::array& patch, const json::array& order,
                                       const std::string& merge_key) {
    if (patch.empty() || order.empty()) return Status::Ok();
    std::vector<const json::value*> items;
    for (const json::value& v : patch) {
      if (!merge_key.empty() && !v.is_object()) {
        return BadRequest("expected a map, but received a " + std::string(JsonTypeName(v)));
      }
      if (merge_key.empty() || !IsDirective(DirectiveOf(v), "delete")) items.push_back(&v);
    }
    size_t p = 0, s = 0;
    while (p < items.size() && s < order.size()) {
      if (DirectiveOf(*items[p]) != nullptr) {
        ++p;
        continue;
      }
      FLOTILLA_ASSIGN_OR_RETURN(std::string a, Identity(*items[p], merge_key));
      FLOTILLA_ASSIGN_OR_RETURN(std::string b, Identity(order[s], merge_key));
      if (a == b) ++p;
      ++s;
    }
    if (p < items.size()) {
      return BadRequest("The order in patch list:\n" + Render(patch) + "\n doesn't match " +
                        std::string(kSetElementOrder.substr(0, kSetElementOrder.size() - 1)) +
                        " list:\n" + Render(order) + "\n");
    }
    return Status::Ok();
  }

  StatusOr<json::array> MergeList(json::array original, json::array patch,
                                  const FieldPatchInfo& info, const Path& path) {
    if (original.empty() && patch.empty()) return original;
    FLOTILLA_RETURN_IF_ERROR(CheckElementTypes(original, patch));
    bool objects = (!original.empty() ? original[0] : patch[0]).is_object();
    if (!objects) return MergeScalars(std::move(original), patch);
    if (info.merge_key.empty()) {
      return BadRequest("cannot merge lists without merge key for " + PathString(path));
    }
    FLOTILLA_ASSIGN_OR_RETURN(bool replace, ApplyListDirectives(original, patch, info.merge_key));
    if (replace) {
      FLOTILLA_ASSIGN_OR_RETURN(json::value fresh, Fresh(std::move(patch), path));
      original = std::move(fresh.get_array());
      patch.clear();
    }
    return MergeObjects(std::move(original), std::move(patch), info.merge_key, path);
  }

  // Lists of primitives: the union, without duplicates.
  static StatusOr<json::array> MergeScalars(json::array original, const json::array& patch) {
    std::vector<Entry> merged;
    std::unordered_set<std::string> seen;
    std::vector<std::string> server_ids, patch_ids;
    for (const json::array* list : {static_cast<const json::array*>(&original), &patch}) {
      for (const json::value& v : *list) {
        std::string id = Render(v);
        (list == &original ? server_ids : patch_ids).push_back(id);
        if (seen.insert(id).second) merged.push_back({v, std::move(id)});
      }
    }
    return Reorder(std::move(merged), IndexOf(patch_ids), IndexOf(server_ids));
  }

  // mergeSliceWithSpecialElements: applies `$patch: delete` items to
  // `original` and removes every directive item from `patch`. Returns
  // whether a `$patch: replace` item was present.
  static StatusOr<bool> ApplyListDirectives(json::array& original, json::array& patch,
                                            const std::string& merge_key) {
    bool replace = false;
    json::array plain;
    for (json::value& item : patch) {
      const json::value* d = DirectiveOf(item);
      if (d == nullptr) {
        plain.push_back(std::move(item));
      } else if (IsDirective(d, "delete")) {
        FLOTILLA_ASSIGN_OR_RETURN(std::string id, Identity(item, merge_key));
        json::array kept;
        for (json::value& o : original) {
          const json::value* k = o.is_object() ? o.get_object().if_contains(merge_key) : nullptr;
          if (k == nullptr || Render(*k) != id) kept.push_back(std::move(o));
        }
        original = std::move(kept);
      } else if (IsDirective(d, "replace")) {
        replace = true;
      } else if (IsDirective(d, "merge")) {
        return BadRequest("merging lists cannot yet be specified in the patch");
      } else {
        return BadRequest("unknown patch type: " + RenderDirective(*d) +
                          " in map: " + Render(item));
      }
    }
    patch = std::move(plain);
    return replace;
  }

  // Lists of objects: patch items merge into the original item with the same
  // merge key value, or are appended.
  StatusOr<json::array> MergeObjects(json::array original, json::array patch,
                                     const std::string& merge_key, const Path& path) {
    FLOTILLA_ASSIGN_OR_RETURN(std::vector<std::string> ids, Identities(original, merge_key));
    FLOTILLA_ASSIGN_OR_RETURN(std::vector<std::string> patch_ids, Identities(patch, merge_key));
    IndexMap server_order = IndexOf(ids);
    IndexMap position = server_order;
    for (size_t p = 0; p < patch.size(); ++p) {
      auto it = position.find(patch_ids[p]);
      if (it != position.end()) {
        json::value& target = original[it->second];
        FLOTILLA_ASSIGN_OR_RETURN(
            json::object merged,
            MergeMap(std::move(target.get_object()), std::move(patch[p].get_object()), path));
        target = std::move(merged);
        continue;
      }
      FLOTILLA_ASSIGN_OR_RETURN(json::value fresh, Fresh(std::move(patch[p]), path));
      position.emplace(patch_ids[p], original.size());
      original.push_back(std::move(fresh));
      ids.push_back(patch_ids[p]);
    }
    std::vector<Entry> entries;
    for (size_t i = 0; i < original.size(); ++i)
      entries.push_back({std::move(original[i]), ids[i]});
    return Reorder(std::move(entries), IndexOf(patch_ids), server_order);
  }

  const PatchInfoLookup& lookup_;
};

}  // namespace

StatusOr<json::value> StrategicMergePatch(const json::value& original, const json::value& patch,
                                          const PatchInfoLookup& lookup) {
  if (!patch.is_object()) {
    return BadRequest("strategic merge patch must be a JSON object, got " +
                      std::string(JsonTypeName(patch)));
  }
  if (!original.is_object()) {
    return BadRequest("strategic merge patch applies to a JSON object, got " +
                      std::string(JsonTypeName(original)));
  }
  return StrategicMergePatch(original.get_object(), patch.get_object(), lookup);
}

StatusOr<json::value> StrategicMergePatch(const json::object& original, const json::object& patch,
                                          const PatchInfoLookup& lookup) {
  Merger merger(lookup);
  FLOTILLA_ASSIGN_OR_RETURN(json::object merged, merger.MergeMap(original, patch, Path{}));
  return json::value(std::move(merged));
}

}  // namespace flotilla::api
