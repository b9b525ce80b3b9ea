#include "planner/plan_case.h"

#include <array>
#include <set>
#include <utility>

#include "planner/field_errors.h"

namespace flotilla::planner {
namespace {

using internal::FieldErrors;
using internal::kDuplicate;
using internal::kRequired;
using internal::kTypeInvalid;
using internal::kValueInvalid;
using internal::Quote;
using internal::Shown;

constexpr std::string_view kPlanCaseWhat = "plan case";
constexpr std::array<std::string_view, 6> kCaseFields = {"replicas", "clusters", "current",
                                                         "capacity", "key",      "preferences"};
constexpr std::string_view kNameRule =
    "must be a DNS-1123 subdomain (at most 253 letters, digits, '-' and '.', starting and "
    "ending with a letter or digit)";

std::optional<int64_t> ReadCount(const json::value& v, FieldErrors& errors, std::string field) {
  std::optional<int64_t> n = internal::ReadInt(v, errors, field);
  if (n && *n < 0) {
    errors.Add(kValueInvalid, std::move(field),
               "Invalid value: " + std::to_string(*n) + ": must be greater than or equal to 0");
    return std::nullopt;
  }
  return n;
}

void ReadClusterList(const json::value& v, FieldErrors& errors, std::vector<std::string>& out) {
  if (!v.is_array()) {
    errors.Add(kTypeInvalid, "clusters", "Invalid value: " + Shown(v) + ": must be an array");
    return;
  }
  std::set<std::string, std::less<>> seen;
  const json::array& list = v.get_array();
  for (size_t i = 0; i < list.size(); ++i) {
    std::string field = "clusters[" + std::to_string(i) + "]";
    if (!list[i].is_string()) {
      errors.Add(kTypeInvalid, field, "Invalid value: " + Shown(list[i]) + ": must be a string");
      continue;
    }
    std::string name(list[i].get_string());
    if (!IsValidClusterName(name)) {
      errors.Add(kValueInvalid, field,
                 "Invalid value: " + Quote(name) + ": " + std::string(kNameRule));
    } else if (!seen.insert(name).second) {
      errors.Add(kDuplicate, field, "Duplicate value: " + Quote(name));
    } else {
      out.push_back(std::move(name));
    }
  }
}

void ReadCounts(const json::value& v, std::string_view what, FieldErrors& errors,
                ReplicaCounts& out) {
  if (v.is_null()) return;
  if (!v.is_object()) {
    errors.Add(kTypeInvalid, std::string(what),
               "Invalid value: " + Shown(v) + ": must be an object of cluster name to count");
    return;
  }
  for (const auto& [name, count] : v.get_object()) {
    std::string field = std::string(what) + "[" + std::string(name) + "]";
    if (!IsValidClusterName(name)) {
      errors.Add(kValueInvalid, field,
                 "Invalid value: " + Quote(name) + ": " + std::string(kNameRule));
      continue;
    }
    if (std::optional<int64_t> n = ReadCount(count, errors, field)) out[std::string(name)] = *n;
  }
}

void ReadField(std::string_view key, const json::value& value, FieldErrors& errors, PlanCase& c) {
  if (key == "replicas") {
    c.replicas = ReadCount(value, errors, "replicas").value_or(0);
  } else if (key == "clusters") {
    ReadClusterList(value, errors, c.clusters);
  } else if (key == "current") {
    ReadCounts(value, "current", errors, c.current);
  } else if (key == "capacity") {
    ReadCounts(value, "capacity", errors, c.capacity);
  } else if (key == "key") {
    if (value.is_string()) {
      c.key = value.get_string();
    } else if (!value.is_null()) {
      errors.Add(kTypeInvalid, "key", "Invalid value: " + Shown(value) + ": must be a string");
    }
  } else if (key == "preferences") {
    if (value.is_null()) return;
    StatusOr<Preferences> prefs = PreferencesFromJson(value, "preferences");
    if (prefs.ok()) {
      c.preferences = *std::move(prefs);
    } else {
      errors.AddAll(prefs.status());
    }
  } else {
    internal::AddUnknownField(errors, std::string(key), key, kCaseFields);
  }
}

std::string_view LimitName(Limit limit) {
  switch (limit) {
    case Limit::kNone:
      return "";
    case Limit::kMaxReplicas:
      return "maxReplicas";
    case Limit::kCapacity:
      return "capacity";
    case Limit::kReplicas:
      return "replicas";
    case Limit::kScaleDown:
      return "scaleDown";
  }
  return "";
}

std::string Phrase(std::string_view text, int64_t n) {
  return std::string(text) + std::to_string(n);
}

// One sentence on why a cluster got its number, e.g.
// "keeps 20 running + 2 by weight 1 = 22; capped by capacity 6 (overflow 4)".
std::string Reason(const Explanation& e, const ClusterPreferences* prefs, const ClusterState& c,
                   int64_t replicas, int64_t overflow) {
  if (prefs == nullptr) return "no preferences entry for it and no \"*\" entry: 0";
  std::vector<std::string> parts;
  if (e.min > 0) parts.push_back(Phrase("minReplicas gives ", e.min));
  if (e.kept > 0) parts.push_back(Phrase("keeps ", e.kept) + " running");
  if (e.weighted > 0)
    parts.push_back(Phrase("weight ", prefs->weight) + Phrase(" share gives ", e.weighted));
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : " + ") + part;
  if (parts.empty())
    out = prefs->weight == 0 ? "weight 0 and no minReplicas" : "nothing left to place";
  out += Phrase(" = ", replicas);
  switch (e.limit) {
    case Limit::kNone:
      break;
    case Limit::kMaxReplicas:
      out += Phrase("; capped by maxReplicas ", *prefs->max_replicas);
      break;
    case Limit::kCapacity:
      out += Phrase("; capped by capacity ", *c.estimated_capacity);
      if (overflow > 0) out += Phrase(" (overflow ", overflow) + ")";
      break;
    case Limit::kReplicas:
      out += "; no replicas were left for more";
      break;
    case Limit::kScaleDown:
      out +=
          Phrase("; scale-down: ", c.current_replicas - replicas) +
          " running replicas removed, from the clusters furthest above their weighted share first";
      break;
  }
  return out;
}

json::object ExplainCluster(const Explanation& e, const ClusterPreferences* prefs,
                            const ClusterState& c, int64_t replicas, int64_t overflow) {
  json::object out;
  out["preference"] = e.preference.empty() ? json::value(nullptr) : json::value(e.preference);
  out["running"] = c.current_replicas;
  out["min"] = e.min;
  out["kept"] = e.kept;
  out["weighted"] = e.weighted;
  if (e.limit != Limit::kNone) out["limit"] = LimitName(e.limit);
  out["reason"] = Reason(e, prefs, c, replicas, overflow);
  return out;
}

}  // namespace

