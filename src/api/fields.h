// Field selectors, as k8s.io/apimachinery/pkg/fields implements them.
//
// A FieldSelector is a conjunction of `field=value`, `field==value` and
// `field!=value` terms ("metadata.name=web,status.phase!=Running"). In values,
// `\`, `,` and `=` are escaped with a backslash. Which fields exist is up to
// each kind: the server checks Fields() against the kind's list and answers
// BadRequest "field label not supported: spec.foo" (see RequireSupported), and
// matching reads fields through a getter the kind provides. Every kind
// supports metadata.name and metadata.namespace (ObjectMetaFieldGetter). A
// FieldSelector is an immutable value; it is safe to share between threads.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace flotilla::api {

struct FieldRequirement {
  std::string field;
  bool equals = true;  // false for "!="
  std::string value;   // unescaped
};

// Returns the value of `field` for one object, or nullopt when the kind does
// not support the field. A supported field that the object lacks reads as "".
using FieldGetter = std::function<std::optional<std::string>(std::string_view field)>;

class FieldSelector {
 public:
  // Matches everything.
  FieldSelector() = default;

  // Parses the query-parameter syntax; "" matches everything. Terms are kept
  // in the sorted order apimachinery uses. Errors are BadRequest with
  // apimachinery's messages.
  static StatusOr<FieldSelector> Parse(std::string_view text);

  // True when every term holds. A field the getter does not support reads as
  // "", as in apimachinery; reject such selectors first with
  // RequireSupported.
  bool Matches(const FieldGetter& get) const;
  // The distinct fields the selector references, in term order.
  std::vector<std::string> Fields() const;
  // BadRequest "field label not supported: <field>" for the first field that
  // `supported` rejects.
  Status RequireSupported(const std::function<bool(std::string_view field)>& supported) const;
  bool Empty() const { return requirements_.empty(); }
  // Canonical form, values escaped: "a=b,c!=d".
  std::string ToString() const;
  // The value `field` must have when a "=" or "==" term pins it.
  std::optional<std::string> RequiresExactMatch(std::string_view field) const;
  const std::vector<FieldRequirement>& requirements() const { return requirements_; }

 private:
  std::vector<FieldRequirement> requirements_;
};

// Escapes `\`, `,` and `=` for use as a field selector value.
std::string EscapeFieldValue(std::string_view value);

// The fields every kind supports: metadata.name and metadata.namespace of
// `obj`; nullopt for any other field.
std::optional<std::string> ObjectMetaFieldGetter(const json::object& obj, std::string_view field);
// ObjectMetaFieldGetter bound to `obj`. REQUIRES: obj outlives the getter.
FieldGetter MetadataFieldGetter(const json::object& obj);

}  // namespace flotilla::api
