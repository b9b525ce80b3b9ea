// ObjectMeta validation on create and update, after apimachinery's
// pkg/api/validation/objectmeta.go plus the finalizer-name rule that
// Kubernetes applies to every built-in kind.
#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include "api/validation.h"

namespace flotilla::api {
namespace {

constexpr int64_t kTotalAnnotationSizeLimit = 256 * 1024;
constexpr std::string_view kFinalizerOrphan = "orphan";
constexpr std::string_view kFinalizerForeground = "foregroundDeletion";

std::string Child(std::string_view field, std::string_view name) {
  return field.empty() ? std::string(name) : std::string(field) + "." + std::string(name);
}

std::string Index(std::string_view field, size_t i) {
  return std::string(field) + "[" + std::to_string(i) + "]";
}

// A string field of an object; "" when absent or not a string.
std::string_view Str(const json::object& o, std::string_view key) {
  return GetString(o, key).value_or("");
}

// The value of `key`, or null when absent (Go's zero pointer).
json::value ValueOrNull(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v == nullptr ? json::value() : *v;
}

// Appends a FieldTypeInvalid cause when `v` is present, not null and not of
// `kind`; returns whether `v` can be read as `kind`.
bool CheckKind(const json::value* v, json::kind kind, std::string_view type_name,
               std::string_view field, std::vector<StatusCause>& errs) {
  if (v == nullptr || v->is_null()) return false;
  if (v->kind() == kind) return true;
  errs.push_back(FieldTypeInvalid(std::string(field), *v, type_name));
  return false;
}

// Checks that every value of a string map is a string.
bool CheckStringMap(const json::value* v, const std::string& field,
                    std::vector<StatusCause>& errs) {
  if (!CheckKind(v, json::kind::object, "object", field, errs)) return false;
  bool ok = true;
  for (const auto& [key, value] : v->get_object()) {
    if (!value.is_string()) {
      errs.push_back(FieldTypeInvalid(Child(field, key), value, "string"));
      ok = false;
    }
  }
  return ok;
}

bool IsStandardFinalizer(std::string_view name) {
  return name == "kubernetes" || name == kFinalizerOrphan || name == kFinalizerForeground;
}

void ValidateOwnerReference(const json::object& ref, const std::string& field,
                            std::vector<StatusCause>& errs) {
  std::string_view api_version = Str(ref, "apiVersion");
  std::string_view kind = Str(ref, "kind");
  // schema.FromAPIVersionAndKind: more than one '/' leaves group and version empty.
  std::string_view group, version;
  if (std::count(api_version.begin(), api_version.end(), '/') <= 1 && api_version != "/") {
    size_t slash = api_version.find('/');
    group = slash == std::string_view::npos ? "" : api_version.substr(0, slash);
    version = slash == std::string_view::npos ? api_version : api_version.substr(slash + 1);
  }
  if (version.empty()) {
    errs.push_back(FieldInvalid(Child(field, "apiVersion"), json::string(api_version),
                                "version must not be empty"));
  }
  if (kind.empty()) {
    errs.push_back(
        FieldInvalid(Child(field, "kind"), json::string(kind), "kind must not be empty"));
  }
  if (Str(ref, "name").empty()) {
    errs.push_back(FieldInvalid(Child(field, "name"), json::string(), "name must not be empty"));
  }
  if (Str(ref, "uid").empty()) {
    errs.push_back(FieldInvalid(Child(field, "uid"), json::string(), "uid must not be empty"));
  }
  if (group.empty() && version == "v1" && kind == "Event") {
    errs.push_back(FieldInvalid(field, ref, "/v1, Kind=Event is disallowed from being an owner"));
  }
}

// The finalizers as strings; non-strings become type errors.
std::vector<std::string> FinalizerNames(const json::value* finalizers, std::string_view field,
                                        std::vector<StatusCause>& errs) {
  std::vector<std::string> names;
  if (!CheckKind(finalizers, json::kind::array, "array", field, errs)) return names;
  const json::array& list = finalizers->get_array();
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].is_string()) {
      names.emplace_back(list[i].get_string());
    } else {
      errs.push_back(FieldTypeInvalid(Index(field, i), list[i], "string"));
    }
  }
  return names;
}

