#include "planner/preferences.h"

#include <array>
#include <utility>

#include "planner/field_errors.h"

namespace flotilla::planner {
namespace {

using internal::AddUnknownField;
using internal::kTypeInvalid;
using internal::kValueInvalid;
using internal::Quote;
using internal::ReadInt;
using internal::Shown;
using Errors = internal::FieldErrors;

constexpr std::string_view kPreferencesWhat = "replica placement preferences";
constexpr std::array<std::string_view, 2> kTopFields = {"rebalance", "clusters"};
constexpr std::array<std::string_view, 3> kClusterFields = {"minReplicas", "maxReplicas", "weight"};

ClusterPreferences ReadCluster(const json::value& v, Errors& errors, const std::string& base) {
  ClusterPreferences out;
  if (!v.is_object()) {
    errors.Add(kTypeInvalid, base, "Invalid value: " + Shown(v) + ": must be an object");
    return out;
  }
  for (const auto& [key, value] : v.get_object()) {
    std::string field = base + "." + std::string(key);
    if (key == "minReplicas") {
      if (!value.is_null()) out.min_replicas = ReadInt(value, errors, field).value_or(0);
    } else if (key == "maxReplicas") {
      if (!value.is_null()) out.max_replicas = ReadInt(value, errors, field);
    } else if (key == "weight") {
      if (!value.is_null()) out.weight = ReadInt(value, errors, field).value_or(0);
    } else {
      AddUnknownField(errors, std::move(field), key, kClusterFields);
    }
  }
  return out;
}

void ReadClusters(const json::value& v, Errors& errors, Preferences& out) {
  if (v.is_null()) return;
  if (!v.is_object()) {
    errors.Add(kTypeInvalid, errors.Field("clusters"),
               "Invalid value: " + Shown(v) + ": must be an object");
    return;
  }
  for (const auto& [key, value] : v.get_object()) {
    std::string base = errors.Field("clusters[" + std::string(key) + "]");
    out.clusters[std::string(key)] = ReadCluster(value, errors, base);
  }
}

void ValidateName(std::string_view name, Errors& errors) {
  if (name == kAnyCluster || IsValidClusterName(name)) return;
  errors.Add(kValueInvalid, errors.Field("clusters[" + std::string(name) + "]"),
             "Invalid value: " + Quote(name) +
                 ": must be \"*\" or a DNS-1123 subdomain (at most 253 letters, digits, '-' "
                 "and '.', starting and ending with a letter or digit)");
}

void ValidateCluster(std::string_view name, const ClusterPreferences& c, Errors& errors) {
  std::string base = errors.Field("clusters[" + std::string(name) + "]");
  auto negative = [&](std::string_view field, int64_t value) {
    if (value >= 0) return;
    errors.Add(kValueInvalid, base + "." + std::string(field),
               "Invalid value: " + std::to_string(value) + ": must be greater than or equal to 0");
  };
  negative("minReplicas", c.min_replicas);
  if (c.max_replicas) negative("maxReplicas", *c.max_replicas);
  negative("weight", c.weight);
  if (c.max_replicas && *c.max_replicas >= 0 && c.min_replicas >= 0 &&
      *c.max_replicas < c.min_replicas) {
    errors.Add(kValueInvalid, base + ".maxReplicas",
               "Invalid value: " + std::to_string(*c.max_replicas) +
                   ": must be greater than or equal to minReplicas (" +
                   std::to_string(c.min_replicas) + ")");
  }
}

void ValidateInto(const Preferences& prefs, Errors& errors) {
  for (const auto& [name, cluster] : prefs.clusters) {
    ValidateName(name, errors);
    ValidateCluster(name, cluster, errors);
  }
}

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

}  // namespace

Preferences Preferences::Default() {
  Preferences prefs;
  prefs.clusters[std::string(kAnyCluster)] = ClusterPreferences{.weight = 1};
  return prefs;
}

const ClusterPreferences* Preferences::For(std::string_view cluster) const {
  auto it = clusters.find(cluster);
  if (it == clusters.end()) it = clusters.find(kAnyCluster);
  return it == clusters.end() ? nullptr : &it->second;
}

StatusOr<Preferences> PreferencesFromJson(const json::value& doc, std::string_view path) {
  Errors errors(path, kPreferencesWhat);
  if (!doc.is_object()) {
    errors.Add(kTypeInvalid, errors.Field(""),
               "Invalid value: " + Shown(doc) + ": must be an object");
    return std::move(errors).ToStatus();
  }
  Preferences out;
  for (const auto& [key, value] : doc.get_object()) {
    if (key == "rebalance") {
      if (value.is_bool()) {
        out.rebalance = value.get_bool();
      } else if (!value.is_null()) {
        errors.Add(kTypeInvalid, errors.Field("rebalance"),
                   "Invalid value: " + Shown(value) + ": must be a boolean");
      }
    } else if (key == "clusters") {
      ReadClusters(value, errors, out);
    } else {
      AddUnknownField(errors, errors.Field(key), key, kTopFields);
    }
  }
  ValidateInto(out, errors);
  if (!errors.empty()) return std::move(errors).ToStatus();
  return out;
}

StatusOr<Preferences> ParsePreferences(std::string_view text) {
  StatusOr<json::value> doc = ParseJson(text);
  if (!doc.ok()) {
    return Status::Invalid("invalid " + std::string(kPreferencesWhat) + ": " + doc.status().message(),
                           {{std::string(kValueInvalid), doc.status().message(), ""}});
  }
  return PreferencesFromJson(*doc);
}

Status ValidatePreferences(const Preferences& prefs, std::string_view path) {
  Errors errors(path, kPreferencesWhat);
  ValidateInto(prefs, errors);
  if (!errors.empty()) return std::move(errors).ToStatus();
  return Status::Ok();
}

json::object PreferencesToJson(const Preferences& prefs) {
  json::object clusters;
  for (const auto& [name, c] : prefs.clusters) {
    json::object entry;
    entry["minReplicas"] = c.min_replicas;
    if (c.max_replicas) entry["maxReplicas"] = *c.max_replicas;
    entry["weight"] = c.weight;
    clusters[name] = std::move(entry);
  }
  json::object out;
  out["rebalance"] = prefs.rebalance;
  out["clusters"] = std::move(clusters);
  return out;
}

bool IsValidClusterName(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  size_t label_start = 0;
  for (size_t i = 0; i <= name.size(); ++i) {
    if (i < name.size() && name[i] != '.') {
      if (!IsAlnum(name[i]) && name[i] != '-') return false;
      continue;
    }
    // [label_start, i) is one label.
    if (i == label_start) return false;
    if (!IsAlnum(name[label_start]) || !IsAlnum(name[i - 1])) return false;
    label_start = i + 1;
  }
  return true;
}

}  // namespace flotilla::planner
