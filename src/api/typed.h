// Objects read through their schema, the way server-side apply sees them
// (Kubernetes' structured-merge-diff rules):
//
//  - a struct (an OpenAPI object with `properties`) is granular: each field
//    merges and is owned on its own;
//  - a map (`additionalProperties`, or an object no schema describes) is
//    granular per key;
//  - `x-kubernetes-map-type: atomic` makes a struct or map one leaf;
//  - a list is `x-kubernetes-list-type` `atomic` (one leaf), `set` (items
//    by value) or `map` (items by `x-kubernetes-list-map-keys`); without the
//    extension, `x-kubernetes-patch-strategy: merge` with a merge key is a
//    map keyed by it, `merge` alone a set, anything else atomic;
//  - a value no schema describes takes the shape of what it is (objects
//    granular, lists atomic), as for x-kubernetes-preserve-unknown-fields.
//
// Typed walks an object against a root schema (a definition of a SchemaSet,
// or an inline schema such as a CustomResourceDefinition's) to give the
// set of fields it sets, the difference between two versions, the merge of
// an applied configuration into a live object and the removal of fields.
// Immutable once built; every method is thread-safe. The schemas it refers
// to must outlive it.
#pragma once

#include <string>
#include <string_view>

#include "api/fieldpath.h"
#include "base/json.h"
#include "base/status.h"

namespace flotilla::api {

// What changed from one version of an object to the next.
struct Comparison {
  fieldpath::Set added;     // set now, absent before
  fieldpath::Set modified;  // set before and now, to another value
  fieldpath::Set removed;   // set before, absent now
};

class Typed {
 public:
  // `definitions` resolves "$ref"s; `root` is the object's schema (null:
  // nothing is known, every shape is deduced).
  Typed(const json::object* definitions, const json::object* root)
      : definitions_(definitions), root_(root) {}

  // The fields `obj` sets: every leaf, every list item, every map entry,
  // every empty or null struct field. BadRequest (kube's words, e.g.
  // ".spec.template.spec.containers: element 0: associative list with keys
  // has an element that omits key field \"name\" (and doesn't have default
  // value)") for list items without their keys and duplicate items.
  StatusOr<fieldpath::Set> ToFieldSet(const json::value& obj) const;

  // What changed from `before` to `after`. Maps and lists that appear or
  // vanish count themselves (a struct does not: it is always there). Paths
  // at or below a member of `skip` (when given) are not compared.
  Comparison Compare(const json::value& before, const json::value& after,
                     const fieldpath::Set* skip = nullptr) const;
  // The same for two objects (a kind's root), without copying them into
  // values.
  Comparison Compare(const json::object& before, const json::object& after,
                     const fieldpath::Set* skip = nullptr) const;

  // `config` merged into `live`: structs and maps field by field, keyed
  // lists item by item (keeping live's order, the config's order for the
  // items it names), atomic values replaced; a null in `config` removes.
  // BadRequest as ToFieldSet for malformed lists.
  StatusOr<json::value> Merge(json::value live, const json::value& config) const;

  // `obj` without the members of `remove`, except where a member of `keep`
  // lies at or below one (a kept item stays with its key fields); maps and
  // lists this empties are removed too.
  json::value Prune(const json::value& obj, const fieldpath::Set& remove,
                    const fieldpath::Set& keep) const;

 private:
  const json::object* definitions_;
  const json::object* root_;
};

}  // namespace flotilla::api
