// Schema-typed walks for server-side apply (typed.h).
#include "api/typed.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "api/patch.h"
#include "api/schema.h"

namespace flotilla::api {
namespace {

using fieldpath::Element;
using fieldpath::Path;
using fieldpath::Set;

enum class Shape { kScalar, kAtomic, kStruct, kMap, kListMap, kListSet };

// A position in the schema: the schema as written where the field is
// declared (it carries the list and map extensions) and what its "$ref"
// resolves to. Both null: nothing is known here.
struct Node {
  const json::object* written = nullptr;
  const json::object* resolved = nullptr;
};

bool IsEmptyContainer(const json::value& v) {
  return v.is_null() || (v.is_object() && v.get_object().empty()) ||
         (v.is_array() && v.get_array().empty());
}

// The item of a keyed or set-like list that an element names, with where
// it was.
struct Item {
  Element element;
  const json::value* value;
};

class Walker {
 public:
  explicit Walker(const json::object* definitions) : definitions_(definitions) {}

  Node Resolve(const json::object* schema) const {
    if (schema == nullptr) return {};
    const json::object* resolved =
        definitions_ == nullptr ? schema : ResolveSchema(*definitions_, *schema);
    return {schema, resolved != nullptr ? resolved : schema};
  }

  Shape ShapeOf(const Node& n, const json::value& v) const {
    Shape shape = DeclaredShape(n, v);
    // A value of another JSON type than the schema says (the schema check
    // reports it) is one leaf here.
    bool object = shape == Shape::kStruct || shape == Shape::kMap;
    bool list = shape == Shape::kListMap || shape == Shape::kListSet;
    if ((object && !v.is_object() && !v.is_null()) || (list && !v.is_array() && !v.is_null())) {
      return Shape::kScalar;
    }
    return shape;
  }

  // The schema of field `key` of an object at `n`; *declared says whether
  // the schema names it (a struct field) rather than a map entry.
  Node FieldOf(const Node& n, std::string_view key, bool* declared) const {
    *declared = false;
    if (n.resolved == nullptr) return {};
    if (const json::object* props = GetObject(*n.resolved, "properties")) {
      if (const json::value* p = props->if_contains(key); p != nullptr && p->is_object()) {
        *declared = true;
        return Resolve(&p->get_object());
      }
    }
    const json::value* extra = n.resolved->if_contains("additionalProperties");
    if (extra != nullptr && extra->is_object()) return Resolve(&extra->get_object());
    return {};
  }

  Node ItemsOf(const Node& n) const {
    if (n.resolved == nullptr) return {};
    const json::object* items = GetObject(*n.resolved, "items");
    return Resolve(items);
  }

  // The key fields of a keyed list.
  std::vector<std::string> KeysOf(const Node& n) const {
    std::vector<std::string> keys;
    if (const json::value* k = Ext(n, "x-kubernetes-list-map-keys"); k && k->is_array()) {
      for (const json::value& name : k->get_array()) {
        if (name.is_string()) keys.emplace_back(name.get_string());
      }
    }
    if (keys.empty()) {
      if (const json::value* k = Ext(n, "x-kubernetes-patch-merge-key"); k && k->is_string()) {
        keys.emplace_back(k->get_string());
      }
    }
    return keys;
  }

  // The element naming `item` of a keyed (`keys`) or set-like list; a
  // keyed item without a key field is nullopt with *missing set to it.
  std::optional<Element> ItemElement(Shape shape, const std::vector<std::string>& keys,
                                     const Node& item_node, const json::value& item,
                                     std::string* missing) const {
    if (shape == Shape::kListSet) return Element::Value(item);
    if (!item.is_object()) return std::nullopt;
    json::object key;
    for (const std::string& k : keys) {
      const json::value* v = item.get_object().if_contains(k);
      if (v == nullptr || v->is_null()) v = KeyDefault(item_node, k);
      if (v == nullptr) {
        *missing = k;
        return std::nullopt;
      }
      key[k] = *v;
    }
    return Element::Key(key);
  }

