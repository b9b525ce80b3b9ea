// Shadow federated ReplicaSets (shadows.h).
#include "federation/deployment/shadows.h"

#include <algorithm>

#include "api/annotations.h"
#include "api/deployment/deployment_util.h"
#include "api/federated.h"
#include "api/owner.h"
#include "api/views.h"
#include "federation/common/deletion.h"

namespace flotilla::federation::deployment {
namespace {

namespace apps = api::deployment;

// A copy of the object `o` holds (null: none), {} when there is none.
json::object CopyOf(const json::object* o) { return o != nullptr ? *o : json::object(); }

// Equal, an absent object counting as empty.
bool Same(const json::object* a, const json::object* b) {
  static const json::object kEmpty;
  return (a != nullptr ? *a : kEmpty) == (b != nullptr ? *b : kEmpty);
}

json::array ControllerRefTo(const json::object& d) {
  return json::array{api::NewControllerRef(d, "apps/v1", "Deployment")};
}

// The pod-template-hash of a shadow: its label, else its name's suffix.
std::string HashOf(const json::object& d, const json::object& shadow) {
  api::ObjectView s(shadow);
  if (std::string_view label = s.label(apps::kHashLabel); !label.empty()) {
    return std::string(label);
  }
  std::string prefix = std::string(api::ObjectView(d).name()) + "-";
  return s.name().starts_with(prefix) ? std::string(s.name().substr(prefix.size())) : "";
}

// Labels of a shadow with hash `hash`: the template's, the hash and
// shadow-of.
json::object ShadowLabels(const json::object& d, const json::object& tmpl_labels,
                          const std::string& hash) {
  json::object labels = tmpl_labels;
  labels[apps::kHashLabel] = hash;
  labels[api::kShadowOfLabel] = api::ObjectView(d).name();
  return labels;
}

void MarkShadow(json::object& shadow) {
  EnsureObject(EnsureObject(shadow, "metadata"), "annotations")[api::kShadowReplicaSetAnnotation] =
      "true";
}

int64_t RevisionOf(const runtime::ObjectPtr& rs) { return apps::Revision(*rs); }

}  // namespace

void ShadowCounts::Add(const json::object& rs) {
  api::WorkloadView v(rs);
  spec_replicas += v.replicas();
  replicas += v.status_replicas();
  fully_labeled += v.fully_labeled_replicas();
  ready += v.ready_replicas();
  available += v.available_replicas();
}

std::vector<runtime::ObjectPtr> ShadowsOf(const json::object& d,
                                          std::span<const runtime::ObjectPtr> replicasets) {
  api::ObjectView deployment(d);
  std::vector<runtime::ObjectPtr> out;
  for (const runtime::ObjectPtr& rs : replicasets) {
    api::ObjectView shadow(*rs);
    if (shadow.ns() != deployment.ns()) continue;
    const json::object* owner = api::ControllerRef(*rs);
    if (owner != nullptr) {
      // Whatever was edited, a ReplicaSet the Deployment controls is its
      // shadow.
      if (GetString(*owner, "uid") == deployment.uid() &&
          GetString(*owner, "kind") == "Deployment") {
        out.push_back(rs);
      }
      continue;
    }
    if (shadow.label(api::kShadowOfLabel) == deployment.name() &&
        shadow.annotation(api::kShadowReplicaSetAnnotation) == "true") {
      out.push_back(rs);
    }
  }
  return out;
}

runtime::ObjectPtr CurrentShadow(const json::object& d,
                                 std::span<const runtime::ObjectPtr> shadows) {
  const json::object* tmpl = api::WorkloadView(d).pod_template();
  if (tmpl == nullptr) return nullptr;
  std::vector<runtime::ObjectPtr> matching;
  for (const runtime::ObjectPtr& rs : shadows) {
    const json::object* have = api::WorkloadView(*rs).pod_template();
    if (have != nullptr && apps::EqualIgnoreHash(*have, *tmpl)) matching.push_back(rs);
  }
  if (matching.empty()) return nullptr;
  // Kubernetes takes the oldest when several run the template.
  return *std::min_element(matching.begin(), matching.end(),
                           [](const runtime::ObjectPtr& a, const runtime::ObjectPtr& b) {
                             api::ObjectView va(*a), vb(*b);
                             return std::pair(va.creation_timestamp(), va.name()) <
                                    std::pair(vb.creation_timestamp(), vb.name());
                           });
}

std::string NewShadowName(const json::object& d) {
  const json::value* collisions = Find(d, "status.collisionCount");
  std::optional<int64_t> count;
  if (collisions != nullptr && collisions->is_int64()) count = collisions->as_int64();
  api::WorkloadView v(d);
  return std::string(v.name()) + "-" + apps::ComputeHash(CopyOf(v.pod_template()), count);
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
  api::WorkloadView deployment(d);
  json::object& meta = EnsureObject(shadow, "metadata");
  std::string name =
      existing != nullptr ? std::string(api::ObjectView(*existing).name()) : NewShadowName(d);
  std::string hash =
      existing != nullptr ? HashOf(d, *existing) : name.substr(deployment.name().size() + 1);
  meta["name"] = name;
  meta["namespace"] = deployment.ns();
  json::object tmpl = CopyOf(deployment.pod_template());
  json::object tmpl_labels = CopyOf(api::ObjectView(tmpl).labels());
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
  json::object selector = CopyOf(deployment.selector());
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
  const json::object* tmpl = api::WorkloadView(existing).pod_template();
  meta["labels"] = ShadowLabels(d, CopyOf(tmpl ? api::ObjectView(*tmpl).labels() : nullptr),
                                HashOf(d, existing));
  meta["ownerReferences"] = ControllerRefTo(d);
  MarkShadow(shadow);
  EnsureObject(shadow, "spec")["replicas"] = counts.spec_replicas;
  return shadow;
}

bool ShadowNeedsUpdate(const json::object& existing, const json::object& desired) {
  api::ObjectView have(existing), want(desired);
  const json::array* have_owners = have.owner_references();
  const json::array* want_owners = want.owner_references();
  return !Same(have.labels(), want.labels()) || !Same(have.annotations(), want.annotations()) ||
         !Same(GetObject(existing, "spec"), GetObject(desired, "spec")) ||
         (have_owners == nullptr) != (want_owners == nullptr) ||
         (have_owners != nullptr && *have_owners != *want_owners);
}

json::object ShadowStatus(const json::object& shadow, const ShadowCounts& counts) {
  json::object status = CopyOf(GetObject(shadow, "status"));
  status["replicas"] = counts.replicas;
  status["fullyLabeledReplicas"] = counts.fully_labeled;
  status["readyReplicas"] = counts.ready;
  status["availableReplicas"] = counts.available;
  status["observedGeneration"] = api::ObjectView(shadow).generation();
  return status;
}

std::vector<runtime::ObjectPtr> ShadowsBeyondHistory(const json::object& d,
                                                     std::span<const runtime::ObjectPtr> old) {
  int64_t limit = IntAt(d, "spec.revisionHistoryLimit", 10);
  std::vector<runtime::ObjectPtr> alive;
  for (const runtime::ObjectPtr& rs : old) {
    if (!api::IsBeingDeleted(*rs)) alive.push_back(rs);
  }
  int64_t excess = static_cast<int64_t>(alive.size()) - limit;
  if (excess <= 0) return {};
  std::sort(alive.begin(), alive.end(),
            [](const runtime::ObjectPtr& a, const runtime::ObjectPtr& b) {
              return RevisionOf(a) < RevisionOf(b);
            });
  std::vector<runtime::ObjectPtr> out;
  for (int64_t i = 0; i < excess; ++i) {
    api::WorkloadView v(*alive[i]);
    if (v.replicas() != 0 || v.status_replicas() != 0) continue;

    out.push_back(alive[i]);
  }
  return out;
}

}  // namespace flotilla::federation::deployment
