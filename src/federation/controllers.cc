// The federation's controllers in `flotilla server` (controllers.h).
#include "federation/controllers.h"

#include "federation/deployment/deployment_controller.h"
#include "federation/replicaset/replicaset_controller.h"
#include "federation/statefulset/statefulset_controller.h"

namespace flotilla::federation {

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
    bool known = false;
    for (const char* k : kControllerNames) known = known || name == k;
    if (!known) {
      std::string list;
      for (const char* k : kControllerNames) list += std::string(k) + ", ";
      return "unknown controller \"" + std::string(name) + "\" (known: " + list + "and * for all)";
    }
  }
  return "";
}

FederationControllers::FederationControllers(client::Client& fed, Clock& clock,
                                             const FederationOptions& options)
    : ctx_(fed, clock, options.context) {
  ctx_.cluster_objects();  // the admission's cluster names read its cache
  if (options.Enabled("cluster")) {
    components_.push_back(std::make_shared<cluster::ClusterController>(ctx_, options.cluster));
  }
  if (options.Enabled("sync")) {
    components_.push_back(std::make_shared<sync::SyncController>(ctx_, options.sync));
  }
  WorkloadOptions workloads = options.workloads;
  if (options.Enabled("replicaset") || options.Enabled("deployment")) {
    ApplicationOptions apps = options.applications;
    apps.recheck_delay = workloads.recheck_delay;
    apps.unschedulable_threshold = workloads.unschedulable_threshold;
    applications_ = std::make_unique<Applications>(ctx_, apps);
    workloads.applications = applications_.get();
  }
  if (options.Enabled("replicaset")) {
    components_.push_back(std::make_shared<replicaset::ReplicaSetController>(ctx_, workloads));
  }
  if (options.Enabled("deployment")) {
    components_.push_back(std::make_shared<deployment::DeploymentController>(ctx_, workloads));
  }
  if (options.Enabled("statefulset")) {
    components_.push_back(
        std::make_shared<statefulset::StatefulSetController>(ctx_, options.workloads));
  }
  if (options.Enabled("hpa")) {
    components_.push_back(std::make_shared<hpa::HpaController>(ctx_, options.hpa));
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
