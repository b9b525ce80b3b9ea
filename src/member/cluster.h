// MemberCluster: one simulated Kubernetes cluster (docs/member.md): an API
// server with the member kinds (and without federation/v1beta1), the
// member's in-process client, controller manager, shared informers, event
// recorder, simulated CPU demand and every component of BuildComponents,
// plus its admin endpoint and API faults (admin.h). `flotilla member` runs
// one or many in one process.
//
// Start() returns a running member whose kubeconfig is written; Stop() (or
// the destructor) stops everything in reverse order. Thread-safe accessors.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/registry.h"
#include "apiserver/server.h"
#include "member/admin.h"
#include "member/context.h"
#include "member/dns/cluster_dns.h"
#include "member/kube_version.h"
#include "member/kubelet/pod_logs.h"
#include "member/kubelet/pod_streams.h"

namespace flotilla::member {

struct MemberOptions {
  std::string name = "member";                 // also the kubeconfig's cluster and context name
  std::string data_dir = "./flotilla-member";  // state and PKI of this member
  std::string kubeconfig_path;                 // "" = data_dir + "/kubeconfig"
  std::string bind_address = "127.0.0.1";
  int port = 0;                    // 0 picks a free port
  std::string storage = "memory";  // "sqlite" | "memory"
  SimulationOptions simulation;    // simulation.cluster_name is set to `name`
  Clock* clock = nullptr;          // null: the real clock
  ClusterDnsOptions dns;           // the cluster's DNS (address empty: none)
  // The Kubernetes version it presents itself as (kube_version.h); null:
  // today's.
  const KubeVersion* kube_version = nullptr;
  // kube-apiserver's --event-ttl (ServerOptions::event_ttl).
  Duration event_ttl = std::chrono::hours(1);
};

class MemberCluster {
 public:
  static StatusOr<std::unique_ptr<MemberCluster>> Start(const MemberOptions& opts);
  ~MemberCluster();
  MemberCluster(const MemberCluster&) = delete;
  MemberCluster& operator=(const MemberCluster&) = delete;

  // Idempotent.
  void Stop();

  const std::string& name() const { return opts_.name; }
  std::string url() const { return server_->url(); }
  int port() const { return server_->port(); }
  const std::string& kubeconfig_path() const { return opts_.kubeconfig_path; }
  client::Client& client() { return *client_; }
  WorkloadDemand& demand() { return demand_; }
  Faults& faults() { return faults_; }
  const SimulationOptions& options() const { return opts_.simulation; }
  apiserver::Server& server() { return *server_; }
  // The cluster DNS's port; 0 without one.
  int dns_port() const { return dns_ ? dns_->port() : 0; }

 private:
  explicit MemberCluster(const MemberOptions& opts) : opts_(opts) {}
  Status Init();

  MemberOptions opts_;
  Faults faults_;
  std::unique_ptr<kubelet::PodLogs> logs_;        // before server_: its streams use it
  std::unique_ptr<kubelet::PodStreams> streams_;  // likewise
  WorkloadDemand demand_;
  std::unique_ptr<Admin> admin_;
  std::unique_ptr<apiserver::Server> server_;
  std::unique_ptr<client::Client> client_;
  std::unique_ptr<runtime::ControllerManager> manager_;
  std::unique_ptr<SharedInformers> informers_;
  std::unique_ptr<runtime::EventRecorder> events_;
  std::optional<ControllerContext> ctx_;
  std::vector<std::unique_ptr<Component>> components_;
  metrics::Registry dns_metrics_;
  std::unique_ptr<ClusterDns> dns_;
  std::atomic<bool> admin_ready_{false};
  bool stopped_ = false;
};

}  // namespace flotilla::member
