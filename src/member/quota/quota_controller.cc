// The member's resource quota controller (quota_controller.h).
#include "member/quota/quota_controller.h"

#include <algorithm>

#include "api/resource_quota.h"

namespace flotilla::member {
namespace {

void AddUsage(api::QuotaUsage& total, const json::object& quota, const api::CountedResource& r,
              const json::object& obj) {
  if (!api::QuotaMatches(quota, r.group, r.plural, obj)) return;
  for (const auto& [name, milli] : api::ObjectUsage(r.group, r.plural, obj)) total[name] += milli;
}

}  // namespace

QuotaController::QuotaController(ControllerContext& ctx, const api::Registry& registry)
    : client_(ctx.client),
      registry_(registry),
      quotas_(ctx.informers.For(kResourceQuotas)),
      pods_(ctx.informers.For(kPods)) {
  runtime::Controller& c = ctx.manager.AddController(
      "resourcequota", 1, [this](const std::string& ns) { return Reconcile(ns); });
  runtime::EventHandler by_namespace = c.EnqueueNamespaceHandler();
  quotas_.AddEventHandler(by_namespace);
  auto enqueue = by_namespace.on_add;
  // Only what changes a pod's charge: its arrival, its end, its removal.
  pods_.AddEventHandler(runtime::EventHandler{
      .on_add = enqueue,
      .on_update =
          [enqueue](const runtime::ObjectPtr& old, const runtime::ObjectPtr& obj) {
            if (StringViewAt(*old, "status.phase") != StringViewAt(*obj, "status.phase"))
              enqueue(obj);
          },
      .on_delete = enqueue});
}

StatusOr<api::QuotaUsage> QuotaController::Used(const json::object& quota, const std::string& ns,
                                                const api::CountedResource& r) const {
  api::QuotaUsage used;
  if (r.group.empty() && r.plural == "pods") {
    for (const runtime::ObjectPtr& pod : pods_.lister().List(ns)) AddUsage(used, quota, r, *pod);
    return used;
  }
  const api::Resource* res = nullptr;
  for (const auto& candidate : registry_.All()) {
    if (candidate->group == r.group && candidate->plural == r.plural) {
      res = candidate.get();
      break;
    }
  }
  if (res == nullptr) return used;
  FLOTILLA_ASSIGN_OR_RETURN(
      client::ObjectList list,
      client_.List(client::ResourceRef{res->group, res->version, res->plural, true}, ns, {}));
  for (const json::object& obj : list.items) AddUsage(used, quota, r, obj);
  return used;
}

StatusOr<runtime::Result> QuotaController::Reconcile(const std::string& ns) {
  runtime::Result result;
  for (const runtime::ObjectPtr& quota : quotas_.lister().List(ns)) {
    const json::value* hard = Find(*quota, "spec.hard");
    if (hard == nullptr || !hard->is_object()) continue;
    std::vector<api::CountedResource> counted;
    for (const auto& [name, q] : hard->get_object()) {
      std::optional<api::CountedResource> r = api::CountedBy(name);
      if (r && std::find(counted.begin(), counted.end(), *r) == counted.end())
        counted.push_back(*r);
    }
    api::QuotaUsage used;
    for (const api::CountedResource& r : counted) {
      FLOTILLA_ASSIGN_OR_RETURN(api::QuotaUsage more, Used(*quota, ns, r));
      for (const auto& [name, milli] : more) used[name] += milli;
      if (!r.group.empty() || r.plural != "pods") result.requeue_after = kRecount;
    }
    json::object status{{"hard", *hard}, {"used", api::UsedList(*quota, used)}};
    const json::value* current = Find(*quota, "status");
    if (current != nullptr && *current == json::value(status)) continue;
    json::object updated = *quota;
    updated["status"] = std::move(status);
    Status s = client_.UpdateStatus(kResourceQuotas, ns, updated).status();
    // A conflict or a quota gone: its own event brings the namespace back.
    if (!s.ok() && !s.Is(Reason::kConflict) && !s.Is(Reason::kNotFound)) return s;
  }
  return result;
}

}  // namespace flotilla::member
