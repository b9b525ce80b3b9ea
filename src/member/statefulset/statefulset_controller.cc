#include "member/statefulset/statefulset_controller.h"

#include <algorithm>

#include "api/labels.h"
#include "api/statefulset/revisions.h"
#include "member/object_util.h"
#include "member/statefulset/identity.h"
#include "member/statefulset/pod_state.h"

namespace flotilla::member {

using runtime::Revisions;
using statefulset::HasController;
using statefulset::IsCreated;
using statefulset::IsFinished;
using statefulset::IsHealthy;
using statefulset::IsRunningAndReady;
using statefulset::IsTerminating;
using statefulset::RevisionOf;
using statefulset::UntilAvailable;

namespace {

bool ControlledBy(const json::object& obj, const std::string& uid) {
  const json::value* refs = Find(obj, "metadata.ownerReferences");
  if (refs == nullptr || !refs->is_array()) return false;
  for (const json::value& r : refs->get_array()) {
    if (r.is_object() && StringAt(r.get_object(), "uid") == uid &&
        GetBool(r.get_object(), "controller").value_or(false)) {
      return true;
    }
  }
  return false;
}

void Bump(json::object& status, std::string_view field, int64_t by) {
  status[field] = IntAt(status, field, 0) + by;
}

}  // namespace

// What one reconcile of one set works on.
struct StatefulSetController::Pass {
  json::object set;
  json::object current_set;  // the set with its current revision's template
  json::object update_set;   // the set with its update revision's template
  std::string current_revision;
  std::string update_revision;
  bool monotonic = true;                      // OrderedReady
  int start = 0;                              // spec.ordinals.start
  std::vector<runtime::ObjectPtr> replicas;   // by ordinal - start; null: missing
  std::vector<runtime::ObjectPtr> condemned;  // beyond spec.replicas, highest first
  json::object status;
  TimePoint now;
  Duration min_ready = Duration::zero();
  Duration requeue = Duration::zero();

