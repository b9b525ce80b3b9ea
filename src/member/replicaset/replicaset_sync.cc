// The ReplicaSet controller's actions: creating and deleting pods to match
// spec.replicas, and its status.
#include <algorithm>

#include "api/owner.h"
#include "member/object_util.h"
#include "member/replicaset/controller_ref.h"
#include "member/replicaset/pod_util.h"
#include "member/replicaset/replicaset_controller.h"

namespace flotilla::member {
namespace {

constexpr std::string_view kApiVersion = "apps/v1";
constexpr std::string_view kKind = "ReplicaSet";

// controller.GetPodFromTemplate: the template's labels, annotations,
// finalizers and spec, named after the ReplicaSet, owned by it.
json::object PodFromTemplate(const json::object& rs) {
  json::object meta = {
      {"generateName", MetaAt(rs, "name") + "-"},
      {"namespace", MetaAt(rs, "namespace")},
      {"ownerReferences", json::array{api::NewControllerRef(rs, kApiVersion, kKind)}}};
  for (const char* field : {"labels", "annotations", "finalizers"}) {
    const json::value* v = Find(rs, std::string("spec.template.metadata.") + field);
    if (v != nullptr && !v->is_null()) meta[field] = *v;
  }
  const json::value* spec = Find(rs, "spec.template.spec");
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", std::move(meta)},
          {"spec", spec != nullptr ? *spec : json::object()}};
}

// Every label of the template is on the pod with the same value.
bool FullyLabeled(const json::object& pod, const json::object& rs) {
  const json::value* want = Find(rs, "spec.template.metadata.labels");
  if (want == nullptr || !want->is_object()) return true;
  const json::value* have = Find(pod, "metadata.labels");
  for (const auto& [k, v] : want->get_object()) {
    if (have == nullptr || !have->is_object()) return false;
    const json::value* got = have->get_object().if_contains(k);
    if (got == nullptr || *got != v) return false;
  }
  return true;
}

void SetCount(json::object& status, std::string_view key, int64_t n) {
  if (n != 0) status[key] = n;  // omitempty, as the Go type serializes
}

}  // namespace

ReplicaSetController::Outcome ReplicaSetController::ManageReplicas(
    const std::string& key, const json::object& rs, std::vector<runtime::ObjectPtr> pods) {
  int64_t diff = static_cast<int64_t>(pods.size()) - IntAt(rs, "spec.replicas", 1);
  if (diff < 0)
    return CreatePods(key, rs, static_cast<int>(std::min<int64_t>(-diff, kBurstReplicas)));
  if (diff > 0) {
    return DeletePods(key, rs, std::move(pods),
                      static_cast<int>(std::min<int64_t>(diff, kBurstReplicas)));
  }
  return {};
}

// Creates one pod at a time and stops at the first failure (the spirit of
// kube's slow-start batches: a quota or validation error fails once, not
// `count` times). Creations that will not happen are observed at once.
ReplicaSetController::Outcome ReplicaSetController::CreatePods(const std::string& key,
                                                               const json::object& rs, int count) {
  expectations_.ExpectCreations(key, count);
  json::object rs_ref = WithKind(rs, kApiVersion, kKind);
  json::object pod = PodFromTemplate(rs);
  for (int i = 0; i < count; ++i) {
    auto created = client_.Create(kPods, MetaAt(rs, "namespace"), pod);
    if (created.ok()) {
      events_.Event(rs_ref, runtime::kEventTypeNormal, "SuccessfulCreate",
                    "Created pod: " + MetaAt(*created, "name"));
      continue;
    }
    for (int j = i; j < count; ++j) expectations_.CreationObserved(key);
    events_.Event(rs_ref, runtime::kEventTypeWarning, "FailedCreate",
                  "Error creating: " + created.status().message());
    return {created.status(), "FailedCreate"};
  }
  return {};
}

