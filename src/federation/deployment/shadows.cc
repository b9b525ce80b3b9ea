// Shadow federated ReplicaSets (shadows.h).
#include "federation/deployment/shadows.h"

#include <algorithm>

#include "api/annotations.h"
#include "api/deployment/deployment_util.h"
#include "api/federated.h"
#include "api/owner.h"
#include "federation/common/deletion.h"

namespace flotilla::federation::deployment {
namespace {

namespace apps = api::deployment;

json::object ObjectAt(const json::object& obj, std::string_view path) {
  const json::value* v = Find(obj, path);
  return v != nullptr && v->is_object() ? v->get_object() : json::object();
}

json::array ControllerRefTo(const json::object& d) {
  return json::array{json::object{{"apiVersion", "apps/v1"},
                                  {"kind", "Deployment"},
                                  {"name", StringAt(d, "metadata.name")},
                                  {"uid", StringAt(d, "metadata.uid")},
                                  {"controller", true},
                                  {"blockOwnerDeletion", true}}};
}

// The pod-template-hash of a shadow: its label, else its name's suffix.
std::string HashOf(const json::object& d, const json::object& shadow) {
  std::string label = StringAt(shadow, "metadata.labels.pod-template-hash");
  if (!label.empty()) return label;
  std::string name = StringAt(shadow, "metadata.name");
  std::string prefix = StringAt(d, "metadata.name") + "-";
  return name.starts_with(prefix) ? name.substr(prefix.size()) : "";
}

// Labels of a shadow with hash `hash`: the template's, the hash and
// shadow-of.
json::object ShadowLabels(const json::object& d, const json::object& tmpl_labels,
                          const std::string& hash) {
  json::object labels = tmpl_labels;
  labels[apps::kHashLabel] = hash;
  labels[api::kShadowOfLabel] = StringAt(d, "metadata.name");
  return labels;
}

void MarkShadow(json::object& shadow) {
  EnsureObject(EnsureObject(shadow, "metadata"), "annotations")[api::kShadowReplicaSetAnnotation] =
      "true";
}

int64_t RevisionOf(const runtime::ObjectPtr& rs) { return apps::Revision(*rs); }

}  // namespace

void ShadowCounts::Add(const json::object& rs) {
  spec_replicas += IntAt(rs, "spec.replicas");
  replicas += IntAt(rs, "status.replicas");
  fully_labeled += IntAt(rs, "status.fullyLabeledReplicas");
  ready += IntAt(rs, "status.readyReplicas");
  available += IntAt(rs, "status.availableReplicas");
}

std::vector<runtime::ObjectPtr> ShadowsOf(const json::object& d,
                                          std::span<const runtime::ObjectPtr> replicasets) {
  std::string name = StringAt(d, "metadata.name");
  std::string uid = StringAt(d, "metadata.uid");
  std::vector<runtime::ObjectPtr> out;
  for (const runtime::ObjectPtr& rs : replicasets) {
    if (StringAt(*rs, "metadata.namespace") != StringAt(d, "metadata.namespace")) continue;
    const json::object* owner = api::ControllerRef(*rs);
    if (owner != nullptr) {
      // Whatever was edited, a ReplicaSet the Deployment controls is its
      // shadow.
      if (GetString(*owner, "uid") == uid && GetString(*owner, "kind") == "Deployment") {
        out.push_back(rs);
      }
      continue;
    }
    const json::value* labels = Find(*rs, "metadata.labels");
    if (labels == nullptr || !labels->is_object() ||
        GetString(labels->get_object(), api::kShadowOfLabel) != name) {
      continue;
    }
    if (api::AnnotationAt(*rs, api::kShadowReplicaSetAnnotation) == "true") out.push_back(rs);
  }
  return out;
}

runtime::ObjectPtr CurrentShadow(const json::object& d,
                                 std::span<const runtime::ObjectPtr> shadows) {
  const json::value* tmpl = Find(d, "spec.template");
  if (tmpl == nullptr || !tmpl->is_object()) return nullptr;
  std::vector<runtime::ObjectPtr> matching;
  for (const runtime::ObjectPtr& rs : shadows) {
    const json::value* have = Find(*rs, "spec.template");
    if (have != nullptr && have->is_object() &&
        apps::EqualIgnoreHash(have->get_object(), tmpl->get_object())) {
      matching.push_back(rs);
    }
  }
  if (matching.empty()) return nullptr;
  // Kubernetes takes the oldest when several run the template.
  return *std::min_element(matching.begin(), matching.end(),
                           [](const runtime::ObjectPtr& a, const runtime::ObjectPtr& b) {
                             std::string ta = StringAt(*a, "metadata.creationTimestamp");
                             std::string tb = StringAt(*b, "metadata.creationTimestamp");
                             if (ta != tb) return ta < tb;
                             return StringAt(*a, "metadata.name") < StringAt(*b, "metadata.name");
                           });
}

std::string NewShadowName(const json::object& d) {
  const json::value* collisions = Find(d, "status.collisionCount");
  std::optional<int64_t> count;
  if (collisions != nullptr && collisions->is_int64()) count = collisions->as_int64();
  return StringAt(d, "metadata.name") + "-" +
         apps::ComputeHash(ObjectAt(d, "spec.template"), count);
}

int64_t MaxRevision(std::span<const runtime::ObjectPtr> shadows) {
  int64_t max = 0;
  for (const runtime::ObjectPtr& rs : shadows) max = std::max(max, RevisionOf(rs));
  return max;
}

std::string CurrentRevision(const json::object& d, std::span<const runtime::ObjectPtr> shadows) {
  runtime::ObjectPtr current = CurrentShadow(d, shadows);
  int64_t old = 0;
  for (const runtime::ObjectPtr& rs : shadows) {
    if (rs != current) old = std::max(old, RevisionOf(rs));
  }
  int64_t mine = current ? RevisionOf(current) : 0;
  return std::to_string(mine > old ? mine : old + 1);
}

json::object DesiredCurrentShadow(const json::object& d, const json::object* existing,
                                  const std::string& revision, const ShadowCounts& counts) {
  json::object shadow = existing != nullptr ? *existing : json::object();
  shadow["apiVersion"] = "apps/v1";
  shadow["kind"] = "ReplicaSet";
  json::object& meta = EnsureObject(shadow, "metadata");
  std::string name = existing != nullptr ? StringAt(*existing, "metadata.name") : NewShadowName(d);
  std::string prefix = StringAt(d, "metadata.name") + "-";
  std::string hash = existing != nullptr ? HashOf(d, *existing) : name.substr(prefix.size());
  meta["name"] = name;
  meta["namespace"] = StringAt(d, "metadata.namespace");
  json::object tmpl = ObjectAt(d, "spec.template");
  json::object tmpl_labels = ObjectAt(tmpl, "metadata.labels");
  meta["labels"] = ShadowLabels(d, tmpl_labels, hash);
  meta["ownerReferences"] = ControllerRefTo(d);
  apps::SetNewReplicaSetAnnotations(d, shadow, revision, existing != nullptr);
  apps::SetReplicasAnnotations(shadow, apps::Replicas(d), apps::Replicas(d) + apps::MaxSurge(d));
  MarkShadow(shadow);

  json::object spec;
  spec["replicas"] = counts.spec_replicas;
  if (const json::value* mrs = Find(d, "spec.minReadySeconds"); mrs != nullptr) {
    spec["minReadySeconds"] = *mrs;
  }
  json::object selector = ObjectAt(d, "spec.selector");
  EnsureObject(selector, "matchLabels")[apps::kHashLabel] = hash;
  spec["selector"] = std::move(selector);
  tmpl_labels[apps::kHashLabel] = hash;
  EnsureObject(tmpl, "metadata")["labels"] = std::move(tmpl_labels);
  spec["template"] = std::move(tmpl);
  shadow["spec"] = std::move(spec);
  return shadow;
}

json::object DesiredOldShadow(const json::object& d, const json::object& existing,
                              const ShadowCounts& counts) {
  json::object shadow = existing;
  shadow["apiVersion"] = "apps/v1";
  shadow["kind"] = "ReplicaSet";
  json::object& meta = EnsureObject(shadow, "metadata");
  meta["labels"] =
      ShadowLabels(d, ObjectAt(existing, "spec.template.metadata.labels"), HashOf(d, existing));
  meta["ownerReferences"] = ControllerRefTo(d);
  MarkShadow(shadow);
  EnsureObject(shadow, "spec")["replicas"] = counts.spec_replicas;
  return shadow;
}

bool ShadowNeedsUpdate(const json::object& existing, const json::object& desired) {
  for (const char* path : {"metadata.labels", "metadata.annotations", "spec"}) {
    if (ObjectAt(existing, path) != ObjectAt(desired, path)) return true;
  }
  const json::value* have = Find(existing, "metadata.ownerReferences");
  const json::value* want = Find(desired, "metadata.ownerReferences");
  return (have == nullptr) != (want == nullptr) || (have != nullptr && *have != *want);
}

json::object ShadowStatus(const json::object& shadow, const ShadowCounts& counts) {
  json::object status = ObjectAt(shadow, "status");
  status["replicas"] = counts.replicas;
  status["fullyLabeledReplicas"] = counts.fully_labeled;
  status["readyReplicas"] = counts.ready;
  status["availableReplicas"] = counts.available;
  status["observedGeneration"] = IntAt(shadow, "metadata.generation");
  return status;
}

std::vector<runtime::ObjectPtr> ShadowsBeyondHistory(const json::object& d,
                                                     std::span<const runtime::ObjectPtr> old) {
  int64_t limit = IntAt(d, "spec.revisionHistoryLimit", 10);
  std::vector<runtime::ObjectPtr> alive;
  for (const runtime::ObjectPtr& rs : old) {
    if (!IsBeingDeleted(*rs)) alive.push_back(rs);
  }
  int64_t excess = static_cast<int64_t>(alive.size()) - limit;
  if (excess <= 0) return {};
  std::sort(alive.begin(), alive.end(),
            [](const runtime::ObjectPtr& a, const runtime::ObjectPtr& b) {
              return RevisionOf(a) < RevisionOf(b);
            });
  std::vector<runtime::ObjectPtr> out;
  for (int64_t i = 0; i < excess; ++i) {
    const json::object& rs = *alive[i];
    if (IntAt(rs, "spec.replicas") != 0 || IntAt(rs, "status.replicas") != 0) continue;
    out.push_back(alive[i]);
  }
  return out;
}

}  // namespace flotilla::federation::deployment
