// The federated PodDisruptionBudget controller (disruption_controller.h).
#include "federation/disruption/disruption_controller.h"

#include <algorithm>

#include "api/disruption.h"
#include "api/federated.h"
#include "api/labels.h"
#include "api/owner.h"
#include "api/views.h"
#include "federation/common/federated_kind.h"
#include "federation/common/member_copy.h"
#include "federation/common/object_writes.h"

namespace flotilla::federation::disruption {
namespace {

using client::kDeployments;
using client::kPodDisruptionBudgets;
using client::kReplicaSets;
using client::kStatefulSets;

// The workloads a member runs pods of, as its caches have them.
constexpr const client::ResourceRef* kWorkloads[] = {&kDeployments, &kStatefulSets, &kReplicaSets};

int64_t Int(const json::object& obj, std::string_view path) {
  const json::value* v = Find(obj, path);
  return v != nullptr && v->is_int64() ? v->get_int64() : 0;
}

}  // namespace

std::map<std::string, json::object> DivideSpec(const json::object& spec,
                                               const std::map<std::string, int64_t>& shares) {
  int64_t total = 0;
  for (const auto& [cluster, share] : shares) total += share;
  std::map<std::string, json::object> out;
  for (const auto& [cluster, share] : shares) out[cluster] = spec;
  if (total <= 0) return out;
  const json::value* min_available = spec.if_contains("minAvailable");
  const json::value* max_unavailable = spec.if_contains("maxUnavailable");
  if (min_available != nullptr && min_available->is_int64()) {
    // Rounded up: each part keeps at least its proportion of the minimum.
    int64_t m = min_available->get_int64();
    for (const auto& [cluster, share] : shares) {
      out[cluster]["minAvailable"] = (m * share + total - 1) / total;
    }
  } else if (max_unavailable != nullptr && max_unavailable->is_int64()) {
    // Largest remainder: the parts sum to the whole allowance, no more.
    int64_t u = max_unavailable->get_int64();
    std::vector<std::pair<int64_t, std::string>> remainders;
    int64_t given = 0;
    for (const auto& [cluster, share] : shares) {
      int64_t part = u * share / total;
      out[cluster]["maxUnavailable"] = part;
      given += part;
      remainders.emplace_back(-(u * share % total), cluster);
    }
    std::sort(remainders.begin(), remainders.end());
    for (size_t i = 0; given < u && i < remainders.size(); ++i, ++given) {
      json::object& part = out[remainders[i].second];
      part["maxUnavailable"] = part["maxUnavailable"].as_int64() + 1;
    }
  }
  return out;
}

json::object AggregateStatus(const json::object& pdb,
                             const std::vector<const json::object*>& copies, bool observed,
                             TimePoint now) {
  const json::value* current = Find(pdb, "status");
  json::object status =
      current != nullptr && current->is_object() ? current->get_object() : json::object{};
  int64_t healthy = 0, desired = 0, expected = 0, allowed = 0;
  for (const json::object* copy : copies) {
    if (copy == nullptr) continue;
    healthy += Int(*copy, "status.currentHealthy");
    desired += Int(*copy, "status.desiredHealthy");
    expected += Int(*copy, "status.expectedPods");
    allowed += Int(*copy, "status.disruptionsAllowed");
  }
  status["currentHealthy"] = healthy;
  status["desiredHealthy"] = desired;
  status["expectedPods"] = expected;
  status["disruptionsAllowed"] = allowed;
  status.erase("disruptedPods");  // each member's own
  if (observed) status["observedGeneration"] = Int(pdb, "metadata.generation");
  if (!status.contains("observedGeneration")) status["observedGeneration"] = 0;
  api::SetDisruptionAllowedCondition(status, now);
  return status;
}

// A budget's copy holds its spec as divided for the cluster, exactly.
DisruptionBudgetController::DisruptionBudgetController(FederationContext& ctx,
                                                       const WorkloadOptions& options)
    : CopyStrategy(ctx, options, {kPodDisruptionBudgets, "PodDisruptionBudget", {"spec"}}) {
  StartReconciler(kName);
  // A member's workloads changing changes the shares of its namespace's
  // budgets: their replicas or the labels their pods get (what ShareIn
  // reads). A workload's status, which changes far more often, does not.
  for (const client::ResourceRef* workload : kWorkloads) {
    ctx.members().AddHandler(*workload, [this](const std::string&) {
      auto changed = [this](const runtime::ObjectPtr& obj) {
        EnqueueWhere(std::string(api::ObjectView(*obj).ns()),
                     [](const json::object&) { return true; });
      };
      return runtime::EventHandler{
          .on_add = changed,
          .on_update =
              [changed](const runtime::ObjectPtr& old_obj, const runtime::ObjectPtr& obj) {
                auto differs = [&](std::string_view path) {
                  const json::value* before = Find(*old_obj, path);
                  const json::value* after = Find(*obj, path);
                  return (before == nullptr) != (after == nullptr) ||
                         (before != nullptr && *before != *after);
                };
                if (differs("spec.replicas") || differs("spec.template.metadata.labels")) {
                  changed(obj);
                }
              },
          .on_delete = changed};
    });
  }
}

std::vector<client::ResourceRef> DisruptionBudgetController::MemberReads() const {
  return {kDeployments, kStatefulSets, kReplicaSets};
}

int64_t DisruptionBudgetController::ShareIn(const std::string& cluster,
                                            const json::object& pdb) const {
  StatusOr<api::LabelSelector> selector =
      api::LabelSelector::FromJson(Find(pdb, "spec.selector"), "spec.selector");
  if (!selector.ok()) return 0;
  std::string ns(api::ObjectView(pdb).ns());
  int64_t share = 0;
  for (const client::ResourceRef* workload : kWorkloads) {
    std::shared_ptr<runtime::Informer> informer = ctx_.members().Get(cluster, *workload);
    if (informer == nullptr) continue;
    for (const runtime::ObjectPtr& obj : informer->lister().List(ns)) {
      // A Deployment's ReplicaSets are counted as the Deployment.
      const json::object* owner = api::ControllerRef(*obj);
      if (workload == &kReplicaSets && owner != nullptr &&
          StringViewAt(*owner, "kind") == "Deployment") {
        continue;
      }
      const json::value* labels = Find(*obj, "spec.template.metadata.labels");
      if (!selector->Matches(labels != nullptr && labels->is_object() ? &labels->get_object()
                                                                      : nullptr)) {
        continue;
      }
      const json::value* replicas = Find(*obj, "spec.replicas");
      share += replicas != nullptr && replicas->is_int64() ? replicas->get_int64() : 1;
    }
  }
  return share;
}

Status DisruptionBudgetController::Plan(Check& check) {
  std::map<std::string, int64_t> shares;
  for (const Copy& c : check.copies) {
    int64_t share = ShareIn(c.cluster(), check.obj());
    if (share > 0) shares[c.cluster()] = share;
  }
  const json::value* spec = check.obj().if_contains("spec");
  std::map<std::string, json::object> specs = DivideSpec(
      spec != nullptr && spec->is_object() ? spec->get_object() : json::object{}, shares);
  json::object copy = CopyOf(check.obj());
  for (Copy& c : check.copies) {
    auto it = specs.find(c.cluster());
    if (it == specs.end()) {
      // No pods of the budget there.
      c.remove = true;
      continue;
    }
    json::object desired = copy;
    desired["spec"] = std::move(it->second);
    c.desired = std::move(desired);
    c.create = true;
  }
  return Status::Ok();
}

StatusOr<runtime::Result> DisruptionBudgetController::Finish(Check& check) {
  std::vector<const json::object*> copies;
  bool observed = true;
  for (const Copy& c : check.copies) {
    if (!c.desired) continue;
    const json::object* local = c.Managed() ? c.Current() : nullptr;
    copies.push_back(local);
    observed = observed && local != nullptr && reconciler().CopyUpToDate(check, c) &&
               Int(*local, "status.observedGeneration") == Int(*local, "metadata.generation");
  }
  std::string breakdown = CopyBreakdown(check.copies, [](const json::object* copy) {
    if (copy == nullptr) return BreakdownCell{};
    return BreakdownCell{.planned = Int(*copy, "status.desiredHealthy"),
                         .ready = Int(*copy, "status.currentHealthy")};
  });
  FLOTILLA_RETURN_IF_ERROR(
      WriteStatusIfChanged(ctx_.fed(), kPodDisruptionBudgets, check.obj(),
                           AggregateStatus(check.obj(), copies, observed, check.now),
                           {{api::kDisruptionStatusAnnotation, std::move(breakdown)}}));
  return runtime::Result{};
}

}  // namespace flotilla::federation::disruption

namespace flotilla::federation {

void RegisterDisruptionBudget(KindRegistry& kinds) {
  kinds.Add({.controller = disruption::DisruptionBudgetController::kName,
             .help = "federated PodDisruptionBudgets: each cluster a budget for its share of the "
                     "selected pods",
             .kind = "PodDisruptionBudget",
             .propagates = {client::kPodDisruptionBudgets},
             .listings = {WorkloadListing{
                 .short_names = {"pdb"}, .breakdown_annotation = api::kDisruptionStatusAnnotation}},
             .build = [](const KindEnv& env) {
               return std::make_shared<disruption::DisruptionBudgetController>(env.ctx,
                                                                               env.workloads);
             }});
}

}  // namespace flotilla::federation