void ValidateKubeFinalizerNames(const json::value* finalizers, std::string_view field,
                                std::vector<StatusCause>& errs) {
  if (finalizers == nullptr || !finalizers->is_array()) return;
  const json::array& list = finalizers->get_array();
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) continue;
    std::string_view name = list[i].get_string();
    if (name.find('/') == std::string_view::npos && !IsStandardFinalizer(name)) {
      errs.push_back(FieldInvalid(Index(field, i), list[i],
                                  "name is neither a standard finalizer name nor is it fully "
                                  "qualified"));
    }
  }
}

// Go's %#v of a sorted []string: []string{"a", "b"}.
std::string GoStringSlice(const std::set<std::string>& items) {
  std::string out = "[]string{";
  bool first = true;
  for (const std::string& s : items) {
    if (!first) out += ", ";
    first = false;
    out += QuoteGo(s);
  }
  return out + "}";
}

std::set<std::string> StringSet(const json::value* list) {
  std::set<std::string> out;
  if (list == nullptr || !list->is_array()) return out;
  for (const json::value& v : list->get_array()) {
    if (v.is_string()) out.emplace(v.get_string());
  }
  return out;
}

// Labels through finalizers: the part shared by create and update.
void ValidateMetaCommon(const json::object& meta, bool finalizers, std::vector<StatusCause>& errs) {
  auto append = [&errs](std::vector<StatusCause> more) {
    errs.insert(errs.end(), std::make_move_iterator(more.begin()),
                std::make_move_iterator(more.end()));
  };
  append(ValidateLabels(meta.if_contains("labels"), "metadata.labels"));
  append(ValidateAnnotations(meta.if_contains("annotations"), "metadata.annotations"));
  append(ValidateOwnerReferences(meta.if_contains("ownerReferences"), "metadata.ownerReferences"));
  if (finalizers) {
    append(ValidateFinalizers(meta.if_contains("finalizers"), "metadata.finalizers", false));
  }
}

// obj.metadata, or an empty object when absent; null when of another type.
const json::object* Metadata(const json::object& obj, std::vector<StatusCause>& errs) {
  static const json::object kEmpty;
  const json::value* meta = obj.if_contains("metadata");
  if (meta == nullptr || meta->is_null()) return &kEmpty;
  if (meta->is_object()) return &meta->get_object();
  errs.push_back(FieldTypeInvalid("metadata", *meta, "object"));
  return nullptr;
}

void CheckStringFields(const json::object& meta, std::vector<StatusCause>& errs) {
  // Each with its path spelled out: a check that passes builds no string.
  static constexpr std::pair<std::string_view, std::string_view> kFields[] = {
      {"name", "metadata.name"},
      {"generateName", "metadata.generateName"},
      {"namespace", "metadata.namespace"},
      {"resourceVersion", "metadata.resourceVersion"},
      {"uid", "metadata.uid"}};
  for (const auto& [key, field] : kFields) {
    CheckKind(meta.if_contains(key), json::kind::string, "string", field, errs);
  }
}

// generateName as a prefix, then name; a name may be missing when
// generateName is set because the server generates it.
void ValidateNames(const json::object& meta, NameValidator validate_name,
                   std::vector<StatusCause>& errs) {
  std::string_view generate_name = Str(meta, "generateName");
  std::string_view name = Str(meta, "name");
  if (!generate_name.empty()) {
    for (std::string& msg : validate_name(generate_name, true)) {
      errs.push_back(FieldInvalid("metadata.generateName", json::string(generate_name), msg));
    }
  }
  if (name.empty() && generate_name.empty()) {
    errs.push_back(FieldRequired("metadata.name", "name or generateName is required"));
  } else if (!name.empty()) {
    for (std::string& msg : validate_name(name, false)) {
      errs.push_back(FieldInvalid("metadata.name", json::string(name), msg));
    }
  }
}

