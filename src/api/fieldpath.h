// Field paths and sets of them: what server-side apply records as the
// fields a manager owns (metadata.managedFields[].fieldsV1).
//
// A path goes from an object's root to one field: a struct field or map key
// (".spec"), an item of a list keyed by fields ("[name=\"nginx\"]"), an item
// of a set-like list by its value ("[=\"a\"]") or, for lists without keys,
// by index ("[0]"). A Set holds paths as a tree; a path is a member when it
// was inserted, and may also have members below it (a container's `image`
// under the container itself).
//
// FieldsV1 is the wire form Kubernetes uses: an object whose keys are
// "f:<field>", "k:<key fields as JSON>", "v:<value as JSON>" or "i:<index>",
// with "." marking a path that is itself a member and also has children.
//
// Values are plain data; no method is thread-safe against a writer.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace flotilla::api::fieldpath {

struct Element {
  enum class Kind : uint8_t { kField, kKey, kValue, kIndex };

  Kind kind = Kind::kField;
  // kField: the name. kKey: the key fields as a JSON object with its members
  // sorted by name. kValue: the value as JSON. kIndex: the decimal index.
  std::string text;

  static Element Field(std::string_view name) { return {Kind::kField, std::string(name)}; }
  // `fields` in any order; they are written sorted.
  static Element Key(const json::object& fields);
  static Element Value(const json::value& v);
  static Element Index(size_t i) { return {Kind::kIndex, std::to_string(i)}; }

  // "f:spec", "k:{\"name\":\"a\"}", "v:\"x\"", "i:0".
  std::string Serialize() const;
  // The inverse; BadRequest naming `s` when it is none of the four forms.
  static StatusOr<Element> Parse(std::string_view s);
  // As Kubernetes prints it in conflict messages: ".spec", "[name=\"a\"]",
  // "[=\"x\"]", "[0]".
  std::string String() const;

  bool operator==(const Element& o) const { return kind == o.kind && text == o.text; }
  bool operator<(const Element& o) const { return kind != o.kind ? kind < o.kind : text < o.text; }
};

using Path = std::vector<Element>;

// ".spec.template.spec.containers[name=\"a\"].image".
std::string PathString(const Path& path);

class Set {
 public:
  void Insert(const Path& path);
  bool Has(const Path& path) const;
  bool Empty() const { return !member_ && children_.empty(); }

  // Whether this node (the path that led here) is a member.
  bool member() const { return member_; }
  // The subtree under `e`; nullptr when there is none.
  const Set* Child(const Element& e) const;
  const std::map<Element, Set>& children() const { return children_; }

  Set Union(const Set& o) const;
  // In place: this set with the members of `o` added / taken away (as
  // Union / Difference). Remove returns whether anything went.
  void Add(const Set& o);
  bool Remove(const Set& o);
  // The members of this set that are not members of `o` (members below a
  // member of `o` stay: a path removes only itself).
  Set Difference(const Set& o) const;
  Set Intersection(const Set& o) const;
  // This set without every path at or below a member of `o`.
  Set RecursiveDifference(const Set& o) const;

  // Every member path, depth first in element order.
  void ForEach(const std::function<void(const Path&)>& fn) const;
  size_t Size() const;

  json::object ToFieldsV1() const;
  // BadRequest when `v` is not a FieldsV1 object.
  static StatusOr<Set> FromFieldsV1(const json::value& v);

  bool operator==(const Set& o) const { return member_ == o.member_ && children_ == o.children_; }

 private:
  void ForEachUnder(Path& prefix, const std::function<void(const Path&)>& fn) const;
  void Prune();

  bool member_ = false;
  std::map<Element, Set> children_;
};

}  // namespace flotilla::api::fieldpath
