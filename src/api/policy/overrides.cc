// Override policies and their overriders (overrides.h).
#include "api/policy/overrides.h"

#include <algorithm>
#include <regex>

#include "api/patch.h"
#include "base/yaml.h"

namespace flotilla::api::policy {
namespace {

// The value at JSON pointer `pointer` (RFC 6901) in `root`; null when absent.
json::value* AtPointer(json::value& root, std::string_view pointer) {
  json::value* at = &root;
  if (pointer.empty()) return at;
  if (pointer[0] != '/') return nullptr;
  size_t start = 1;
  while (at != nullptr) {
    size_t slash = pointer.find('/', start);
    std::string token(
        pointer.substr(start, slash == std::string_view::npos ? slash : slash - start));
    for (size_t i; (i = token.find("~1")) != std::string::npos;) token.replace(i, 2, "/");
    for (size_t i; (i = token.find("~0")) != std::string::npos;) token.replace(i, 2, "~");
    if (at->is_object()) {
      at = at->get_object().if_contains(token);
    } else if (at->is_array() && !token.empty() &&
               std::all_of(token.begin(), token.end(),
                           [](char c) { return c >= '0' && c <= '9'; }) &&
               token.size() < 10 && std::stoul(token) < at->get_array().size()) {
      at = &at->get_array()[std::stoul(token)];
    } else {
      return nullptr;
    }
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return at;
}

Status Patch(json::object& obj, json::array ops) {
  FLOTILLA_ASSIGN_OR_RETURN(json::value patched, JsonPatch(json::value(obj), json::value(ops)));
  if (!patched.is_object()) return Status::Invalid("the patch made the object something else");
  obj = std::move(patched.get_object());
  return Status::Ok();
}

json::object Op(std::string_view op, std::string path, const json::value* value) {
  json::object o{{"op", op}, {"path", std::move(path)}};
  if (value != nullptr && op != "remove") o["value"] = *value;
  return o;
}

// An image reference split as Karmada's image parser splits it: the
// registry is the first path component when it has a '.' or ':' or is
// "localhost".
struct Image {
  std::string registry, repository, tag, digest;

  static std::optional<Image> Parse(std::string_view ref) {
    static const std::regex kRef(
        R"(^(?:([^/@]+)/)?([a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)(?::([\w][\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$)");
    std::smatch m;
    std::string s(ref);
    if (!std::regex_match(s, m, kRef)) return std::nullopt;
    Image out;
    std::string first = m[1].str();
    out.repository = m[2].str();
    if (!first.empty()) {
      if (first.find_first_of(".:") != std::string::npos || first == "localhost") {
        out.registry = first;
      } else {
        out.repository = first + "/" + out.repository;
      }
    }
    out.tag = m[3].str();
    out.digest = m[4].str();
    return out;
  }

  std::string String() const {
    std::string name = registry.empty() ? repository : registry + "/" + repository;
    if (!tag.empty()) return name + ":" + tag;
    if (!digest.empty()) return name + "@" + digest;
    return name;
  }

  void SetTagOrDigest(const std::string& v) {
    static const std::regex kTag(R"(^[\w][\w.-]{0,127}$)");
    static const std::regex kDigest(
        R"(^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$)");
    if (std::regex_match(v, kTag)) {
      tag = v;
      digest.clear();
    } else if (std::regex_match(v, kDigest)) {
      digest = v;
      tag.clear();
    }
  }
};

StatusOr<std::string> OverrideImage(std::string_view image, const json::object& o) {
  std::optional<Image> parsed = Image::Parse(image);
  if (!parsed) return Status::Invalid("image \"" + std::string(image) + "\" does not parse");
  std::string component(GetString(o, "component").value_or(""));
  std::string op(GetString(o, "operator").value_or(""));
  std::string value(GetString(o, "value").value_or(""));
  Image& i = *parsed;
  if (component == "Registry") {
    i.registry = op == "add" ? i.registry + value : op == "replace" ? value : "";
  } else if (component == "Repository") {
    i.repository = op == "add" ? i.repository + value : op == "replace" ? value : "";
  } else if (component == "Tag") {
    if (op == "remove") {
      (i.tag.empty() ? i.digest : i.tag).clear();
    } else {
      i.SetTagOrDigest(op == "add" ? (i.tag.empty() ? i.digest : i.tag) + value : value);
    }
  } else {
    return Status::Invalid("unsupported image component \"" + component + "\"");
  }
  return i.String();
}

// The pod spec's JSON pointer in `obj`: /spec/template/spec for workloads,
// /spec for a Pod; empty when it has none.
std::string PodSpecPointer(json::value& obj) {
  if (AtPointer(obj, "/spec/template/spec") != nullptr) return "/spec/template/spec";
  if (AtPointer(obj, "/spec/containers") != nullptr) return "/spec";
  return "";
}

Status ApplyImages(const json::array& overriders, json::object& obj) {
  for (const json::value& raw : overriders) {
    if (!raw.is_object()) continue;
    const json::object& o = raw.get_object();
    json::value doc(obj);
    std::vector<std::string> paths;
    if (std::string_view path = StringViewAt(o, "predicate.path"); !path.empty()) {
      paths.emplace_back(path);
    } else if (std::string spec = PodSpecPointer(doc); !spec.empty()) {
      for (const char* list : {"containers", "initContainers"}) {
        json::value* l = AtPointer(doc, spec + "/" + list);
        if (l == nullptr || !l->is_array()) continue;
        for (size_t i = 0; i < l->get_array().size(); ++i) {
          paths.push_back(spec + "/" + list + "/" + std::to_string(i) + "/image");
        }
      }
    }
    json::array ops;
    for (const std::string& path : paths) {
      json::value* image = AtPointer(doc, path);
      if (image == nullptr || !image->is_string()) {
        return Status::Invalid("imageOverrider: no image at " + path);
      }
      FLOTILLA_ASSIGN_OR_RETURN(std::string changed, OverrideImage(image->get_string(), o));
      json::value v(changed);
      ops.push_back(Op("replace", path, &v));
    }
    FLOTILLA_RETURN_IF_ERROR(Patch(obj, std::move(ops)));
  }
  return Status::Ok();
}

Status ApplyCommandArgs(const json::array& overriders, std::string_view field, json::object& obj) {
  for (const json::value& raw : overriders) {
    if (!raw.is_object()) continue;
    const json::object& o = raw.get_object();
    json::value doc(obj);
    std::string spec = PodSpecPointer(doc);
    if (spec.empty()) continue;
    std::string_view name = GetString(o, "containerName").value_or("");
    bool add = GetString(o, "operator") == "add";
    const json::array& values = ArrayOrEmpty(o, "value");
    json::array ops;
    for (const char* list : {"containers", "initContainers"}) {
      json::value* l = AtPointer(doc, spec + "/" + list);
      if (l == nullptr || !l->is_array()) continue;
      for (size_t i = 0; i < l->get_array().size(); ++i) {
        json::value& c = l->get_array()[i];
        if (!c.is_object() || GetString(c.get_object(), "name") != name) continue;
        json::array now =
            GetArray(c.get_object(), field) ? *GetArray(c.get_object(), field) : json::array();
        if (add) {
          for (const json::value& v : values) now.push_back(v);
        } else {
          now.erase(std::remove_if(now.begin(), now.end(),
                                   [&](const json::value& v) {
                                     return std::find(values.begin(), values.end(), v) !=
                                            values.end();
                                   }),
                    now.end());
        }
        json::value v(std::move(now));
        ops.push_back(
            Op("add", spec + "/" + list + "/" + std::to_string(i) + "/" + std::string(field), &v));
      }
    }
    FLOTILLA_RETURN_IF_ERROR(Patch(obj, std::move(ops)));
  }
  return Status::Ok();
}

Status ApplyLabelsOrAnnotations(const json::array& overriders, std::string_view field,
                                json::object& obj) {
  for (const json::value& raw : overriders) {
    if (!raw.is_object()) continue;
    const json::object& o = raw.get_object();
    std::string op(GetString(o, "operator").value_or(""));
    const json::object* values = GetObject(o, "value");
    if (values == nullptr) continue;
    json::object& meta = EnsureObject(obj, "metadata");
    json::value* map = meta.if_contains(field);
    if (op == "add" && (map == nullptr || !map->is_object())) {
      meta[field] = json::object();
      map = meta.if_contains(field);
    }
    if (map == nullptr || !map->is_object()) continue;
    for (const auto& [key, value] : *values) {
      json::object& m = map->get_object();
      if (op == "add") {
        m[key] = value;
      } else if (m.contains(key)) {
        if (op == "replace") m[key] = value;
        if (op == "remove") m.erase(key);
      }
    }
  }
  return Status::Ok();
}

Status ApplyFields(const json::array& overriders, json::object& obj) {
  for (const json::value& raw : overriders) {
    if (!raw.is_object()) continue;
    const json::object& o = raw.get_object();
    std::string path(GetString(o, "fieldPath").value_or(""));
    json::value doc(obj);
    json::value* field = AtPointer(doc, path);
    if (field == nullptr || !field->is_string()) {
      return Status::Invalid("fieldOverrider: no string field at " + path);
    }
    bool yaml = !ArrayOrEmpty(o, "yaml").empty();
    StatusOr<json::value> inner =
        yaml ? ParseYaml(field->get_string()) : ParseJson(field->get_string());
    if (!inner.ok()) {
      return Status::Invalid("fieldOverrider: " + path + " does not hold " +
                             (yaml ? "YAML" : "JSON") + ": " + inner.status().message());
    }
    json::array ops;
    for (const json::value& op : ArrayOrEmpty(o, yaml ? "yaml" : "json")) {
      if (!op.is_object()) continue;
      const json::object& p = op.get_object();
      ops.push_back(Op(GetString(p, "operator").value_or(""),
                       std::string(GetString(p, "subPath").value_or("")), p.if_contains("value")));
    }
    FLOTILLA_ASSIGN_OR_RETURN(json::value patched, JsonPatch(*inner, json::value(std::move(ops))));
    // JSON is YAML too: a YAML document comes back as JSON text.
    json::value text(json::serialize(patched));
    FLOTILLA_RETURN_IF_ERROR(Patch(obj, json::array{Op("replace", path, &text)}));
  }
  return Status::Ok();
}

}  // namespace

ImplicitPriority OverridePolicy::Match(const ObjectRef& obj) const {
  if (!cluster_scoped && obj.ns != ns) return ImplicitPriority::kMismatch;
  if (selectors.empty()) return ImplicitPriority::kAll;
  ImplicitPriority best = ImplicitPriority::kMismatch;
  for (const ResourceSelector& s : selectors) best = std::max(best, s.Match(obj));
  return best;
}

StatusOr<OverridePolicy> OverridePolicy::FromObject(const json::object& obj) {
  OverridePolicy p;
  p.cluster_scoped = StringViewAt(obj, "kind") == "ClusterOverridePolicy";
  p.ns = p.cluster_scoped ? "" : StringAt(obj, "metadata.namespace");
  p.name = StringAt(obj, "metadata.name");
  const json::object* spec = GetObject(obj, "spec");
  if (spec == nullptr) return p;
  FLOTILLA_ASSIGN_OR_RETURN(p.selectors, ReadResourceSelectors(*spec));
  auto rule = [](const json::object& r) -> StatusOr<OverrideRule> {
    OverrideRule out;
    if (const json::value* t = r.if_contains("targetCluster"); t != nullptr && !t->is_null()) {
      FLOTILLA_ASSIGN_OR_RETURN(out.target, ClusterAffinity::FromJson(*t, "targetCluster"));
    }
    if (const json::object* o = GetObject(r, "overriders")) out.overriders = *o;
    return out;
  };
  const json::array& rules = ArrayOrEmpty(*spec, "overrideRules");
  if (rules.empty()) {
    // The deprecated pair, as one rule.
    FLOTILLA_ASSIGN_OR_RETURN(OverrideRule r, rule(*spec));
    if (!r.overriders.empty()) p.rules.push_back(std::move(r));
  }
  for (const json::value& r : rules) {
    if (!r.is_object()) continue;
    FLOTILLA_ASSIGN_OR_RETURN(OverrideRule parsed, rule(r.get_object()));
    p.rules.push_back(std::move(parsed));
  }
  return p;
}

std::vector<AppliedOverriders> OverridersFor(std::span<const OverridePolicy* const> policies,
                                             const ObjectRef& obj, const ClusterFacts& cluster) {
  std::vector<AppliedOverriders> out;
  for (bool cluster_scoped : {true, false}) {
    std::vector<std::pair<ImplicitPriority, const OverridePolicy*>> matching;
    for (const OverridePolicy* p : policies) {
      if (p->cluster_scoped != cluster_scoped) continue;
      if (ImplicitPriority m = p->Match(obj); m != ImplicitPriority::kMismatch) {
        matching.emplace_back(m, p);
      }
    }
    std::sort(matching.begin(), matching.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second->name < b.second->name;
    });
    for (const auto& [match, p] : matching) {
      for (const OverrideRule& r : p->rules) {
        if (!r.target || r.target->Matches(cluster)) out.push_back({p, &r.overriders});
      }
    }
  }
  return out;
}

Status ApplyOverriders(const json::object& o, json::object& obj) {
  FLOTILLA_RETURN_IF_ERROR(ApplyImages(ArrayOrEmpty(o, "imageOverrider"), obj));
  FLOTILLA_RETURN_IF_ERROR(ApplyCommandArgs(ArrayOrEmpty(o, "commandOverrider"), "command", obj));
  FLOTILLA_RETURN_IF_ERROR(ApplyCommandArgs(ArrayOrEmpty(o, "argsOverrider"), "args", obj));
  FLOTILLA_RETURN_IF_ERROR(
      ApplyLabelsOrAnnotations(ArrayOrEmpty(o, "labelsOverrider"), "labels", obj));
  FLOTILLA_RETURN_IF_ERROR(
      ApplyLabelsOrAnnotations(ArrayOrEmpty(o, "annotationsOverrider"), "annotations", obj));
  FLOTILLA_RETURN_IF_ERROR(ApplyFields(ArrayOrEmpty(o, "fieldOverrider"), obj));
  json::array ops;
  for (const json::value& raw : ArrayOrEmpty(o, "plaintext")) {
    if (!raw.is_object()) continue;
    const json::object& p = raw.get_object();
    ops.push_back(Op(GetString(p, "operator").value_or(""),
                     std::string(GetString(p, "path").value_or("")), p.if_contains("value")));
  }
  if (!ops.empty()) {
    Status s = Patch(obj, std::move(ops));
    if (!s.ok()) return Status::Invalid("plaintext: " + s.message());
  }
  return Status::Ok();
}

Status ApplyAll(const std::vector<AppliedOverriders>& list, json::object& obj,
                const OverridePolicy** failed) {
  json::array applied, applied_cluster;
  for (const AppliedOverriders& a : list) {
    Status s = ApplyOverriders(*a.overriders, obj);
    if (!s.ok()) {
      if (failed != nullptr) *failed = a.policy;
      return Status::Invalid(
          (a.policy->cluster_scoped ? "ClusterOverridePolicy " : "OverridePolicy ") +
          (a.policy->cluster_scoped ? a.policy->name : a.policy->ns + "/" + a.policy->name) + ": " +
          s.message());
    }
    (a.policy->cluster_scoped ? applied_cluster : applied)
        .push_back(json::object{{"policyName", a.policy->name}, {"overriders", *a.overriders}});
  }
  if (applied.empty() && applied_cluster.empty()) return Status::Ok();
  json::object& annotations = EnsureObject(EnsureObject(obj, "metadata"), "annotations");
  if (!applied.empty()) annotations[kAppliedOverridesAnnotation] = json::serialize(applied);
  if (!applied_cluster.empty()) {
    annotations[kAppliedClusterOverridesAnnotation] = json::serialize(applied_cluster);
  }
  return Status::Ok();
}

}  // namespace flotilla::api::policy