  // The items of a keyed or set-like list with the element naming each, in
  // order. Items that cannot be named (a keyed item without its keys) and
  // repeated items are an error when `strict`, else skipped.
  Status IndexList(const Node& list, Shape shape, const json::array& items,
                   const std::string& where, bool strict, std::vector<Item>* out) const {
    std::vector<std::string> keys =
        shape == Shape::kListMap ? KeysOf(list) : std::vector<std::string>{};
    Node item_node = ItemsOf(list);
    std::set<Element> seen;
    for (size_t i = 0; i < items.size(); ++i) {
      std::string missing;
      std::optional<Element> e = ItemElement(shape, keys, item_node, items[i], &missing);
      if (!e) {
        if (!strict) continue;
        std::string at = where + ": element " + std::to_string(i) + ": ";
        if (missing.empty()) {
          return Status::BadRequest(at +
                                    "associative list with keys may only have object "
                                    "elements, got " +
                                    std::string(JsonTypeName(items[i])));
        }
        return Status::BadRequest(at +
                                  "associative list with keys has an element that omits "
                                  "key field \"" +
                                  missing + "\" (and doesn't have default value)");
      }
      if (!seen.insert(*e).second) {
        if (!strict) continue;
        return Status::BadRequest(where + ": duplicate entries for key " + e->String());
      }
      out->push_back({std::move(*e), &items[i]});
    }
    return Status::Ok();
  }

 private:
  const json::value* Ext(const Node& n, std::string_view name) const {
    if (n.written != nullptr) {
      if (const json::value* v = n.written->if_contains(name)) return v;
    }
    return n.resolved != nullptr ? n.resolved->if_contains(name) : nullptr;
  }

  static Shape Deduced(const json::value& v) {
    if (v.is_object()) return Shape::kMap;
    if (v.is_array()) return Shape::kAtomic;
    return Shape::kScalar;
  }

  Shape DeclaredShape(const Node& n, const json::value& v) const {
    if (n.resolved == nullptr) return Deduced(v);
    const json::object& s = *n.resolved;
    std::string_view type = GetString(s, "type").value_or("");
    if (GetString(s, "format").value_or("") == "int-or-string") return Shape::kScalar;
    if (type == "array" || s.contains("items")) {
      const json::value* list_type = Ext(n, "x-kubernetes-list-type");
      if (list_type != nullptr && list_type->is_string()) {
        if (list_type->get_string() == "map") return Shape::kListMap;
        if (list_type->get_string() == "set") return Shape::kListSet;
        return Shape::kAtomic;
      }
      const json::value* strategy = Ext(n, "x-kubernetes-patch-strategy");
      if (strategy != nullptr && strategy->is_string() &&
          std::string_view(strategy->get_string()).find("merge") != std::string_view::npos) {
        return KeysOf(n).empty() ? Shape::kListSet : Shape::kListMap;
      }
      return Shape::kAtomic;
    }
    if (type == "object" || s.contains("properties") || s.contains("additionalProperties")) {
      const json::value* map_type = Ext(n, "x-kubernetes-map-type");
      if (map_type != nullptr && map_type->is_string() && map_type->get_string() == "atomic") {
        return Shape::kAtomic;
      }
      if (s.contains("properties")) return Shape::kStruct;
      return v.is_object() ? Shape::kMap : Deduced(v);
    }
    if (!type.empty()) return Shape::kScalar;
    return Deduced(v);
  }

  // The schema default of key field `key` of a keyed list's items
  // (protocol: TCP), which kube-apiserver uses for an item that omits it.
  const json::value* KeyDefault(const Node& item, const std::string& key) const {
    bool declared = false;
    Node field = FieldOf(item, key, &declared);
    if (!declared) return nullptr;
    return Ext(field, "default");
  }

