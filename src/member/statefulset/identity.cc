#include "member/statefulset/identity.h"

#include <charconv>

#include "api/owner.h"
#include "member/object_util.h"

namespace flotilla::member::statefulset {
namespace {

json::object ObjectOrEmpty(const json::object& o, std::string_view path) {
  const json::value* v = Find(o, path);
  return v != nullptr && v->is_object() ? v->get_object() : json::object();
}

std::vector<const json::object*> ClaimTemplates(const json::object& set) {
  std::vector<const json::object*> out;
  const json::value* a = Find(set, "spec.volumeClaimTemplates");
  if (a == nullptr || !a->is_array()) return out;
  for (const json::value& t : a->get_array()) {
    if (t.is_object() && !StringAt(t.get_object(), "metadata.name").empty()) {
      out.push_back(&t.get_object());
    }
  }
  return out;
}

// updateStorage: one persistentVolumeClaim volume per claim template,
// replacing a template volume of the same name.
void AttachClaims(const json::object& set, int ordinal, json::object& pod_spec) {
  std::vector<const json::object*> templates = ClaimTemplates(set);
  if (templates.empty()) return;
  std::string set_name = StringAt(set, "metadata.name");
  json::array volumes;
  for (const json::object* t : templates) {
    std::string name = StringAt(*t, "metadata.name");
    volumes.push_back(
        json::object{{"name", name},
                     {"persistentVolumeClaim",
                      json::object{{"claimName", ClaimName(name, set_name, ordinal)}}}});
  }
  if (const json::array* old = GetArray(pod_spec, "volumes")) {
    for (const json::value& v : *old) {
      if (!v.is_object()) continue;
      std::string name = StringAt(v.get_object(), "name");
      bool replaced = false;
      for (const json::object* t : templates) replaced |= StringAt(*t, "metadata.name") == name;
      if (!replaced) volumes.push_back(v);
    }
  }
  pod_spec["volumes"] = std::move(volumes);
}

}  // namespace

std::optional<int> OrdinalOf(std::string_view set_name, std::string_view pod_name) {
  if (pod_name.size() <= set_name.size() + 1 || !pod_name.starts_with(set_name) ||
      pod_name[set_name.size()] != '-') {
    return std::nullopt;
  }
  std::string_view digits = pod_name.substr(set_name.size() + 1);
  if (digits.size() > 1 && digits[0] == '0') return std::nullopt;
  int n = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size() || n < 0) return std::nullopt;
  return n;
}

std::string PodName(std::string_view set_name, int ordinal) {
  return std::string(set_name) + "-" + std::to_string(ordinal);
}

std::string ClaimName(std::string_view claim_template, std::string_view set_name, int ordinal) {
  return std::string(claim_template) + "-" + PodName(set_name, ordinal);
}

json::object NewPod(const json::object& set, int ordinal, const std::string& revision) {
  std::string set_name = StringAt(set, "metadata.name");
  std::string name = PodName(set_name, ordinal);
  json::object tmpl = ObjectOrEmpty(set, "spec.template");
  json::object meta = ObjectOrEmpty(tmpl, "metadata");
  json::object labels = ObjectOrEmpty(meta, "labels");
  labels[kPodNameLabel] = name;
  labels[kPodIndexLabel] = std::to_string(ordinal);
  labels[kRevisionLabel] = revision;
  json::object pod_meta{{"name", name},
                        {"namespace", StringAt(set, "metadata.namespace")},
                        {"labels", std::move(labels)},
                        {"ownerReferences", json::array{ControllerRef(set)}}};
  if (const json::object* a = GetObject(meta, "annotations")) pod_meta["annotations"] = *a;
  json::object spec = ObjectOrEmpty(tmpl, "spec");
  spec["hostname"] = name;
  std::string service = StringAt(set, "spec.serviceName");
  if (!service.empty()) spec["subdomain"] = service;
  AttachClaims(set, ordinal, spec);
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Pod"},
                      {"metadata", std::move(pod_meta)},
                      {"spec", std::move(spec)}};
}

std::vector<json::object> NewClaims(const json::object& set, int ordinal) {
  std::string set_name = StringAt(set, "metadata.name");
  json::object match_labels = ObjectOrEmpty(set, "spec.selector.matchLabels");
  bool owned = StringAt(set, "spec.persistentVolumeClaimRetentionPolicy.whenDeleted") == "Delete";
  std::vector<json::object> out;
  for (const json::object* t : ClaimTemplates(set)) {
    json::object meta = ObjectOrEmpty(*t, "metadata");
    json::object labels = ObjectOrEmpty(meta, "labels");
    for (const auto& [k, v] : match_labels) labels[k] = v;
    json::object claim_meta{{"name", ClaimName(StringAt(meta, "name"), set_name, ordinal)},
                            {"namespace", StringAt(set, "metadata.namespace")},
                            {"labels", std::move(labels)}};
    if (const json::object* a = GetObject(meta, "annotations")) claim_meta["annotations"] = *a;
    if (owned) claim_meta["ownerReferences"] = json::array{ControllerRef(set)};
    out.push_back(json::object{{"apiVersion", "v1"},
                               {"kind", "PersistentVolumeClaim"},
                               {"metadata", std::move(claim_meta)},
                               {"spec", ObjectOrEmpty(*t, "spec")}});
  }
  return out;
}

json::object ControllerRef(const json::object& set) {
  return api::NewControllerRef(set, "apps/v1", "StatefulSet");
}

bool HasController(const json::object& obj) {
  const json::value* refs = Find(obj, "metadata.ownerReferences");
  if (refs == nullptr || !refs->is_array()) return false;
  for (const json::value& r : refs->get_array()) {
    if (r.is_object() && GetBool(r.get_object(), "controller").value_or(false)) return true;
  }
  return false;
}

std::string OwnerSetKey(const json::object& pod) {
  const json::value* refs = Find(pod, "metadata.ownerReferences");
  if (refs == nullptr || !refs->is_array()) return "";
  for (const json::value& r : refs->get_array()) {
    if (!r.is_object()) continue;
    const json::object& ref = r.get_object();
    if (GetBool(ref, "controller").value_or(false) && StringAt(ref, "kind") == "StatefulSet" &&
        StringAt(ref, "apiVersion").starts_with("apps/")) {
      return StringAt(pod, "metadata.namespace") + "/" + StringAt(ref, "name");
    }
  }
  return "";
}

std::string RevisionOf(const json::object& pod) {
  const json::value* labels = Find(pod, "metadata.labels");
  if (labels == nullptr || !labels->is_object()) return "";
  const json::value* v = labels->get_object().if_contains(kRevisionLabel);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : "";
}

}  // namespace flotilla::member::statefulset
