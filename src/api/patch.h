// The three PATCH flavours of the Kubernetes API, over JSON documents.
//
//  - JSON merge patch (RFC 7386): MergePatch.
//  - JSON patch (RFC 6902): JsonPatch.
//  - Strategic merge patch, as kube-apiserver applies it: StrategicMergePatch.
//    Maps merge recursively and `null` deletes a key; a list merges by a
//    merge key (lists of objects) or as a set (lists of primitives) when the
//    field's patch strategy is "merge" and is replaced otherwise; the
//    directives `$patch: replace|delete|merge`,
//    `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>` and
//    `$retainKeys` are honoured. Strategies and merge keys come from a
//    PatchInfoLookup (the real one is built from the OpenAPI schemas).
//
// ApplyPatch picks the flavour from the request's Content-Type. Errors and
// their codes follow kube-apiserver, with clear messages where it gives a
// generic one (docs/api-machinery.md lists every choice):
//  - unknown media type: UnsupportedMediaType (415);
//  - a body that is not JSON, or not the JSON type a flavour needs:
//    BadRequest (400) with the parser's message;
//  - a JSON patch operation that cannot be applied (missing path, bad index,
//    failed `test`, unknown op): Invalid (422) naming the operation;
//  - more than 10000 JSON patch operations: RequestEntityTooLarge (413);
//  - a malformed strategic merge patch (bad directive, list item without its
//    merge key, mixed element types): BadRequest (400); lists of lists:
//    Invalid (422).
// All functions are pure and thread-safe; no exception escapes.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace flotilla::api {

inline constexpr std::string_view kJsonPatchContentType = "application/json-patch+json";
inline constexpr std::string_view kMergePatchContentType = "application/merge-patch+json";
inline constexpr std::string_view kStrategicMergePatchContentType =
    "application/strategic-merge-patch+json";
inline constexpr std::string_view kApplyPatchContentType = "application/apply-patch+yaml";

// The patch metadata of one field (the Go struct tags patchStrategy and
// patchMergeKey, or the OpenAPI x-kubernetes-patch-* extensions).
struct FieldPatchInfo {
  // "", "merge", "replace", "retainKeys" or "merge,retainKeys".
  std::string strategy;
  // For lists of objects merged by key, e.g. "name" or "containerPort".
  std::string merge_key;
};

// Path of field names from the object root, list positions elided, e.g.
// {"spec","template","spec","containers"} or
// {"spec","template","spec","containers","ports"}. Unknown fields get {}.
using PatchInfoLookup = std::function<FieldPatchInfo(const std::vector<std::string>& path)>;

// RFC 7386. A non-object patch replaces the target; null members of an
// object patch delete keys and never appear in the result.
json::value MergePatch(const json::value& original, const json::value& patch);

// The JSON merge patch (a controller's status write that cannot conflict)
// that makes an object's status `status` where it was `old_status` (null:
// none): {"status": status}, with the old status's top-level fields that
// `status` lacks set to null.
std::string StatusMergePatch(const json::value* old_status, const json::object& status);

// RFC 6902. `patch` must be an array of operation objects. The operations
// apply to `original` itself (pass a copy to keep one).
StatusOr<json::value> JsonPatch(json::value original, const json::value& patch);

// Applies a strategic merge patch object to an object. An empty `lookup`
// treats every field as having no strategy (maps merge, lists replace).
StatusOr<json::value> StrategicMergePatch(const json::value& original, const json::value& patch,
                                          const PatchInfoLookup& lookup);
StatusOr<json::value> StrategicMergePatch(const json::object& original, const json::object& patch,
                                          const PatchInfoLookup& lookup);

// Whether `content_type` (parameters ignored) is server-side apply's, which
// the field manager handles (managed_fields.h), not ApplyPatch.
bool IsApplyPatch(std::string_view content_type);

// Parses `patch_body` and applies it to `original` (an object) according to
// `content_type` (parameters such as "; charset=utf-8" are ignored). The
// result is always an object.
StatusOr<json::value> ApplyPatch(std::string_view content_type, const json::object& original,
                                 std::string_view patch_body, const PatchInfoLookup& lookup);

// Deep equality where numbers compare by value (1 == 1.0), as RFC 6902's
// `test` requires.
bool JsonEqual(const json::value& a, const json::value& b);
bool JsonEqual(const json::object& a, const json::object& b);

}  // namespace flotilla::api