void ValidateNamespace(std::string_view ns, bool namespaced, std::vector<StatusCause>& errs) {
  if (namespaced && ns.empty()) {
    errs.push_back(FieldRequired("metadata.namespace", ""));
  } else if (namespaced) {
    for (std::string& msg : NameIsDNSLabel(ns, false)) {
      errs.push_back(FieldInvalid("metadata.namespace", json::string(ns), msg));
    }
  } else if (!ns.empty()) {
    errs.push_back(FieldForbidden("metadata.namespace", "not allowed on this type"));
  }
}

void ValidateNoNewFinalizers(const json::object& meta, const json::object& old_meta,
                             std::vector<StatusCause>& errs) {
  std::set<std::string> added = StringSet(meta.if_contains("finalizers"));
  for (const std::string& f : StringSet(old_meta.if_contains("finalizers"))) added.erase(f);
  if (added.empty()) return;
  errs.push_back(FieldForbidden("metadata.finalizers",
                                "no new finalizers can be added if the object is being deleted, "
                                "found new finalizers " +
                                    GoStringSlice(added)));
}

// Fields only the server sets, which an update may not change. Absent
// strings compare as "", absent timestamps as null, as Go's zero values do.
void ValidateImmutableFields(const json::object& meta, const json::object& old_meta,
                             std::vector<StatusCause>& errs) {
  for (std::string_view key : {"name", "namespace", "uid"}) {
    if (Str(meta, key) != Str(old_meta, key)) {
      errs.push_back(
          FieldInvalid(Child("metadata", key), json::string(Str(meta, key)), "field is immutable"));
    }
  }
  for (std::string_view key :
       {"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"}) {
    json::value now = ValueOrNull(meta, key);
    if (now != ValueOrNull(old_meta, key)) {
      errs.push_back(FieldInvalid(Child("metadata", key), now, "field is immutable"));
    }
  }
}

}  // namespace

std::vector<StatusCause> ValidateLabels(const json::value* labels, std::string_view field) {
  std::vector<StatusCause> errs;
  if (!CheckStringMap(labels, std::string(field), errs)) return errs;
  for (const auto& [key, value] : labels->get_object()) {
    for (std::string& msg : IsQualifiedName(key)) {
      errs.push_back(FieldInvalid(std::string(field), json::string(key), msg));
    }
    for (std::string& msg : IsValidLabelValue(value.get_string())) {
      errs.push_back(FieldInvalid(std::string(field), value, msg));
    }
  }
  return errs;
}

std::vector<StatusCause> ValidateAnnotations(const json::value* annotations,
                                             std::string_view field) {
  std::vector<StatusCause> errs;
  if (!CheckStringMap(annotations, std::string(field), errs)) return errs;
  int64_t total = 0;
  for (const auto& [key, value] : annotations->get_object()) {
    std::string lower(key);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    for (std::string& msg : IsQualifiedName(lower)) {
      errs.push_back(FieldInvalid(std::string(field), json::string(key), msg));
    }
    total += static_cast<int64_t>(key.size() + value.get_string().size());
  }
  if (total > kTotalAnnotationSizeLimit) {
    errs.push_back(FieldTooLong(std::string(field), kTotalAnnotationSizeLimit));
  }
  return errs;
}

std::vector<StatusCause> ValidateOwnerReferences(const json::value* refs, std::string_view field) {
  std::vector<StatusCause> errs;
  std::string path(field);
  if (!CheckKind(refs, json::kind::array, "array", path, errs)) return errs;
  std::string first_controller;
  const json::array& list = refs->get_array();
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_object()) {
      errs.push_back(FieldTypeInvalid(Index(path, i), list[i], "object"));
      continue;
    }
    const json::object& ref = list[i].get_object();
    ValidateOwnerReference(ref, path, errs);
    if (!GetBool(ref, "controller").value_or(false)) continue;
    std::string name = std::string(Str(ref, "kind")) + "/" + std::string(Str(ref, "name"));
    if (first_controller.empty()) {
      first_controller = name;
    } else {
      errs.push_back(FieldInvalid(path, *refs,
                                  "Only one reference can have Controller set to true. Found "
                                  "\"true\" in references for " +
                                      first_controller + " and " + name));
    }
  }
  return errs;
}

