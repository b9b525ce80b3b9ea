// The federation's controllers in `flotilla server` (federation_controllers.h).
#include "cli/federation_controllers.h"

#include "client/in_process_client.h"

namespace flotilla::cli {
namespace {

// Adds `controller`'s own metrics to the server's /metrics, as `source`.
template <typename Controller>
void ServeMetrics(apiserver::Server& server, const char* source, Controller* controller) {
  server.api().metrics().SetSource(source, [controller] { return controller->RenderMetrics(); });
}

}  // namespace

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
    for (const char* k : kFederationControllerNames) known = known || name == k;
    if (!known) {
      return "unknown controller \"" + std::string(name) +
             "\" (known: cluster, sync, replicaset, and * for all)";
    }
  }
  return "";
}

FederationControllers::FederationControllers(apiserver::Server& server)
    : server_(server),
      client_(client::NewInProcessClient(server.api(), server.pki().admin_token)),
      manager_(RealClock()) {}

StatusOr<std::unique_ptr<FederationControllers>> FederationControllers::Start(
    apiserver::Server& server, const FederationOptions& options) {
  std::unique_ptr<FederationControllers> c(new FederationControllers(server));
  if (options.Enabled("cluster")) {
    c->cluster_controller_ = std::make_unique<federation::cluster::ClusterController>(
        *c->client_, c->manager_, RealClock(), options.cluster, &c->clusters_);
    ServeMetrics(server, "clusters", c->cluster_controller_.get());
  }
  if (options.Enabled("sync")) {
    c->sync_controller_ = std::make_unique<federation::sync::SyncController>(
        *c->client_, c->manager_, RealClock(), c->clusters_);
    ServeMetrics(server, "sync", c->sync_controller_.get());
  }
  if (options.Enabled("replicaset")) {
    c->replicaset_controller_ = std::make_unique<federation::replicaset::ReplicaSetController>(
        *c->client_, c->manager_, RealClock(), c->clusters_, options.replicaset);
    ServeMetrics(server, "replicasets", c->replicaset_controller_.get());
  }
  runtime::ControllerManager* manager = &c->manager_;
  server.api().metrics().SetSource(
      "controllers", [manager] { return runtime::RenderControllerMetrics(manager->Metrics()); });
  FLOTILLA_RETURN_IF_ERROR(c->manager_.Start());
  return c;
}

FederationControllers::~FederationControllers() {
  server_.api().metrics().SetSource("clusters", nullptr);
  server_.api().metrics().SetSource("sync", nullptr);
  server_.api().metrics().SetSource("replicasets", nullptr);
  server_.api().metrics().SetSource("controllers", nullptr);
  // Their member informers enqueue to the manager's queues.
  if (sync_controller_) sync_controller_->Stop();
  if (replicaset_controller_) replicaset_controller_->Stop();
  manager_.Stop();
}

}  // namespace flotilla::cli
