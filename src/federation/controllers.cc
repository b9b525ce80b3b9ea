// The federation's controllers in `flotilla server` (controllers.h).
#include "federation/controllers.h"

#include <algorithm>
#include <cctype>

namespace flotilla::federation {

// Defined in the source the build writes (flotilla_federated_kinds).
void RegisterBuiltInKinds(KindRegistry& kinds);

const KindRegistry& BuiltInKinds() {
  static const KindRegistry kKinds = [] {
    KindRegistry kinds;
    RegisterBuiltInKinds(kinds);
    return kinds;
  }();
  return kKinds;
}

std::vector<client::ResourceRef> MemberKinds() {
  std::vector<client::ResourceRef> out;
  const std::vector<FederatedKind>& kinds = BuiltInKinds().kinds();
  for (auto k = kinds.rbegin(); k != kinds.rend(); ++k) {
    for (auto r = k->propagates.rbegin(); r != k->propagates.rend(); ++r) {
      if (r->group != "apiextensions.k8s.io") out.push_back(*r);
    }
  }
  return out;
}

std::vector<ListedWorkload> ListedWorkloads() {
  std::vector<ListedWorkload> out;
  for (const FederatedKind& k : BuiltInKinds().kinds()) {
    for (const WorkloadListing& listing : k.listings) {
      if (!listing.resource && k.propagates.empty()) continue;
      ListedWorkload w{.resource = listing.resource.value_or(k.propagates.front()),
                       .kind = listing.kind.empty() ? k.kind : listing.kind,
                       .breakdown_annotation = listing.breakdown_annotation};
      std::string singular = w.kind;
      for (char& c : singular) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      w.names = {singular, w.resource.resource};
      for (const std::string& n : listing.short_names) w.names.push_back(n);
      out.push_back(std::move(w));
    }
  }
  return out;
}

const ListedWorkload* FindListedWorkload(const std::vector<ListedWorkload>& workloads,
                                         std::string name) {
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const ListedWorkload& w : workloads) {
    for (const std::string& n : w.names) {
      if (name == n || (!w.resource.group.empty() && name == n + "." + w.resource.group)) {
        return &w;
      }
    }
  }
  return nullptr;
}

std::vector<std::string> ControllerGroups() {
  std::vector<std::string> out;
  for (const FederatedKind& k : BuiltInKinds().kinds()) {
    for (const client::ResourceRef& r : k.propagates) {
      if (std::find(out.begin(), out.end(), r.group) == out.end()) out.push_back(r.group);
    }
  }
  return out;
}

bool FederationOptions::Enabled(std::string_view name) const {
  bool enabled = false;
  for (const std::string& c : controllers) {
    if (c == "*" || c == name) enabled = true;
    if (c.size() > 1 && c[0] == '-' && std::string_view(c).substr(1) == name) return false;
  }
  return enabled;
}

std::string CheckControllers(const std::vector<std::string>& controllers) {
  for (const std::string& c : controllers) {
    std::string_view name = c.starts_with("-") ? std::string_view(c).substr(1) : c;
    if (name == "*" && !c.starts_with("-")) continue;
    if (BuiltInKinds().Find(name) == nullptr) {
      std::string list;
      for (const FederatedKind& k : BuiltInKinds().kinds()) list += k.controller + ", ";
      return "unknown controller \"" + std::string(name) + "\" (known: " + list + "and * for all)";
    }
  }
  return "";
}

std::string ControllersHelp() {
  std::string help =
      "Federation controllers to run: * for all, NAME to enable one, -NAME to disable one; "
      "--controllers=cluster serves the API with nothing else writing to it. The controllers:";
  for (const FederatedKind& k : BuiltInKinds().kinds()) {
    help += "\n  " + k.controller + ": " + k.help;
  }
  return help;
}

FederationControllers::FederationControllers(client::Client& fed, Clock& clock,
                                             const FederationOptions& options)
    : ctx_(fed, clock, options.context) {
  ctx_.cluster_objects();  // the admission's cluster names read its cache
  const std::vector<FederatedKind>& kinds = BuiltInKinds().kinds();
  WorkloadOptions coupled = options.workloads;
  for (const FederatedKind& k : kinds) {
    if (!k.applications || !options.Enabled(k.controller) || applications_) continue;
    ApplicationOptions apps = options.applications;
    apps.recheck_delay = options.workloads.recheck_delay;
    apps.unschedulable_threshold = options.workloads.unschedulable_threshold;
    applications_ = std::make_unique<Applications>(ctx_, apps);
    coupled.applications = applications_.get();
  }
  for (const FederatedKind& k : kinds) {
    if (!options.Enabled(k.controller)) continue;
    components_.push_back(k.build({.ctx = ctx_,
                                   .workloads = k.applications ? coupled : options.workloads,
                                   .options = options.parts}));
  }
  if (!options.dns.address.empty()) {
    dns_ = std::make_unique<dns::FederationDns>(ctx_, options.dns);
  }
  ctx_.metrics().SetCollector("controllers", [m = &ctx_.manager()](metrics::TextWriter& w) {
    runtime::WriteControllerMetrics(w, m->Metrics());
  });
}

StatusOr<std::unique_ptr<FederationControllers>> FederationControllers::Start(
    client::Client& fed, Clock& clock, const FederationOptions& options) {
  std::unique_ptr<FederationControllers> c(new FederationControllers(fed, clock, options));
  FLOTILLA_RETURN_IF_ERROR(c->ctx_.Start());
  if (c->dns_) FLOTILLA_RETURN_IF_ERROR(c->dns_->Start());
  return c;
}

FederationControllers::~FederationControllers() {
  ctx_.metrics().SetCollector("controllers", nullptr);
  if (dns_) dns_->Stop();
  ctx_.Stop();
  components_.clear();
}

std::string FederationControllers::RenderMetrics() const {
  return const_cast<FederationContext&>(ctx_).metrics().Render();
}

}  // namespace flotilla::federation
