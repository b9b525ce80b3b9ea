// v1 Namespace, ConfigMap, Secret and ServiceAccount.
#include <map>

#include "api/kinds/resources.h"
#include "api/kinds/util.h"
#include "api/validation.h"
#include "base/base64.h"

namespace flotilla::api::kinds {
namespace {

constexpr int64_t kMaxSecretSize = 1024 * 1024;
constexpr std::string_view kImmutableDetail = "field is immutable when `immutable` is set";

// ---- Namespace ----

// SetDefaults_Namespace and SetDefaults_NamespaceStatus, plus the
// "kubernetes" finalizer the namespace strategy adds on create. An explicit
// spec.finalizers list (even an empty one, as namespace finalization writes
// it) is kept as it is, so finalizing stays possible.
void DefaultNamespace(json::object& obj) {
  std::string name = StringAt(obj, "metadata.name");
  if (!name.empty()) {
    EnsureObject(EnsureObject(obj, "metadata"), "labels")["kubernetes.io/metadata.name"] = name;
  }
  json::object& spec = EnsureObject(obj, "spec");
  SetIfUnset(spec, "finalizers", json::array{"kubernetes"});
  SetIfEmpty(EnsureObject(obj, "status"), "phase", "Active");
}

// ValidateNamespace's finalizer names, reported at spec.finalizers.
Causes ValidateNamespace(const json::object& obj, const json::object*) {
  Causes out;
  const json::array* finalizers = ArrayAt(obj, "spec.finalizers");
  if (finalizers == nullptr) return out;
  for (const json::value& f : *finalizers) {
    std::string name = f.is_string() ? std::string(f.get_string()) : "";
    for (std::string& msg : IsQualifiedName(name)) {
      out.push_back(FieldInvalid("spec.finalizers", json::string(name), msg));
    }
    bool standard = name == "kubernetes" || name == "orphan" || name == "foregroundDeletion";
    if (name.find('/') == std::string::npos && !standard) {
      out.push_back(FieldInvalid("spec.finalizers", json::string(name),
                                 "name is neither a standard finalizer name nor is it fully "
                                 "qualified"));
    }
  }
  return out;
}

// ---- ConfigMap and Secret ----

// validation.IsConfigMapKey.
std::vector<std::string> IsConfigMapKey(std::string_view key) {
  std::vector<std::string> errs;
  if (key.size() > 253) errs.push_back("must be no more than 253 characters");
  bool ok = !key.empty();
  for (char c : key) {
    bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && c != '-' && c != '_' && c != '.') ok = false;
  }
  if (!ok) {
    errs.push_back(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
        "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
        "'[-._a-zA-Z0-9]+')");
  }
  if (key == ".") {
    errs.push_back("must not be '.'");
  } else if (key == "..") {
    errs.push_back("must not be '..'");
  } else if (key.starts_with("..")) {
    errs.push_back("must not start with '..'");
  }
  return errs;
}

// Checks the keys of the map at obj[field]; returns the total size of its
// values (decoded from base64 when `base64`).
int64_t CheckKeys(const json::object& obj, std::string_view field, bool base64, Causes& out) {
  const json::object* data = GetObject(obj, field);
  if (data == nullptr) return 0;
  int64_t total = 0;
  for (const auto& [key, value] : *data) {
    for (std::string& msg : IsConfigMapKey(key)) {
      out.push_back(FieldInvalid(Key(field, key), json::string(key), msg));
    }
    std::string_view text = value.is_string() ? std::string_view(value.get_string()) : "";
    std::optional<std::string> decoded = base64 ? Base64Decode(text) : std::nullopt;
    total += static_cast<int64_t>(decoded ? decoded->size() : text.size());
  }
  return total;
}

void CheckImmutableData(const json::object& obj, const json::object* old,
                        std::initializer_list<std::string_view> fields, Causes& out) {
  if (old == nullptr || !GetBool(*old, "immutable").value_or(false)) return;
  if (!GetBool(obj, "immutable").value_or(false)) {
    out.push_back(FieldForbidden("immutable", kImmutableDetail));
  }
  for (std::string_view field : fields) {
    if (!SemanticEqual(obj.if_contains(field), old->if_contains(field))) {
      out.push_back(FieldForbidden(std::string(field), kImmutableDetail));
    }
  }
}

Causes ValidateConfigMap(const json::object& obj, const json::object* old) {
  Causes out;
  CheckImmutableData(obj, old, {"data", "binaryData"}, out);
  int64_t total = CheckKeys(obj, "data", false, out);
  const json::object* data = GetObject(obj, "data");
  const json::object* binary = GetObject(obj, "binaryData");
  if (data != nullptr && binary != nullptr) {
    for (const auto& [key, value] : *data) {
      if (binary->contains(key)) {
        out.push_back(FieldInvalid(Key("data", key), json::string(key),
                                   "duplicate of key present in binaryData"));
      }
    }
  }
  total += CheckKeys(obj, "binaryData", true, out);
  if (total > kMaxSecretSize) out.push_back(FieldTooLong("", kMaxSecretSize));
  return out;
}

// SetDefaults_Secret, and the v1 conversion that merges stringData into data
// (stringData is write-only: it is never stored or returned).
void DefaultSecret(json::object& obj) {
  SetIfEmpty(obj, "type", "Opaque");
  const json::object* found = GetObject(obj, "stringData");
  if (found != nullptr && !found->empty()) {
    json::object string_data = *found;  // adding "data" may move the map it points into
    json::object& data = EnsureObject(obj, "data");
    for (const auto& [key, value] : string_data) {
      data[key] = Base64Encode(value.is_string() ? std::string_view(value.get_string()) : "");
    }
  }
  obj.erase("stringData");
}

bool HasDataKey(const json::object& obj, std::string_view key) {
  const json::object* data = GetObject(obj, "data");
  return data != nullptr && data->contains(key);
}

// data[key] as stored (base64), "" when absent.
std::string_view DataValue(const json::object& obj, std::string_view key) {
  const json::object* data = GetObject(obj, "data");
  return data ? GetString(*data, key).value_or("") : "";
}

void RequireDataKeys(const json::object& obj, std::initializer_list<std::string_view> keys,
                     Causes& out) {
  for (std::string_view key : keys) {
    if (!HasDataKey(obj, key)) out.push_back(FieldRequired(Key("data", key), ""));
  }
}

void CheckDockerConfig(const json::object& obj, std::string_view key, Causes& out) {
  if (!HasDataKey(obj, key)) {
    out.push_back(FieldRequired(Key("data", key), ""));
    return;
  }
  std::optional<std::string> raw = Base64Decode(DataValue(obj, key));
  StatusOr<json::object> parsed = ParseJsonObject(raw.value_or(""));
  if (!parsed.ok()) {
    out.push_back(FieldInvalid(Key("data", key), json::string("<secret contents redacted>"),
                               parsed.status().message()));
  }
}

// The keys each well-known Secret type requires (ValidateSecret).
void ValidateSecretType(const json::object& obj, Causes& out) {
  std::string type = StringAt(obj, "type");
  if (type == "kubernetes.io/service-account-token") {
    const json::object* annotations = ObjectAt(obj, "metadata.annotations");
    if (annotations == nullptr ||
        GetString(*annotations, "kubernetes.io/service-account.name").value_or("").empty()) {
      out.push_back(
          FieldRequired(Key("metadata.annotations", "kubernetes.io/service-account.name"), ""));
    }
  } else if (type == "kubernetes.io/dockercfg") {
    CheckDockerConfig(obj, ".dockercfg", out);
  } else if (type == "kubernetes.io/dockerconfigjson") {
    CheckDockerConfig(obj, ".dockerconfigjson", out);
  } else if (type == "kubernetes.io/basic-auth") {
    if (!HasDataKey(obj, "username") && !HasDataKey(obj, "password")) {
      RequireDataKeys(obj, {"username", "password"}, out);
    }
  } else if (type == "kubernetes.io/ssh-auth") {
    std::optional<std::string> key = Base64Decode(DataValue(obj, "ssh-privatekey"));
    if (!key || key->empty()) out.push_back(FieldRequired(Key("data", "ssh-privatekey"), ""));
  } else if (type == "kubernetes.io/tls") {
    RequireDataKeys(obj, {"tls.crt", "tls.key"}, out);
  }
}

Causes ValidateSecret(const json::object& obj, const json::object* old) {
  Causes out;
  if (old != nullptr && StringAt(obj, "type") != StringAt(*old, "type")) {
    out.push_back(FieldInvalid("type", json::string(StringAt(obj, "type")), "field is immutable"));
  }
  CheckImmutableData(obj, old, {"data"}, out);
  if (CheckKeys(obj, "data", true, out) > kMaxSecretSize) {
    out.push_back(FieldTooLong("data", kMaxSecretSize));
  }
  ValidateSecretType(obj, out);
  return out;
}

json::value MapSize(const json::object& obj, std::initializer_list<std::string_view> fields) {
  int64_t n = 0;
  for (std::string_view f : fields) {
    if (const json::object* m = GetObject(obj, f)) n += static_cast<int64_t>(m->size());
  }
  return n;
}

}  // namespace