  const json::object* definitions_;
};

std::string Where(const Path& path) { return path.empty() ? "." : fieldpath::PathString(path); }

// ---- ToFieldSet -----------------------------------------------------------

Status CollectFields(const Walker& w, const Node& n, const json::value& v, Path& path, Set* out) {
  Shape shape = w.ShapeOf(n, v);
  switch (shape) {
    case Shape::kScalar:
    case Shape::kAtomic:
      out->Insert(path);
      return Status::Ok();
    case Shape::kStruct:
    case Shape::kMap: {
      if (!v.is_object()) return Status::Ok();
      for (const auto& [key, child] : v.get_object()) {
        bool declared = false;
        Node field = w.FieldOf(n, key, &declared);
        path.push_back(Element::Field(key));
        FLOTILLA_RETURN_IF_ERROR(CollectFields(w, field, child, path, out));
        if (!declared || child.is_null() || (child.is_object() && child.get_object().empty())) {
          out->Insert(path);
        }
        path.pop_back();
      }
      return Status::Ok();
    }
    case Shape::kListMap:
    case Shape::kListSet: {
      if (!v.is_array()) return Status::Ok();
      std::vector<Item> items;
      FLOTILLA_RETURN_IF_ERROR(w.IndexList(n, shape, v.get_array(), Where(path), true, &items));
      Node item_node = w.ItemsOf(n);
      for (const Item& item : items) {
        path.push_back(item.element);
        if (shape == Shape::kListMap) {
          FLOTILLA_RETURN_IF_ERROR(CollectFields(w, item_node, *item.value, path, out));
        }
        out->Insert(path);
        path.pop_back();
      }
      return Status::Ok();
    }
  }
  return Status::Ok();
}

// ---- Compare --------------------------------------------------------------

// `is_item`: a list item, which counts itself when it appears or vanishes
// even where its schema is a struct.
void CompareAt(const Walker& w, const Node& n, const json::value* lhs, const json::value* rhs,
               bool is_item, const Set* skip, Path& path, Comparison* out);

// The part of `skip` under `e`; *gone when `e` itself is skipped.
const Set* SkipUnder(const Set* skip, const Element& e, bool* gone) {
  const Set* s = skip != nullptr ? skip->Child(e) : nullptr;
  *gone = s != nullptr && s->member();
  return s;
}

void CompareLeaf(const json::value* lhs, const json::value* rhs, const Path& path,
                 Comparison* out) {
  if (lhs == nullptr) {
    out->added.Insert(path);
  } else if (rhs == nullptr) {
    out->removed.Insert(path);
  } else if (!JsonEqual(*lhs, *rhs)) {
    out->modified.Insert(path);
  }
}

void CompareObjects(const Walker& w, const Node& n, const json::object& l, const json::object& r,
                    const Set* skip, Path& path, Comparison* out) {
  auto visit = [&](std::string_view key) {
    Element e = Element::Field(key);
    bool gone = false;
    const Set* below = SkipUnder(skip, e, &gone);
    if (gone) return;
    bool declared = false;
    Node field = w.FieldOf(n, key, &declared);
    path.push_back(std::move(e));
    CompareAt(w, field, l.if_contains(key), r.if_contains(key), false, below, path, out);
    path.pop_back();
  };
  for (const auto& [key, value] : l) visit(key);
  for (const auto& [key, value] : r) {
    if (!l.contains(key)) visit(key);
  }
}

void CompareLists(const Walker& w, const Node& n, Shape shape, const json::value* lhs,
                  const json::value* rhs, const Set* skip, Path& path, Comparison* out) {
  static const json::array kEmpty;
  std::vector<Item> l, r;
  std::string where = Where(path);
  (void)w.IndexList(n, shape, lhs != nullptr && lhs->is_array() ? lhs->get_array() : kEmpty, where,
                    false, &l);
  (void)w.IndexList(n, shape, rhs != nullptr && rhs->is_array() ? rhs->get_array() : kEmpty, where,
                    false, &r);
  std::map<Element, const json::value*> right;
  for (const Item& item : r) right.emplace(item.element, item.value);
  std::set<Element> left;
  Node item_node = w.ItemsOf(n);
  auto visit = [&](const Element& e, const json::value* a, const json::value* b) {
    bool gone = false;
    const Set* below = SkipUnder(skip, e, &gone);
    if (gone) return;
    path.push_back(e);
    if (shape == Shape::kListSet) {
      CompareLeaf(a, b, path, out);
    } else {
      CompareAt(w, item_node, a, b, true, below, path, out);
    }
    path.pop_back();
  };
  for (const Item& item : l) {
    left.insert(item.element);
    auto it = right.find(item.element);
    visit(item.element, item.value, it == right.end() ? nullptr : it->second);
  }
  for (const Item& item : r) {
    if (!left.contains(item.element)) visit(item.element, nullptr, item.value);
  }
}

void CompareAt(const Walker& w, const Node& n, const json::value* lhs, const json::value* rhs,
               bool is_item, const Set* skip, Path& path, Comparison* out) {
  if (lhs != nullptr && lhs->is_null()) lhs = nullptr;
  if (rhs != nullptr && rhs->is_null()) rhs = nullptr;
  if (lhs == nullptr && rhs == nullptr) return;
  // Most of an updated object is as it was: nothing below an equal value
  // changed, and comparing plain values is much cheaper than walking them.
  if (lhs != nullptr && rhs != nullptr && JsonEqual(*lhs, *rhs)) return;
  Shape shape = w.ShapeOf(n, rhs != nullptr ? *rhs : *lhs);
  bool both_empty =
      (lhs == nullptr || IsEmptyContainer(*lhs)) && (rhs == nullptr || IsEmptyContainer(*rhs));
  if (shape == Shape::kScalar || shape == Shape::kAtomic || both_empty) {
    CompareLeaf(lhs, rhs, path, out);
    return;
  }
  if ((is_item || shape != Shape::kStruct) && !path.empty()) {
    if (lhs == nullptr) out->added.Insert(path);
    if (rhs == nullptr) out->removed.Insert(path);
  }
  if (shape == Shape::kStruct || shape == Shape::kMap) {
    static const json::object kEmpty;
    CompareObjects(w, n, lhs != nullptr && lhs->is_object() ? lhs->get_object() : kEmpty,
                   rhs != nullptr && rhs->is_object() ? rhs->get_object() : kEmpty, skip, path,
                   out);
  } else {
    CompareLists(w, n, shape, lhs, rhs, skip, path, out);
  }
}

// ---- Merge ----------------------------------------------------------------

// Merges `config` into `target` in place (null: nothing there yet).
Status MergeInto(const Walker& w, const Node& n, json::value& target, const json::value& config,
                 Path& path);

Status MergeListInto(const Walker& w, const Node& n, Shape shape, json::value& target,
                     const json::value& config, Path& path) {
  std::vector<Item> r;
  std::string where = Where(path);
  FLOTILLA_RETURN_IF_ERROR(w.IndexList(n, shape, config.get_array(), where, true, &r));
  json::array live = target.is_array() ? std::move(target.as_array()) : json::array();
  std::map<Element, size_t> config_at;
  for (size_t i = 0; i < r.size(); ++i) config_at.emplace(r[i].element, i);
  Node item_node = w.ItemsOf(n);
  std::vector<std::string> keys =
      shape == Shape::kListMap ? w.KeysOf(n) : std::vector<std::string>{};
  // Where each config item's live counterpart is (the first, if repeated).
  std::vector<json::value*> live_of(r.size(), nullptr);
  std::vector<std::optional<size_t>> config_of(live.size());
  for (size_t i = 0; i < live.size(); ++i) {
    std::string missing;
    std::optional<Element> e = w.ItemElement(shape, keys, item_node, live[i], &missing);
    auto at = e ? config_at.find(*e) : config_at.end();
    if (at == config_at.end()) continue;
    config_of[i] = at->second;
    if (live_of[at->second] == nullptr) live_of[at->second] = &live[i];
  }

  json::array out;
  out.reserve(live.size() + r.size());
  std::vector<bool> emitted(r.size(), false);
  size_t next = 0;  // the next config item to place
  auto emit_config = [&](size_t i) -> Status {
    if (emitted[i]) return Status::Ok();
    emitted[i] = true;
    if (shape == Shape::kListSet) {
      out.push_back(*r[i].value);
      return Status::Ok();
    }
    json::value item = live_of[i] != nullptr ? std::move(*live_of[i]) : json::value();
    path.push_back(r[i].element);
    Status merged = MergeInto(w, item_node, item, *r[i].value, path);
    path.pop_back();
    FLOTILLA_RETURN_IF_ERROR(merged);
    out.push_back(std::move(item));
    return Status::Ok();
  };
  // Live items the config does not name keep their places; the config's
  // items come in the config's order, each before the live item that
  // follows it there.
  for (size_t i = 0; i < live.size(); ++i) {
    if (!config_of[i]) {
      out.push_back(std::move(live[i]));
      continue;
    }
    while (next <= *config_of[i]) FLOTILLA_RETURN_IF_ERROR(emit_config(next++));
  }
  while (next < r.size()) FLOTILLA_RETURN_IF_ERROR(emit_config(next++));
  target = std::move(out);
  return Status::Ok();
}

Status MergeInto(const Walker& w, const Node& n, json::value& target, const json::value& config,
                 Path& path) {
  Shape shape = w.ShapeOf(n, config);
  switch (shape) {
    case Shape::kScalar:
    case Shape::kAtomic:
      target = config;
      return Status::Ok();
    case Shape::kStruct:
    case Shape::kMap: {
      if (!target.is_object()) target = json::object();
      json::object& out = target.as_object();
      for (const auto& [key, value] : config.get_object()) {
        if (value.is_null()) {
          out.erase(key);
          continue;
        }
        bool declared = false;
        Node field = w.FieldOf(n, key, &declared);
        path.push_back(Element::Field(key));
        Status merged = MergeInto(w, field, out[key], value, path);
        path.pop_back();
        FLOTILLA_RETURN_IF_ERROR(merged);
      }
      return Status::Ok();
    }
    case Shape::kListMap:
    case Shape::kListSet:
      return MergeListInto(w, n, shape, target, config, path);
  }
  return Status::Ok();
}

// ---- Prune ----------------------------------------------------------------

// Whether `child`, a member of the removal set, may go: nothing kept lies
// at or below it.
bool Removable(const Set& remove, const Set* keep) {
  return remove.member() && (keep == nullptr || keep->Empty());
}

void PruneAt(const Walker& w, const Node& n, json::value& v, const Set& remove, const Set* keep,
             const std::vector<std::string>& protected_keys);

// Prunes `child` (reached by `e`); true when it should go from its parent.
bool PruneChild(const Walker& w, const Node& n, json::value& child, const Element& e,
                const Set& remove, const Set* keep, const std::vector<std::string>& item_keys) {
  const Set* r = remove.Child(e);
  if (r == nullptr) return false;
  const Set* k = keep != nullptr ? keep->Child(e) : nullptr;
  if (Removable(*r, k)) return true;
  bool was_empty = IsEmptyContainer(child);
  PruneAt(w, n, child, *r, k, item_keys);
  return !was_empty && IsEmptyContainer(child) && !(k != nullptr && k->member());
}

void PruneAt(const Walker& w, const Node& n, json::value& v, const Set& remove, const Set* keep,
             const std::vector<std::string>& protected_keys) {
  Shape shape = w.ShapeOf(n, v);
  if (shape == Shape::kStruct || shape == Shape::kMap) {
    json::object& o = v.get_object();
    std::vector<std::string> gone;
    for (auto& [key, child] : o) {
      if (std::find(protected_keys.begin(), protected_keys.end(), key) != protected_keys.end()) {
        continue;
      }
      bool declared = false;
      Node field = w.FieldOf(n, key, &declared);
      if (PruneChild(w, field, child, Element::Field(key), remove, keep, {})) {
        gone.emplace_back(key);
      }
    }
    for (const std::string& key : gone) o.erase(key);
  } else if (shape == Shape::kListMap || shape == Shape::kListSet) {
    json::array& items = v.get_array();
    std::vector<Item> named;
    (void)w.IndexList(n, shape, items, "", false, &named);
    std::set<const json::value*> drop;
    Node item_node = w.ItemsOf(n);
    std::vector<std::string> keys =
        shape == Shape::kListMap ? w.KeysOf(n) : std::vector<std::string>{};
    for (Item& item : named) {
      json::value& child = const_cast<json::value&>(*item.value);
      if (PruneChild(w, item_node, child, item.element, remove, keep, keys)) {
        drop.insert(item.value);
      }
    }
    json::array out;
    for (json::value& item : items) {
      if (!drop.contains(&item)) out.push_back(std::move(item));
    }
    items = std::move(out);
  }
}

}  // namespace

StatusOr<fieldpath::Set> Typed::ToFieldSet(const json::value& obj) const {
  Walker w(definitions_);
  Set out;
  Path path;
  FLOTILLA_RETURN_IF_ERROR(CollectFields(w, w.Resolve(root_), obj, path, &out));
  return out;
}

Comparison Typed::Compare(const json::value& before, const json::value& after,
                          const fieldpath::Set* skip) const {
  Walker w(definitions_);
  Comparison out;
  Path path;
  CompareAt(w, w.Resolve(root_), &before, &after, false, skip, path, &out);
  return out;
}

Comparison Typed::Compare(const json::object& before, const json::object& after,
                          const fieldpath::Set* skip) const {
  Comparison out;
  if (JsonEqual(before, after)) return out;
  Walker w(definitions_);
  Node root = w.Resolve(root_);
  // Only the kind of the value decides its shape here.
  static const json::value kAnObject = json::object();
  Shape shape = w.ShapeOf(root, kAnObject);
  if (shape != Shape::kStruct && shape != Shape::kMap) {
    return Compare(json::value(before), json::value(after), skip);  // a schema of its own
  }
  Path path;
  CompareObjects(w, root, before, after, skip, path, &out);
  return out;
}

StatusOr<json::value> Typed::Merge(json::value live, const json::value& config) const {
  Walker w(definitions_);
  Path path;
  FLOTILLA_RETURN_IF_ERROR(MergeInto(w, w.Resolve(root_), live, config, path));
  return live;
}

json::value Typed::Prune(const json::value& obj, const fieldpath::Set& remove,
                         const fieldpath::Set& keep) const {
  Walker w(definitions_);
  json::value out = obj;
  PruneAt(w, w.Resolve(root_), out, remove, &keep, {});
  return out;
}

}  // namespace flotilla::api
