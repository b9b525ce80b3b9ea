// The federated Ingress controller (ingress_controller.h).
#include "federation/ingress/ingress_controller.h"

#include "api/federated.h"
#include "api/service_dns.h"
#include "api/views.h"
#include "federation/common/federated_kind.h"
#include "federation/common/object_writes.h"

namespace flotilla::federation::ingress {
namespace {

using client::kEndpoints;
using client::kIngresses;

void AddBackend(const json::value* backend, std::set<std::string>& out) {
  if (backend == nullptr || !backend->is_object()) return;
  std::string name = StringAt(backend->get_object(), "service.name");
  if (!name.empty()) out.insert(std::move(name));
}

}  // namespace

std::set<std::string> BackendServices(const json::object& ingress) {
  std::set<std::string> out;
  AddBackend(Find(ingress, "spec.defaultBackend"), out);
  const json::value* rules = Find(ingress, "spec.rules");
  if (rules == nullptr || !rules->is_array()) return out;
  for (const json::value& rule : rules->get_array()) {
    if (!rule.is_object()) continue;
    const json::value* paths = Find(rule.get_object(), "http.paths");
    if (paths == nullptr || !paths->is_array()) continue;
    for (const json::value& p : paths->get_array()) {
      if (p.is_object()) AddBackend(p.get_object().if_contains("backend"), out);
    }
  }
  return out;
}

json::object LoadBalancerOf(const std::vector<const json::object*>& copies) {
  json::array entries;
  std::set<std::string> seen;
  for (const json::object* copy : copies) {
    if (copy == nullptr) continue;
    const json::value* ingress = Find(*copy, "status.loadBalancer.ingress");
    if (ingress == nullptr || !ingress->is_array()) continue;
    for (const json::value& entry : ingress->get_array()) {
      if (!entry.is_object()) continue;
      std::string address = StringAt(entry.get_object(), "ip");
      if (address.empty()) address = StringAt(entry.get_object(), "hostname");
      if (address.empty() || !seen.insert(address).second) continue;
      entries.push_back(entry);
    }
  }
  if (entries.empty()) return json::object{};
  return json::object{{"ingress", std::move(entries)}};
}

// A copy holds the Ingress's spec (what a member's API server defaults in
// it does not make it out of date).
IngressController::IngressController(FederationContext& ctx, const WorkloadOptions& options)
    : CopyStrategy(ctx, options, {kIngresses, "Ingress", {"spec"}, true}) {
  StartReconciler(kName);
  // A backend's endpoints becoming ready or going changes where the
  // Ingresses that route to it are served.
  ctx.members().AddHandler(kEndpoints, [this](const std::string&) {
    auto changed = [this](const runtime::ObjectPtr& eps) {
      api::ObjectView view(*eps);
      std::string service(view.name());
      EnqueueWhere(std::string(view.ns()),
                   [&](const json::object& ing) { return BackendServices(ing).contains(service); });
    };
    return runtime::EventHandler{
        .on_add = changed,
        .on_update =
            [changed](const runtime::ObjectPtr& old_eps, const runtime::ObjectPtr& eps) {
              if (api::ReadyAddresses(*old_eps).empty() != api::ReadyAddresses(*eps).empty()) {
                changed(eps);
              }
            },
        .on_delete = changed};
  });
}

std::vector<client::ResourceRef> IngressController::MemberReads() const { return {kEndpoints}; }

bool IngressController::ServedIn(const std::string& cluster, const json::object& ingress) const {
  std::shared_ptr<runtime::Informer> endpoints = ctx_.members().Get(cluster, kEndpoints);
  if (endpoints == nullptr) return false;
  std::string ns(api::ObjectView(ingress).ns());
  for (const std::string& service : BackendServices(ingress)) {
    runtime::ObjectPtr eps = endpoints->lister().Get(ns, service);
    if (eps != nullptr && !api::ReadyAddresses(*eps).empty()) return true;
  }
  return false;
}

Status IngressController::Plan(Check& check) {
  json::object copy = CopyOf(check.obj());
  for (Copy& c : check.copies) {
    if (!ServedIn(c.cluster(), check.obj())) {
      c.remove = true;  // nothing there to route to
      continue;
    }
    c.desired = copy;
    c.create = true;
  }
  return Status::Ok();
}

StatusOr<runtime::Result> IngressController::Finish(Check& check) {
  std::vector<const json::object*> copies;
  for (const Copy& c : check.copies) {
    if (c.desired && c.Managed()) copies.push_back(c.Current());
  }
  const json::value* current = Find(check.obj(), "status");
  json::object status =
      current != nullptr && current->is_object() ? current->get_object() : json::object{};
  status["loadBalancer"] = LoadBalancerOf(copies);
  // A copy is ready once its cluster's ingress controller gave it an address.
  std::string breakdown = CopyBreakdown(check.copies, [](const json::object* copy) {
    const json::value* lb = copy ? Find(*copy, "status.loadBalancer.ingress") : nullptr;
    bool addressed = lb != nullptr && lb->is_array() && !lb->get_array().empty();
    return BreakdownCell{.planned = 1, .ready = addressed ? 1 : 0};
  });
  FLOTILLA_RETURN_IF_ERROR(WriteStatusIfChanged(ctx_.fed(), kIngresses, check.obj(), status,
                                                {{api::kIngressStatusAnnotation, breakdown}}));
  return runtime::Result{};
}

}  // namespace flotilla::federation::ingress

namespace flotilla::federation {

void RegisterIngress(KindRegistry& kinds) {
  kinds.Add({.controller = ingress::IngressController::kName,
             .help = "federated Ingresses: in every cluster with a ready backend, their "
                     "addresses in its status and its hosts in the federation's DNS",
             .kind = "Ingress",
             .propagates = {client::kIngresses},
             .listings = {WorkloadListing{.short_names = {"ing"},
                                          .breakdown_annotation = api::kIngressStatusAnnotation}},
             .build = [](const KindEnv& env) {
               return std::make_shared<ingress::IngressController>(env.ctx, env.workloads);
             }});
}

}  // namespace flotilla::federation
