// The StatefulSet controller's writes that need no pass: adopting orphans,
// finding the set of a pod, claims, status and events.
#include <algorithm>

#include "api/hash.h"
#include "api/statefulset/revisions.h"
#include "member/object_util.h"
#include "member/statefulset/identity.h"
#include "member/statefulset/pod_state.h"
#include "member/statefulset/statefulset_controller.h"

namespace flotilla::member {
namespace {}  // namespace

void StatefulSetController::EnqueueFor(const json::object& pod, runtime::WorkQueue& queue) const {
  if (std::string key = statefulset::OwnerSetKey(pod); !key.empty()) {
    queue.Add(key);
    return;
  }
  if (statefulset::HasController(pod)) return;
  std::string name = StringAt(pod, "metadata.name");
  for (const runtime::ObjectPtr& set : sets_.lister().List(StringAt(pod, "metadata.namespace"))) {
    if (!statefulset::OrdinalOf(StringAt(*set, "metadata.name"), name)) continue;
    StatusOr<api::LabelSelector> selector =
        api::LabelSelector::FromJson(Find(*set, "spec.selector"), "spec.selector");
    if (selector.ok() && !selector->Empty() && selector->MatchesObject(pod)) {
      queue.Add(runtime::ObjectKey(*set));
    }
  }
}

StatusOr<bool> StatefulSetController::AdoptOrphans(const json::object& set,
                                                   const api::LabelSelector& selector) {
  std::string ns = StringAt(set, "metadata.namespace");
  std::string set_name = StringAt(set, "metadata.name");
  bool adopted = false;
  for (const runtime::ObjectPtr& pod : pods_.lister().List(ns, selector)) {
    std::string name = StringAt(*pod, "metadata.name");
    if (!statefulset::OrdinalOf(set_name, name) || statefulset::HasController(*pod) ||
        statefulset::IsTerminating(*pod)) {
      continue;
    }
    json::array refs;
    if (const json::value* old = Find(*pod, "metadata.ownerReferences"); old && old->is_array()) {
      refs = old->get_array();
    }
    refs.push_back(statefulset::ControllerRef(set));
    json::object patch{{"metadata", json::object{{"ownerReferences", std::move(refs)},
                                                 {"uid", StringAt(*pod, "metadata.uid")}}}};
    StatusOr<json::object> patched =
        client_.Patch(kPods, ns, name, client::PatchType::kMerge, ToJson(patch));
    if (!patched.ok() && !patched.status().Is(Reason::kNotFound) &&
        !patched.status().Is(Reason::kConflict)) {
      return patched.status();
    }
    adopted = adopted || patched.ok();
  }
  return adopted;
}

Status StatefulSetController::CreateClaims(const json::object& set, int ordinal,
                                           const std::string& pod_name) {
  std::string ns = StringAt(set, "metadata.namespace");
  std::string set_name = StringAt(set, "metadata.name");
  for (const json::object& claim : statefulset::NewClaims(set, ordinal)) {
    std::string name = StringAt(claim, "metadata.name");
    if (claims_.lister().Get(ns, name) != nullptr) continue;
    StatusOr<json::object> made = client_.Create(kPersistentVolumeClaims, "", claim);
    if (made.status().Is(Reason::kAlreadyExists)) continue;
    if (!made.ok()) {
      Record(set, "Warning", "FailedCreate",
             "create Claim " + name + " for Pod " + pod_name + " in StatefulSet " + set_name +
                 " failed error: " + made.status().message());
      return made.status();
    }
    Record(
        set, "Normal", "SuccessfulCreate",
        "create Claim " + name + " Pod " + pod_name + " in StatefulSet " + set_name + " success");
  }
  return Status();
}

Status StatefulSetController::DeleteClaims(const json::object& set, int ordinal) {
  for (const json::object& claim : statefulset::NewClaims(set, ordinal)) {
    Status s = client_.Delete(kPersistentVolumeClaims, StringAt(claim, "metadata.namespace"),
                              StringAt(claim, "metadata.name"));
    if (!s.ok() && !s.Is(Reason::kNotFound)) return s;
  }
  return Status();
}

Status StatefulSetController::WriteStatus(const json::object& set, const json::object& status) {
  json::object wanted = status;
  // Counts are omitempty in apps/v1 except replicas and availableReplicas.
  for (std::string_view field : {"readyReplicas", "currentReplicas", "updatedReplicas"}) {
    if (IntAt(wanted, field, 0) == 0) wanted.erase(field);
  }
  wanted["replicas"] = IntAt(wanted, "replicas", 0);
  wanted["availableReplicas"] = IntAt(wanted, "availableReplicas", 0);
  const json::value* old = set.if_contains("status");
  json::object old_status = old != nullptr && old->is_object() ? old->get_object() : json::object();
  if (api::CanonicalJson(old_status) == api::CanonicalJson(wanted)) {
    return Status();
  }
  json::object updated = set;
  updated["status"] = std::move(wanted);
  StatusOr<json::object> written = client_.UpdateStatus(kStatefulSets, "", updated);
  if (written.status().Is(Reason::kNotFound)) return Status();
  return written.status();
}

void StatefulSetController::Record(const json::object& set, std::string_view type,
                                   std::string_view reason, const std::string& message) {
  json::object about = set;
  about["apiVersion"] = "apps/v1";
  about["kind"] = "StatefulSet";
  events_.Event(about, type, reason, message);
}

}  // namespace flotilla::member
