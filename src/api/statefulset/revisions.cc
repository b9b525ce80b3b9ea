#include "api/statefulset/revisions.h"

#include <algorithm>
#include <vector>

#include "api/hash.h"
#include "api/owner.h"

namespace flotilla::api::statefulset {
namespace {

uint32_t Fnv1(std::string_view bytes, uint32_t h) {
  for (unsigned char c : bytes) {
    h *= 16777619u;
    h ^= c;
  }
  return h;
}

}  // namespace

json::object RevisionData(const json::object& set) {
  json::object tmpl;
  if (const json::value* t = Find(set, "spec.template"); t != nullptr && t->is_object()) {
    tmpl = t->get_object();
  }
  tmpl["$patch"] = "replace";
  return json::object{{"spec", json::object{{"template", std::move(tmpl)}}}};
}

std::string RevisionHash(const json::object& data, int64_t collision_count) {
  uint32_t h = Fnv1(CanonicalJson(data), 2166136261u);
  if (collision_count > 0) h = Fnv1(std::to_string(collision_count), h);
  return SafeEncodeString(std::to_string(h));
}

json::object NewRevision(const json::object& set, int64_t revision, int64_t collision_count,
                         std::string_view kind) {
  json::object data = RevisionData(set);
  std::string hash = RevisionHash(data, collision_count);
  std::string name = StringAt(set, "metadata.name");
  json::object labels;
  if (const json::value* l = Find(set, "spec.template.metadata.labels"); l && l->is_object()) {
    labels = l->get_object();
  }
  labels["controller.kubernetes.io/hash"] = hash;
  json::object meta{{"name", name.substr(0, 223) + "-" + hash},
                    {"namespace", StringAt(set, "metadata.namespace")},
                    {"labels", std::move(labels)},
                    {"ownerReferences", json::array{NewControllerRef(set, "apps/v1", kind)}}};

  return json::object{{"apiVersion", "apps/v1"},
                      {"kind", "ControllerRevision"},
                      {"metadata", std::move(meta)},
                      {"data", std::move(data)},
                      {"revision", revision}};
}

bool EqualRevision(const json::object& a, const json::object& b) {
  const json::value* da = a.if_contains("data");
  const json::value* db = b.if_contains("data");
  if (da == nullptr || db == nullptr) return da == db;
  return CanonicalJson(*da) == CanonicalJson(*db);
}

json::object ApplyRevision(const json::object& set, const json::object& revision) {
  json::object out = set;
  const json::value* t = Find(revision, "data.spec.template");
  if (t == nullptr || !t->is_object()) return out;
  json::object tmpl = t->get_object();
  tmpl.erase("$patch");
  EnsureObject(out, "spec")["template"] = std::move(tmpl);
  return out;
}

}  // namespace flotilla::api::statefulset
