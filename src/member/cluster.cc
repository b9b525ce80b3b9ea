#include "member/cluster.h"

#include "api/kinds/kinds.h"
#include "api/schema.h"
#include "apiserver/responses.h"
#include "client/in_process_client.h"
#include "client/kubeconfig.h"
#include "member/components.h"

namespace flotilla::member {

StatusOr<std::unique_ptr<MemberCluster>> MemberCluster::Start(const MemberOptions& opts) {
  std::unique_ptr<MemberCluster> m(new MemberCluster(opts));
  if (m->opts_.kubeconfig_path.empty()) m->opts_.kubeconfig_path = opts.data_dir + "/kubeconfig";
  m->opts_.simulation.cluster_name = opts.name;
  FLOTILLA_RETURN_IF_ERROR(m->Init());
  return m;
}

Status MemberCluster::Init() {
  Clock& clock = opts_.clock != nullptr ? *opts_.clock : RealClock();
  MemberCluster* self = this;
  apiserver::ServerOptions server_opts;
  server_opts.data_dir = opts_.data_dir;
  server_opts.bind_address = opts_.bind_address;
  server_opts.port = opts_.port;
  server_opts.storage = opts_.storage;
  server_opts.registry = &MemberRegistry(opts_.kube_version);
  if (opts_.kube_version != nullptr) server_opts.git_version = opts_.kube_version->git_version;
  server_opts.schemas = &api::SchemaSet::Builtin();
  server_opts.clock = &clock;
  server_opts.event_ttl = opts_.event_ttl;
  server_opts.http_filter = [self](apiserver::Request& req, apiserver::Responder& resp) {
    return self->faults_.Filter(req, resp);
  };
  server_opts.extra_paths = [self](apiserver::Request& req, const apiserver::UserInfo& user,
                                   apiserver::Responder& resp) {
    if (req.path.rfind(kAdminPrefix, 0) != 0) return false;
    if (!self->admin_ready_) {
      apiserver::RespondStatus(resp, Status::Unavailable("the member is starting"));
      return true;
    }
    return self->admin_->Handle(req, user, resp);
  };
  logs_ = std::make_unique<kubelet::PodLogs>(clock);
  server_opts.pod_logs = [self](apiserver::Request& req, const json::object& pod,
                                std::function<StatusOr<json::object>()> reread,
                                const apiserver::UserInfo&, apiserver::Responder& resp) {
    self->logs_->Serve(req, pod, std::move(reread), resp);
  };
  streams_ = std::make_unique<kubelet::PodStreams>(clock);
  server_opts.pod_connect = [self](apiserver::Request& req, const std::string& subresource,
                                   const json::object& pod,
                                   std::function<StatusOr<json::object>()> reread,
                                   const apiserver::UserInfo&, apiserver::Responder& resp) {
    self->streams_->Serve(req, subresource, pod, std::move(reread), resp);
  };
  FLOTILLA_ASSIGN_OR_RETURN(server_, apiserver::Server::Start(server_opts));

  // The simulated cluster's controllers and kubelets write as one manager.
  client_ =
      client::NewInProcessClient(server_->api(), server_->pki().admin_token, "flotilla-member");
  manager_ = std::make_unique<runtime::ControllerManager>(clock);
  informers_ = std::make_unique<SharedInformers>(*client_, clock, *manager_);
  events_ = std::make_unique<runtime::EventRecorder>(
      *client_, clock, runtime::EventSource{"flotilla-member", opts_.name});
  ctx_.emplace(ControllerContext{*client_, clock, *manager_, *informers_, *events_,
                                 opts_.simulation, demand_});
  components_ = BuildComponents(*ctx_, opts_.kube_version);
  if (!opts_.dns.address.empty()) {
    dns_ = std::make_unique<ClusterDns>(*ctx_, opts_.dns, dns_metrics_);
  }
  admin_ = std::make_unique<Admin>(opts_.name, *client_, clock, demand_, faults_, opts_.simulation);
  admin_ready_ = true;
  FLOTILLA_RETURN_IF_ERROR(manager_->Start());
  if (dns_) {
    FLOTILLA_RETURN_IF_ERROR(dns_->Start());
    server_->api().metrics().SetSource("dns", [self] { return self->dns_metrics_.Render(); });
  }
  const auto& pki = server_->pki();
  return client::WriteKubeconfig(opts_.kubeconfig_path, opts_.name, server_->url(), pki.ca_cert_pem,
                                 opts_.name + "-admin", {pki.admin_token, "", ""});
}

MemberCluster::~MemberCluster() { Stop(); }

void MemberCluster::Stop() {
  if (stopped_) return;
  stopped_ = true;
  // The listener first, so nothing new arrives; then the controllers and
  // their informers; then what they used.
  admin_ready_ = false;
  if (dns_) {
    server_->api().metrics().SetSource("dns", nullptr);
    dns_->Stop();
  }
  if (server_) server_->Stop();
  // Informers first, in parallel (the manager would stop them one by one).
  if (informers_) informers_->StopAll();
  if (manager_) manager_->Stop();
  events_.reset();
  dns_.reset();
  components_.clear();
  ctx_.reset();
  // The manager's destructor stops its informers again: it goes first.
  manager_.reset();
  informers_.reset();
}

}  // namespace flotilla::member
