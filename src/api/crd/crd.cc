#include "api/crd/crd.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "api/validation.h"

namespace flotilla::api::crd {
namespace {

using Causes = std::vector<StatusCause>;

// base/json.h's readers, over an object that may be absent.
std::string StringIn(const json::object* o, std::string_view key) {
  return o == nullptr ? "" : std::string(GetString(*o, key).value_or(""));
}
bool BoolIn(const json::object* o, std::string_view key) {
  return o != nullptr && GetBool(*o, key).value_or(false);
}
std::vector<std::string> StringsIn(const json::object* o, std::string_view key) {
  return o == nullptr ? std::vector<std::string>{} : StringsAt(*o, key);
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

void Dns1035(const std::string& value, const std::string& path, Causes& out) {
  for (const std::string& msg : IsDNS1035Label(value)) {
    out.push_back(FieldInvalid(path, json::string(value), msg));
  }
}

void ReadNames(const json::object* names, Definition& d, Causes& out) {
  const std::string p = "spec.names";
  d.plural = StringIn(names, "plural");
  d.singular = StringIn(names, "singular");
  d.kind = StringIn(names, "kind");
  d.list_kind = StringIn(names, "listKind");
  d.short_names = StringsIn(names, "shortNames");
  d.categories = StringsIn(names, "categories");
  if (d.plural.empty()) {
    out.push_back(FieldRequired(p + ".plural", ""));
  } else {
    Dns1035(d.plural, p + ".plural", out);
  }
  if (d.singular.empty()) d.singular = Lower(d.kind);
  if (!d.singular.empty()) Dns1035(d.singular, p + ".singular", out);
  if (d.kind.empty()) {
    out.push_back(FieldRequired(p + ".kind", ""));
  } else {
    for (const std::string& msg : IsDNS1035Label(Lower(d.kind))) {
      out.push_back(FieldInvalid(p + ".kind", json::string(d.kind), msg));
    }
  }
  if (d.list_kind.empty()) d.list_kind = d.kind + "List";
  for (const std::string& msg : IsDNS1035Label(Lower(d.list_kind))) {
    out.push_back(FieldInvalid(p + ".listKind", json::string(d.list_kind), msg));
  }
  if (!d.kind.empty() && d.kind == d.list_kind) {
    out.push_back(FieldInvalid(p + ".listKind", json::string(d.list_kind),
                               "kind and listKind may not be the same"));
  }
  for (size_t i = 0; i < d.short_names.size(); ++i) {
    Dns1035(d.short_names[i], p + ".shortNames[" + std::to_string(i) + "]", out);
  }
  for (size_t i = 0; i < d.categories.size(); ++i) {
    Dns1035(d.categories[i], p + ".categories[" + std::to_string(i) + "]", out);
  }
}

// ".spec.replicas" -> "spec.replicas", checking the prefix.
std::string ScalePath(const json::object* scale, const char* key, const std::string& path,
                      std::initializer_list<const char*> prefixes, bool required, Causes& out) {
  std::string v = StringIn(scale, key);
  if (v.empty()) {
    if (required) out.push_back(FieldRequired(path + "." + key, ""));
    return "";
  }
  bool ok = std::any_of(prefixes.begin(), prefixes.end(), [&](const char* p) {
    return v.rfind(p, 0) == 0 && v.size() > std::string_view(p).size();
  });
  if (!ok || v.find('[') != std::string::npos) {
    std::string want;
    for (const char* p : prefixes) want += (want.empty() ? "" : " or ") + std::string(p);
    out.push_back(
        FieldInvalid(path + "." + key, json::string(v), "should be a json path under " + want));
  }
  return v.substr(1);
}

void ReadVersion(const json::object& v, const std::string& p, Version& out, Causes& causes) {
  out.name = StringIn(&v, "name");
  out.served = BoolIn(&v, "served");
  out.storage = BoolIn(&v, "storage");
  out.deprecated = BoolIn(&v, "deprecated");
  out.deprecation_warning = StringIn(&v, "deprecationWarning");
  if (out.name.empty()) {
    causes.push_back(FieldRequired(p + ".name", ""));
  } else {
    Dns1035(out.name, p + ".name", causes);
  }
  const json::object* schema = GetObject(v, "schema");
  const json::value* raw = schema ? schema->if_contains("openAPIV3Schema") : nullptr;
  if (raw == nullptr) {
    causes.push_back(FieldRequired(p + ".schema.openAPIV3Schema", "schemas are required"));
  } else {
    out.raw_schema = *raw;
    out.schema = ParseStructural(*raw, p + ".schema.openAPIV3Schema", &causes);
  }
  const json::object* sub = GetObject(v, "subresources");
  out.status = sub != nullptr && GetObject(*sub, "status") != nullptr;
  if (const json::object* scale = sub ? GetObject(*sub, "scale") : nullptr) {
    out.scale = true;
    std::string sp = p + ".subresources.scale";
    out.spec_replicas_path = ScalePath(scale, "specReplicasPath", sp, {".spec."}, true, causes);
    out.status_replicas_path =
        ScalePath(scale, "statusReplicasPath", sp, {".status."}, true, causes);
    out.label_selector_path =
        ScalePath(scale, "labelSelectorPath", sp, {".spec.", ".status."}, false, causes);
  }
  const json::value* cols = v.if_contains("additionalPrinterColumns");
  if (cols != nullptr && cols->is_array()) {
    static const std::vector<std::string> kTypes = {"integer", "number", "string", "boolean",
                                                    "date"};
    for (size_t i = 0; i < cols->get_array().size(); ++i) {
      const json::value& c = cols->get_array()[i];
      if (!c.is_object()) continue;
      std::string cp = p + ".additionalPrinterColumns[" + std::to_string(i) + "]";
      PrinterColumn col;
      col.name = StringIn(&c.get_object(), "name");
      col.type = StringIn(&c.get_object(), "type");
      col.format = StringIn(&c.get_object(), "format");
      col.description = StringIn(&c.get_object(), "description");
      col.json_path = StringIn(&c.get_object(), "jsonPath");
      if (const json::value* pr = c.get_object().if_contains("priority"); pr && pr->is_int64()) {
        col.priority = static_cast<int>(pr->get_int64());
      }
      if (col.name.empty()) causes.push_back(FieldRequired(cp + ".name", ""));
      if (col.type.empty()) {
        causes.push_back(FieldRequired(cp + ".type", ""));
      } else if (std::find(kTypes.begin(), kTypes.end(), col.type) == kTypes.end()) {
        causes.push_back(FieldNotSupported(cp + ".type", json::string(col.type), kTypes));
      }
      if (col.json_path.empty()) {
        causes.push_back(FieldRequired(cp + ".jsonPath", ""));
      } else if (col.json_path[0] != '.') {
        causes.push_back(FieldInvalid(cp + ".jsonPath", json::string(col.json_path),
                                      "must be a simple json path starting with ."));
      }
      out.columns.push_back(std::move(col));
    }
  }
}

Causes ReadInto(const json::object& crd, Definition& d) {
  Causes out;
  const json::object* meta = GetObject(crd, "metadata");
  const json::object* spec = GetObject(crd, "spec");
  d.name = StringIn(meta, "name");
  if (spec == nullptr) {
    out.push_back(FieldRequired("spec", ""));
    return out;
  }
  d.group = StringIn(spec, "group");
  if (d.group.empty()) {
    out.push_back(FieldRequired("spec.group", ""));
  } else {
    for (const std::string& msg : IsDNS1123Subdomain(d.group)) {
      out.push_back(FieldInvalid("spec.group", json::string(d.group), msg));
    }
    if (d.group.find('.') == std::string::npos) {
      out.push_back(FieldInvalid("spec.group", json::string(d.group),
                                 "should be a domain with at least one dot"));
    }
  }
  ReadNames(GetObject(*spec, "names"), d, out);
  if (!d.plural.empty() && !d.group.empty() && d.name != d.plural + "." + d.group) {
    out.push_back(FieldInvalid("metadata.name", json::string(d.name),
                               "must be spec.names.plural+\".\"+spec.group"));
  }
  std::string scope = StringIn(spec, "scope");
  if (scope.empty()) {
    out.push_back(FieldRequired("spec.scope", ""));
  } else if (scope != "Namespaced" && scope != "Cluster") {
    out.push_back(FieldNotSupported("spec.scope", json::string(scope), {"Cluster", "Namespaced"}));
  }
  d.namespaced = scope != "Cluster";
  if (BoolIn(spec, "preserveUnknownFields")) {
    out.push_back(FieldInvalid("spec.preserveUnknownFields", json::value(true),
                               "cannot set to true, set x-kubernetes-preserve-unknown-fields to "
                               "true in spec.versions[*].schema instead"));
  }
  if (const json::object* conv = GetObject(*spec, "conversion")) {
    std::string strategy = StringIn(conv, "strategy");
    if (strategy == "Webhook") {
      out.push_back(
          FieldNotSupported("spec.conversion.strategy", json::string(strategy), {"None"}));
      out.back().message += " (conversion webhooks are not served by Flotilla: docs/crds.md)";
    } else if (!strategy.empty() && strategy != "None") {
      out.push_back(FieldNotSupported("spec.conversion.strategy", json::string(strategy),
                                      {"None", "Webhook"}));
    }
  }
  const json::value* versions = spec->if_contains("versions");
  if (versions == nullptr || !versions->is_array() || versions->get_array().empty()) {
    out.push_back(FieldRequired("spec.versions",
                                "must have exactly one version marked as "
                                "storage version"));
    return out;
  }
  std::set<std::string> names;
  int storage = 0;
  for (size_t i = 0; i < versions->get_array().size(); ++i) {
    const json::value& v = versions->get_array()[i];
    std::string p = "spec.versions[" + std::to_string(i) + "]";
    if (!v.is_object()) {
      out.push_back(FieldInvalid(p, v, "must be an object"));
      continue;
    }
    Version version;
    ReadVersion(v.get_object(), p, version, out);
    if (!version.name.empty() && !names.insert(version.name).second) {
      out.push_back(FieldDuplicate(p + ".name", json::string(version.name)));
    }
    storage += version.storage;
    d.versions.push_back(std::move(version));
  }
  if (storage != 1) {
    out.push_back(FieldInvalid("spec.versions", *versions,
                               "must have exactly one version marked as storage version"));
    out.back().message = "Invalid value: \"" + std::to_string(storage) +
                         " storage versions\": must have exactly one version marked as storage "
                         "version";
  }
  return out;
}

}  // namespace

const Version* Definition::StorageVersion() const {
  for (const Version& v : versions) {
    if (v.storage) return &v;
  }
  return nullptr;
}

StatusOr<Definition> Read(const json::object& crd) {
  Definition d;
  Causes causes = ReadInto(crd, d);
  if (!causes.empty())
    return InvalidStatus("CustomResourceDefinition.apiextensions.k8s.io", d.name,
                         std::move(causes));
  d.stored_versions = StringsAt(crd, "status.storedVersions");
  return d;
}

std::vector<StatusCause> Validate(const json::object& crd, const json::object* old) {
  Definition d;
  Causes out = ReadInto(crd, d);
  if (old != nullptr) {
    const json::object* spec = GetObject(crd, "spec");
    const json::object* old_spec = GetObject(*old, "spec");
    std::string scope = StringIn(spec, "scope"), old_scope = StringIn(old_spec, "scope");
    if (!old_scope.empty() && scope != old_scope) {
      out.push_back(FieldInvalid("spec.scope", json::string(scope), "field is immutable"));
    }
  }
  return out;
}

std::vector<std::string> ConflictingNames(const Definition& mine, const Definition& other) {
  std::vector<std::string> out;
  if (mine.group != other.group || mine.name == other.name) return out;
  std::set<std::string> theirs = {other.plural, other.singular};
  theirs.insert(other.short_names.begin(), other.short_names.end());
  std::set<std::string> kinds = {other.kind, other.list_kind};
  for (const std::string& n : {mine.plural, mine.singular}) {
    if (!n.empty() && theirs.contains(n)) out.push_back(n);
  }
  for (const std::string& n : mine.short_names) {
    if (theirs.contains(n)) out.push_back(n);
  }
  for (const std::string& n : {mine.kind, mine.list_kind}) {
    if (kinds.contains(n)) out.push_back(n);
  }
  return out;
}

const json::value* Evaluate(const json::object& obj, std::string_view path) {
  if (path.starts_with("{") && path.ends_with("}")) path = path.substr(1, path.size() - 2);
  if (path.starts_with(".")) path.remove_prefix(1);
  const json::value* cur = nullptr;
  const json::object* at = &obj;
  while (!path.empty()) {
    size_t end = path.find_first_of(".[");
    std::string_view field = path.substr(0, end);
    path = end == std::string_view::npos ? "" : path.substr(end);
    if (!field.empty()) {
      if (at == nullptr) return nullptr;
      cur = at->if_contains(field);
      if (cur == nullptr) return nullptr;
    }
    while (path.starts_with("[")) {
      size_t close = path.find(']');
      if (close == std::string_view::npos || cur == nullptr || !cur->is_array()) return nullptr;
      std::string_view index = path.substr(1, close - 1);
      if (index.empty() || !std::all_of(index.begin(), index.end(), ::isdigit)) return nullptr;
      size_t i = std::stoul(std::string(index));
      if (i >= cur->get_array().size()) return nullptr;
      cur = &cur->get_array()[i];
      path.remove_prefix(close + 1);
    }
    if (path.starts_with(".")) path.remove_prefix(1);
    at = cur != nullptr && cur->is_object() ? &cur->get_object() : nullptr;
  }
  return cur;
}

}  // namespace flotilla::api::crd