Resource NamespaceResource() {
  Resource r =
      MakeResource("", "v1", "Namespace", "namespaces", false, "io.k8s.api.core.v1.Namespace");
  r.short_names = {"ns"};
  r.has_status = true;
  r.verbs = {"create", "delete", "get", "list", "patch", "update", "watch"};
  r.default_fn = DefaultNamespace;
  r.validate_fn = ValidateNamespace;
  r.columns = {
      NameColumn(),
      Column("Status", "string", "The status of the namespace", 0, StringCell("status.phase")),
      AgeColumn()};
  return r;
}

Resource ConfigMapResource() {
  Resource r =
      MakeResource("", "v1", "ConfigMap", "configmaps", true, "io.k8s.api.core.v1.ConfigMap");
  r.short_names = {"cm"};
  r.validate_fn = ValidateConfigMap;
  r.columns = {NameColumn(),
               Column("Data", "string", "Data contains the configuration data.", 0,
                      [](const json::object& obj, TimePoint) {
                        return MapSize(obj, {"data", "binaryData"});
                      }),
               AgeColumn()};
  return r;
}

Resource SecretResource() {
  Resource r = MakeResource("", "v1", "Secret", "secrets", true, "io.k8s.api.core.v1.Secret");
  r.default_fn = DefaultSecret;
  r.validate_fn = ValidateSecret;
  r.columns = {NameColumn(),
               Column("Type", "string", "Used to facilitate programmatic handling of secret data.",
                      0, StringCell("type")),
               Column("Data", "string", "Data contains the secret data.", 0,
                      [](const json::object& obj, TimePoint) { return MapSize(obj, {"data"}); }),
               AgeColumn()};
  return r;
}

Resource ServiceAccountResource() {
  Resource r = MakeResource("", "v1", "ServiceAccount", "serviceaccounts", true,
                            "io.k8s.api.core.v1.ServiceAccount");
  r.short_names = {"sa"};
  r.columns = {NameColumn(),
               Column("Secrets", "string",
                      "Secrets is a list of the secrets in the same namespace that pods running "
                      "using this ServiceAccount are allowed to use.",
                      0,
                      [](const json::object& obj, TimePoint) -> json::value {
                        const json::array* secrets = GetArray(obj, "secrets");
                        return static_cast<int64_t>(secrets ? secrets->size() : 0);
                      }),
               AgeColumn()};
  return r;
}

}  // namespace flotilla::api::kinds