  // Counts a pod into status as computeReplicaStatus does.
  void Count(const json::object& pod) {
    if (IsCreated(pod)) Bump(status, "replicas", 1);
    if (IsRunningAndReady(pod)) {
      Bump(status, "readyReplicas", 1);
      Duration wait = UntilAvailable(pod, min_ready, now);
      if (wait <= Duration::zero()) {
        Bump(status, "availableReplicas", 1);
      } else if (requeue == Duration::zero() || wait < requeue) {
        requeue = wait;
      }
    }
    if (IsCreated(pod) && !IsTerminating(pod)) CountRevision(RevisionOf(pod), 1);
  }
  void CountRevision(const std::string& revision, int64_t by) {
    if (revision == current_revision) Bump(status, "currentReplicas", by);
    if (revision == update_revision) Bump(status, "updatedReplicas", by);
  }
};

StatefulSetController::StatefulSetController(ControllerContext& ctx)
    : client_(ctx.client),
      clock_(ctx.clock),
      events_(ctx.events),
      sets_(ctx.informers.For(kStatefulSets)),
      pods_(ctx.informers.For(kPods)),
      claims_(ctx.informers.For(kPersistentVolumeClaims)),
      revisions_(ctx.informers.For(runtime::kControllerRevisions)),
      history_(ctx.client, revisions_) {
  runtime::Controller& c = ctx.manager.AddController(
      "statefulset", 2, [this](const std::string& key) { return Reconcile(key); });
  sets_.AddEventHandler(c.EnqueueHandler());
  runtime::WorkQueue* queue = &c.queue();
  auto enqueue = [this, queue](const runtime::ObjectPtr& pod) { EnqueueFor(*pod, *queue); };
  pods_.AddEventHandler(runtime::EventHandler{
      enqueue,
      [enqueue](const runtime::ObjectPtr& old_pod, const runtime::ObjectPtr& new_pod) {
        if (statefulset::OwnerSetKey(*old_pod) != statefulset::OwnerSetKey(*new_pod))
          enqueue(old_pod);
        enqueue(new_pod);
      },
      enqueue});
}

StatusOr<runtime::Result> StatefulSetController::Reconcile(const std::string& key) {
  runtime::ObjectPtr cached = sets_.cache().Get(key);
  if (cached == nullptr || !StringAt(*cached, "metadata.deletionTimestamp").empty()) {
    return runtime::Result{};
  }
  StatusOr<api::LabelSelector> selector =
      api::LabelSelector::FromJson(Find(*cached, "spec.selector"), "spec.selector");
  if (!selector.ok() || selector->Empty()) return runtime::Result{};  // validation refuses these
  StatusOr<bool> adopted = AdoptOrphans(*cached, *selector);
  if (!adopted.ok()) return adopted.status();
  if (*adopted) return runtime::Result{};  // the pods' updates bring the set back
  StatusOr<Revisions> revisions = history_.Sync(*cached);
  if (!revisions.ok()) return revisions.status();

  Pass pass;
  std::set<std::string> live = BuildPass(*cached, *revisions, pass);
  bool proceed = false;
  Status s = ProcessReplicas(pass, proceed);
  if (s.ok() && proceed) s = ProcessCondemned(pass, proceed);
  if (s.ok() && proceed) s = RollOut(pass);
  if (!s.ok()) return s;

  FinishStatus(pass, *revisions);
  FLOTILLA_RETURN_IF_ERROR(WriteStatus(pass.set, pass.status));
  live.insert(pass.current_revision);
  FLOTILLA_RETURN_IF_ERROR(history_.Truncate(pass.set, *revisions, live));
  return runtime::Result{pass.requeue};
}

std::set<std::string> StatefulSetController::BuildPass(const json::object& set,
                                                       const Revisions& revisions,
                                                       Pass& pass) const {
  pass.set = set;
  pass.current_set = api::statefulset::ApplyRevision(pass.set, revisions.current);
  pass.update_set = api::statefulset::ApplyRevision(pass.set, revisions.update);
  pass.current_revision = StringAt(revisions.current, "metadata.name");
  pass.update_revision = StringAt(revisions.update, "metadata.name");
  pass.monotonic = StringAt(pass.set, "spec.podManagementPolicy") != "Parallel";
  pass.start = static_cast<int>(IntAt(pass.set, "spec.ordinals.start", 0));
  pass.now = clock_.Now();
  pass.min_ready = std::chrono::seconds(IntAt(pass.set, "spec.minReadySeconds", 0));
  pass.replicas.resize(std::max<int64_t>(0, IntAt(pass.set, "spec.replicas", 1)));

  std::string set_name = StringAt(pass.set, "metadata.name");
  std::string uid = StringAt(pass.set, "metadata.uid");
  std::set<std::string> live;
  for (const runtime::ObjectPtr& pod : pods_.lister().ByOwner(uid)) {
    std::optional<int> ordinal = statefulset::OrdinalOf(set_name, StringAt(*pod, "metadata.name"));
    if (!ordinal || !ControlledBy(*pod, uid)) continue;
    live.insert(RevisionOf(*pod));
    pass.Count(*pod);
    int index = *ordinal - pass.start;
    if (index >= 0 && index < static_cast<int>(pass.replicas.size())) {
      pass.replicas[index] = pod;
    } else {
      pass.condemned.push_back(pod);
    }
  }
  std::sort(pass.condemned.begin(), pass.condemned.end(), [&](const auto& a, const auto& b) {
    return statefulset::OrdinalOf(set_name, StringAt(*a, "metadata.name")) >
           statefulset::OrdinalOf(set_name, StringAt(*b, "metadata.name"));
  });
  return live;
}

void StatefulSetController::FinishStatus(Pass& pass, Revisions& revisions) const {
  // completeRollingUpdate: once every pod runs the update revision, it is
  // the current one.
  json::object& st = pass.status;
  if (StringAt(pass.set, "spec.updateStrategy.type") != "OnDelete" &&
      IntAt(st, "updatedReplicas", 0) == IntAt(st, "replicas", 0) &&
      IntAt(st, "readyReplicas", 0) == IntAt(st, "replicas", 0)) {
    st["currentReplicas"] = IntAt(st, "updatedReplicas", 0);
    pass.current_revision = pass.update_revision;
    revisions.current = revisions.update;
  }
  st["observedGeneration"] = IntAt(pass.set, "metadata.generation", 0);
  st["currentRevision"] = pass.current_revision;
  st["updateRevision"] = pass.update_revision;
  st["collisionCount"] = IntAt(pass.set, "status.collisionCount", 0);
}

Status StatefulSetController::ProcessReplicas(Pass& pass, bool& proceed) {
  proceed = false;
  for (size_t i = 0; i < pass.replicas.size(); ++i) {
    runtime::ObjectPtr pod = pass.replicas[i];
    if (pod != nullptr && IsFinished(*pod) && !IsTerminating(*pod)) {
      Record(pass.set, "Warning", "RecreatingFailedPod",
             "StatefulSet " + StringAt(pass.set, "metadata.namespace") + "/" +
                 StringAt(pass.set, "metadata.name") + " is recreating failed Pod " +
                 StringAt(*pod, "metadata.name"));
      FLOTILLA_RETURN_IF_ERROR(DeletePod(pass, *pod));
      Bump(pass.status, "replicas", -1);
      pass.CountRevision(RevisionOf(*pod), -1);
      // The new pod follows once the old one is gone (same name).
      if (pass.monotonic) return Status();
      continue;
    }
    if (pod == nullptr) {
      bool created = false;
      FLOTILLA_RETURN_IF_ERROR(CreatePod(pass, static_cast<int>(i), created));
      if (pass.monotonic) return Status();
      continue;
    }
    if (!pass.monotonic) continue;
    // OrderedReady: ordinal i+1 waits for ordinal i to be Running, Ready
    // and available, and for a terminating pod to be gone.
    if (IsTerminating(*pod) || !IsRunningAndReady(*pod)) return Status();
    if (UntilAvailable(*pod, pass.min_ready, pass.now) > Duration::zero()) return Status();
  }
  proceed = true;
  return Status();
}

Status StatefulSetController::ProcessCondemned(Pass& pass, bool& proceed) {
  proceed = false;
  std::string set_name = StringAt(pass.set, "metadata.name");
  bool delete_claims =
      StringAt(pass.set, "spec.persistentVolumeClaimRetentionPolicy.whenScaled") == "Delete";
  for (const runtime::ObjectPtr& pod : pass.condemned) {
    if (IsTerminating(*pod)) {
      if (pass.monotonic) return Status();
      continue;
    }
    // Ordered scale-down: the highest ordinal goes first, then the pass
    // waits for it to be gone before the next.
    FLOTILLA_RETURN_IF_ERROR(DeletePod(pass, *pod));
    if (delete_claims) {
      std::optional<int> ordinal =
          statefulset::OrdinalOf(set_name, StringAt(*pod, "metadata.name"));
      if (ordinal) FLOTILLA_RETURN_IF_ERROR(DeleteClaims(pass.set, *ordinal));
    }
    if (pass.monotonic) return Status();
  }
  proceed = true;
  return Status();
}

Status StatefulSetController::RollOut(Pass& pass) {
  if (StringAt(pass.set, "spec.updateStrategy.type") == "OnDelete") return Status();
  int64_t partition = IntAt(pass.set, "spec.updateStrategy.rollingUpdate.partition", 0);
  for (int64_t i = static_cast<int64_t>(pass.replicas.size()) - 1; i >= partition; --i) {
    runtime::ObjectPtr pod = pass.replicas[i];
    if (pod == nullptr) return Status();  // being created in this pass
    if (RevisionOf(*pod) != pass.update_revision && !IsTerminating(*pod)) {
      return DeletePod(pass, *pod);
    }
    if (!IsHealthy(*pod)) return Status();
  }
  return Status();
}

Status StatefulSetController::CreatePod(Pass& pass, int index, bool& created) {
  created = false;
  // newVersionedStatefulSetPod: below the partition, pods keep the current
  // revision.
  bool current = StringAt(pass.set, "spec.updateStrategy.type") != "OnDelete" &&
                 index < IntAt(pass.set, "spec.updateStrategy.rollingUpdate.partition", 0);
  const json::object& source = current ? pass.current_set : pass.update_set;
  const std::string& revision = current ? pass.current_revision : pass.update_revision;
  int ordinal = pass.start + index;
  json::object pod = statefulset::NewPod(source, ordinal, revision);
  std::string name = StringAt(pod, "metadata.name");
  FLOTILLA_RETURN_IF_ERROR(CreateClaims(source, ordinal, name));
  StatusOr<json::object> made = client_.Create(kPods, "", pod);
  if (made.status().Is(Reason::kAlreadyExists)) return Status();  // the cache is behind
  std::string set_name = StringAt(pass.set, "metadata.name");
  if (!made.ok()) {
    Record(pass.set, "Warning", "FailedCreate",
           "create Pod " + name + " in StatefulSet " + set_name +
               " failed error: " + made.status().message());
    return made.status();
  }
  Record(pass.set, "Normal", "SuccessfulCreate",
         "create Pod " + name + " in StatefulSet " + set_name + " successful");
  created = true;
  Bump(pass.status, "replicas", 1);
  pass.CountRevision(revision, 1);
  pass.replicas[index] = std::make_shared<const json::object>(std::move(*made));
  return Status();
}

Status StatefulSetController::DeletePod(Pass& pass, const json::object& pod) {
  client::DeleteOptions opts;
  opts.precondition_uid = StringAt(pod, "metadata.uid");
  std::string name = StringAt(pod, "metadata.name");
  Status s = client_.Delete(kPods, StringAt(pod, "metadata.namespace"), name, opts);
  // Gone already, or replaced by a newer pod of that name: the cache is
  // behind, and the next pass sees the truth.
  if (s.Is(Reason::kNotFound) || s.Is(Reason::kConflict)) return Status();
  std::string set_name = StringAt(pass.set, "metadata.name");
  if (!s.ok()) {
    Record(pass.set, "Warning", "FailedDelete",
           "delete Pod " + name + " in StatefulSet " + set_name + " failed error: " + s.message());
    return s;
  }
  Record(pass.set, "Normal", "SuccessfulDelete",
         "delete Pod " + name + " in StatefulSet " + set_name + " successful");
  return Status();
}

}  // namespace flotilla::member