json::object RunPlanCase(const PlanCase& c, bool explain) {
  std::vector<ClusterState> clusters;
  clusters.reserve(c.clusters.size());
  for (const std::string& name : c.clusters) {
    ClusterState state{.name = name};
    if (auto it = c.current.find(name); it != c.current.end()) state.current_replicas = it->second;
    if (auto it = c.capacity.find(name); it != c.capacity.end())
      state.estimated_capacity = it->second;
    clusters.push_back(state);
  }
  std::vector<Explanation> explanations;
  Placement p =
      PlanPlacement(c.replicas, clusters, c.key, c.preferences, explain ? &explanations : nullptr);
  json::object plan, overflow, why;
  for (size_t i = 0; i < clusters.size(); ++i) {
    plan[c.clusters[i]] = p.replicas[i];
    if (p.overflow[i] > 0) overflow[c.clusters[i]] = p.overflow[i];
    if (explain) {
      why[c.clusters[i]] = ExplainCluster(explanations[i], c.preferences.For(c.clusters[i]),
                                          clusters[i], p.replicas[i], p.overflow[i]);
    }
  }
  json::object out;
  out["plan"] = std::move(plan);
  out["overflow"] = std::move(overflow);
  if (explain) out["explain"] = std::move(why);
  return out;
}

StatusOr<PlanCase> PlanCaseFromJson(const json::object& doc) {
  FieldErrors errors("", kPlanCaseWhat);
  PlanCase c;
  for (const auto& [key, value] : doc) ReadField(key, value, errors, c);
  for (std::string_view required : {"replicas", "clusters"}) {
    if (!doc.contains(required)) {
      errors.Add(kRequired, std::string(required), "Required value");
    }
  }
  if (!errors.empty()) return std::move(errors).ToStatus();
  return c;
}

StatusOr<PlanCase> ParsePlanCase(std::string_view line) {
  FLOTILLA_ASSIGN_OR_RETURN(json::object doc, ParseJsonObject(line));
  return PlanCaseFromJson(doc);
}

json::object ErrorResult(const Status& status) {
  json::object out;
  out["error"] = status.message();
  return out;
}

}  // namespace flotilla::planner