std::vector<StatusCause> ValidateFinalizers(const json::value* finalizers, std::string_view field,
                                            bool kube_names) {
  std::vector<StatusCause> errs;
  std::vector<std::string> names = FinalizerNames(finalizers, field, errs);
  bool orphan = false, foreground = false;
  for (const std::string& name : names) {
    for (std::string& msg : IsQualifiedName(name)) {
      errs.push_back(FieldInvalid(std::string(field), json::string(name), msg));
    }
    orphan = orphan || name == kFinalizerOrphan;
    foreground = foreground || name == kFinalizerForeground;
  }
  if (orphan && foreground) {
    errs.push_back(FieldInvalid(std::string(field), *finalizers,
                                "finalizer orphan and foregroundDeletion cannot be both set"));
  }
  if (kube_names) ValidateKubeFinalizerNames(finalizers, field, errs);
  return errs;
}

std::vector<StatusCause> ValidateObjectMeta(const json::object& obj,
                                            const ObjectMetaOptions& options) {
  std::vector<StatusCause> errs;
  const json::object* meta = Metadata(obj, errs);
  if (meta == nullptr) return errs;
  CheckStringFields(*meta, errs);
  ValidateNames(*meta, options.validate_name, errs);
  ValidateNamespace(Str(*meta, "namespace"), options.namespaced, errs);
  if (std::optional<int64_t> gen = GetInt(*meta, "generation"); gen && *gen < 0) {
    errs.push_back(FieldInvalid("metadata.generation", *gen, "must be greater than or equal to 0"));
  }
  ValidateMetaCommon(*meta, /*finalizers=*/true, errs);
  if (options.kube_finalizer_names) {
    ValidateKubeFinalizerNames(meta->if_contains("finalizers"), "metadata.finalizers", errs);
  }
  return errs;
}

std::vector<StatusCause> ValidateObjectMetaUpdate(const json::object& obj, const json::object& old,
                                                  const ObjectMetaOptions& options) {
  std::vector<StatusCause> errs;
  const json::object* meta = Metadata(obj, errs);
  const json::object* old_meta = Metadata(old, errs);
  if (meta == nullptr || old_meta == nullptr) return errs;
  CheckStringFields(*meta, errs);
  const json::value* deletion = old_meta->if_contains("deletionTimestamp");
  if (deletion != nullptr && !deletion->is_null()) {
    ValidateNoNewFinalizers(*meta, *old_meta, errs);
  }
  if (Str(*meta, "resourceVersion").empty()) {
    errs.push_back(FieldInvalid("metadata.resourceVersion", json::string(),
                                "must be specified for an update"));
  }
  int64_t generation = GetInt(*meta, "generation").value_or(0);
  if (generation < GetInt(*old_meta, "generation").value_or(0)) {
    errs.push_back(FieldInvalid("metadata.generation", generation, "must not be decremented"));
  }
  ValidateImmutableFields(*meta, *old_meta, errs);
  ValidateMetaCommon(*meta, /*finalizers=*/false, errs);
  if (options.kube_finalizer_names) {
    ValidateKubeFinalizerNames(meta->if_contains("finalizers"), "metadata.finalizers", errs);
  }
  return errs;
}

Status EnsureNamespaceMatchesRequest(json::object& obj, std::string_view request_namespace,
                                     bool namespaced) {
  std::string_view expected = namespaced ? request_namespace : "";
  const json::value* existing = obj.if_contains("metadata");
  if (existing != nullptr && !existing->is_object() && !existing->is_null()) {
    return Status::Ok();  // ValidateObjectMeta reports the type error.
  }
  json::object& meta = EnsureObject(obj, "metadata");
  std::string_view ns = Str(meta, "namespace");
  if (ns == expected) return Status::Ok();
  if (ns.empty()) {
    meta["namespace"] = expected;
    return Status::Ok();
  }
  if (expected.empty()) {
    meta.erase("namespace");
    return Status::Ok();
  }
  return Status::BadRequest(
      "the namespace of the provided object does not match the namespace sent on the request");
}

}  // namespace flotilla::api