ReplicaSetController::Outcome ReplicaSetController::DeletePods(const std::string& key,
                                                               const json::object& rs,
                                                               std::vector<runtime::ObjectPtr> pods,
                                                               int count) {
  SortForDeletion(pods);
  pods.resize(count);
  std::vector<std::string> keys;
  for (const runtime::ObjectPtr& p : pods) keys.push_back(runtime::ObjectKey(*p));
  expectations_.ExpectDeletions(key, keys);
  json::object rs_ref = WithKind(rs, kApiVersion, kKind);
  Outcome out;
  for (const runtime::ObjectPtr& p : pods) {
    Status s = client_.Delete(kPods, MetaAt(*p, "namespace"), MetaAt(*p, "name"));
    if (s.ok()) {
      events_.Event(rs_ref, runtime::kEventTypeNormal, "SuccessfulDelete",
                    "Deleted pod: " + MetaAt(*p, "name"));
      continue;
    }
    expectations_.DeletionObserved(key, runtime::ObjectKey(*p));
    if (s.Is(Reason::kNotFound)) continue;
    events_.Event(rs_ref, runtime::kEventTypeWarning, "FailedDelete",
                  "Error deleting: " + s.message());
    if (out.error.ok()) out = {s, "FailedDelete"};
  }
  return out;
}

json::object ReplicaSetController::CalculateStatus(const json::object& rs,
                                                   const std::vector<runtime::ObjectPtr>& pods,
                                                   const Outcome& outcome) const {
  int64_t min_ready = IntAt(rs, "spec.minReadySeconds");
  TimePoint now = clock_.Now();
  int64_t fully = 0, ready = 0, available = 0;
  for (const runtime::ObjectPtr& p : pods) {
    if (FullyLabeled(*p, rs)) ++fully;
    if (IsPodReady(*p)) ++ready;
    if (IsPodAvailable(*p, min_ready, now)) ++available;
  }
  json::object status = {{"replicas", static_cast<int64_t>(pods.size())}};
  SetCount(status, "fullyLabeledReplicas", fully);
  SetCount(status, "readyReplicas", ready);
  SetCount(status, "availableReplicas", available);
  SetCount(status, "observedGeneration", IntAt(rs, "metadata.generation"));

  json::array conditions;
  bool has_failure = false;
  if (const json::value* old = Find(rs, "status.conditions"); old && old->is_array()) {
    for (const json::value& c : old->get_array()) {
      bool failure = c.is_object() && GetString(c.get_object(), "type") == "ReplicaFailure";
      has_failure = has_failure || failure;
      if (!failure || !outcome.error.ok()) conditions.push_back(c);
    }
  }
  if (!outcome.error.ok() && !has_failure) {
    conditions.push_back(json::object{{"type", "ReplicaFailure"},
                                      {"status", "True"},
                                      {"lastTransitionTime", FormatRfc3339(now)},
                                      {"reason", outcome.reason},
                                      {"message", outcome.error.message()}});
  }
  if (!conditions.empty()) status["conditions"] = std::move(conditions);
  return status;
}

// Writes the status when it changed; on a conflict, once more on a fresh
// read (kube's updateReplicaSetStatus).
Status ReplicaSetController::WriteStatus(const json::object& rs, json::object status) {
  const json::value* old = rs.if_contains("status");
  if (old != nullptr && old->is_object() && old->get_object() == status) return Status::Ok();
  json::object copy = rs;
  copy["status"] = status;
  auto written = client_.UpdateStatus(kReplicaSets, MetaAt(rs, "namespace"), copy);
  if (written.ok() || !written.status().Is(Reason::kConflict)) return written.status();
  auto fresh = client_.Get(kReplicaSets, MetaAt(rs, "namespace"), MetaAt(rs, "name"));
  if (!fresh.ok()) return fresh.status().Is(Reason::kNotFound) ? Status::Ok() : fresh.status();
  if (MetaAt(*fresh, "uid") != MetaAt(rs, "uid")) return Status::Ok();
  (*fresh)["status"] = std::move(status);
  return client_.UpdateStatus(kReplicaSets, MetaAt(rs, "namespace"), *fresh).status();
}

// With minReadySeconds, ready pods become available later: sync again then.
Duration ReplicaSetController::UntilNextAvailable(
    const json::object& rs, const std::vector<runtime::ObjectPtr>& pods) const {
  int64_t min_ready = IntAt(rs, "spec.minReadySeconds");
  if (min_ready <= 0) return Duration::zero();
  TimePoint now = clock_.Now();
  std::optional<TimePoint> next;
  for (const runtime::ObjectPtr& p : pods) {
    std::optional<TimePoint> at = AvailableAt(*p, min_ready);
    if (at && *at > now && *at != TimePoint::max() && (!next || *at < *next)) next = at;
  }
  return next ? *next - now : Duration::zero();
}

}  // namespace flotilla::member
