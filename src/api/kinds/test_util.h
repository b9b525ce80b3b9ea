// Helpers for the kinds tests: JSON literals, a registry holding every
// kind, and the cells of one Table row.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "api/kinds/kinds.h"
#include "api/registry.h"
#include "base/json.h"

namespace flotilla::api::kinds {

// Parses a JSON object literal; fails the test on a syntax error.
inline json::object Obj(std::string_view text) {
  StatusOr<json::object> parsed = ParseJsonObject(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString() << "\n" << text;
  return parsed.ok() ? *parsed : json::object();
}

// Every foundation and member kind, registered once.
inline const Registry& AllKinds() {
  static const Registry* registry = [] {
    auto* r = new Registry();
    RegisterFoundationKinds(*r);
    RegisterMemberKinds(*r);
    return r;
  }();
  return *registry;
}

// REQUIRES: the resource is registered.
inline const Resource& Res(std::string_view group, std::string_view version,
                           std::string_view plural) {
  const Resource* r = AllKinds().Find(group, version, plural);
  EXPECT_NE(r, nullptr) << group << "/" << version << " " << plural;
  return *r;
}

inline std::vector<std::string> ColumnNames(const Resource& r) {
  std::vector<std::string> names;
  for (const TableColumn& c : r.columns) names.push_back(c.name);
  return names;
}

// The row of `obj`, every cell serialized ("\"web\"", "3").
inline std::vector<std::string> Row(const Resource& r, const json::object& obj, TimePoint now) {
  std::vector<std::string> cells;
  for (const TableColumn& c : r.columns) cells.push_back(json::serialize(c.cell(obj, now)));
  return cells;
}

// RFC 7386 merge patch: `patch`'s members replace target's, null deletes.
inline void MergePatch(json::object& target, const json::object& patch) {
  for (const auto& [key, value] : patch) {
    if (value.is_null()) {
      target.erase(key);
    } else if (value.is_object() && target.contains(key) && target[key].is_object()) {
      MergePatch(target[key].as_object(), value.as_object());
    } else {
      target[key] = value;
    }
  }
}

// "field: message" of each cause, in order.
inline std::vector<std::string> Messages(const std::vector<StatusCause>& causes) {
  std::vector<std::string> out;
  for (const StatusCause& c : causes) out.push_back(c.field + ": " + c.message);
  return out;
}

// One validation case: `base` patched with `patch` (RFC 7386), defaulted and
// validated, on create or (with `old_patch`) as an update of `base` patched
// with that. `want` lists the causes as "field: message".
struct ValidationCase {
  std::string name;
  std::string group, version, plural;
  std::string base;
  std::string patch;      // applied to `base` to make the object
  std::string old_patch;  // when set, an update from `base` patched with this
  std::vector<std::string> want;
};

inline std::vector<std::string> Validate(const ValidationCase& c) {
  const Resource& r = Res(c.group, c.version, c.plural);
  json::object obj = Obj(c.base);
  MergePatch(obj, Obj(c.patch));
  if (r.default_fn) r.default_fn(obj);
  if (c.old_patch.empty()) return Messages(r.validate_fn(obj, nullptr));
  json::object old = Obj(c.base);
  MergePatch(old, Obj(c.old_patch));
  if (r.default_fn) r.default_fn(old);
  return Messages(r.validate_fn(obj, &old));
}

inline void PrintTo(const ValidationCase& c, std::ostream* os) { *os << c.name; }

// A test name from a case name.
inline std::string CaseName(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

}  // namespace flotilla::api::kinds
