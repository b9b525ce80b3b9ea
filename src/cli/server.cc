// `flotilla server`: the federation control plane's API server with embedded
// storage. Writes an admin kubeconfig (and a read-only one) into the data dir
// and runs until SIGINT or SIGTERM.
#include "apiserver/server.h"

#include <unistd.h>

#include <csignal>
#include <iostream>
#include <optional>
#include <random>

#include "api/federated.h"
#include "api/kinds/kinds.h"
#include "api/schema.h"
#include "base/descriptors.h"
#include "base/io.h"
#include "base/log.h"
#include "base/mutex.h"
#include "cli/commands.h"
#include "cli/duration.h"
#include "cli/signals.h"
#include "cli/version.h"
#include "client/in_process_client.h"
#include "client/kubeconfig.h"
#include "dns/zone.h"
#include "federation/admission/admission.h"
#include "federation/cluster/cluster_controller.h"
#include "federation/cluster/member_pods.h"
#include "federation/cluster/proxy.h"
#include "federation/cluster/registration.h"
#include "federation/cluster/server_lease.h"
#include "federation/cluster/tunnel.h"
#include "federation/common/names.h"
#include "federation/controllers.h"
#include "federation/hpa/hpa_controller.h"
#include "runtime/leader_election.h"

namespace flotilla::cli {
namespace {

// client-go's leaderelection defaults, as kube-controller-manager's flags.
struct LeaderFlags {
  std::string elect = "auto";  // true, false, or auto: true with etcd storage
  Duration lease_duration = std::chrono::seconds(15);
  Duration renew_deadline = std::chrono::seconds(10);
  Duration retry_period = std::chrono::seconds(2);
  std::string lease_namespace = federation::kSystemNamespace;
  std::string lease_name = "flotilla-controllers";
};

struct ServerFlags {
  apiserver::ServerOptions server;
  federation::FederationOptions federation;
  LeaderFlags leader;
  Duration dns_ttl = std::chrono::seconds(dns::kDefaultTtlSeconds);
  std::string log_level = "info";
  Duration etcd_compaction_interval = std::chrono::minutes(5);
  // The members' pods on the federation (member_pods.h).
  bool member_pods = true;
  // Agents' tunnels (federation/cluster/tunnel.h).
  federation::cluster::TunnelOptions tunnels;
  // The URL agents reach this server by, in its Lease (server_lease.h);
  // empty: the one it serves on.
  std::string advertise_url;
};

// The federation controllers of this server: started once, or each time
// the server gains the lease and stopped as soon as it loses it. The
// admission rules read the controllers' caches while they run.
class ControllerHost {
 public:
  // What the admission rules read, set while the controllers run.
  struct Sources {
    std::shared_ptr<federation::ClusterNames> clusters;
    std::shared_ptr<federation::ApplicationWorkloads> workloads;
    std::shared_ptr<federation::FinalizedAtCreate> finalized;
    std::shared_ptr<federation::QuotaAdmission> quotas;
  };

  ControllerHost(client::Client& client, const federation::FederationOptions& opts, Sources sources)
      : client_(client), opts_(opts), sources_(std::move(sources)) {}
  ~ControllerHost() { Stop(); }

  // Start and Stop are called from one thread at a time (the elector's, or
  // main's). The controllers start outside the lock: /metrics takes it, and
  // the controllers' informers, syncing, go through the API server too.
  Status Start() {
    {
      MutexLock lock(mu_);
      if (running_) return Status::Ok();
    }
    FLOTILLA_ASSIGN_OR_RETURN(
        auto started, federation::FederationControllers::Start(client_, RealClock(), opts_));
    MutexLock lock(mu_);
    running_ = std::move(started);
    federation::FederationControllers* running = running_.get();
    sources_.clusters->Set(
        [running] { return running->context().cluster_objects().cache().Keys(); });
    sources_.finalized->Set(
        [running](std::string_view group, std::string_view plural, const json::object& obj) {
          return running->context().FinalizesAtCreate(group, plural, obj);
        });
    sources_.quotas->Set(
        [running](const json::object& obj) { return running->context().quotas().Admit(obj); });
    sources_.workloads->Set([running](const std::string& ns, const std::string& app) {
      std::vector<json::object> out;
      for (const auto& [resource, kind] : {std::pair{&federation::kDeployments, "Deployment"},
                                           std::pair{&federation::kReplicaSets, "ReplicaSet"}}) {
        runtime::Informer* informer = running->context().informers().Find(*resource);
        if (informer == nullptr) continue;
        for (const runtime::ObjectPtr& obj :
             informer->lister().ByLabel(api::kApplicationLabel, app)) {
          if (StringAt(*obj, "metadata.namespace") != ns) continue;
          json::object typed = *obj;
          typed["kind"] = kind;
          out.push_back(std::move(typed));
        }
      }
      return out;
    });
    return Status::Ok();
  }

  void Stop() {
    std::unique_ptr<federation::FederationControllers> stopping;
    {
      MutexLock lock(mu_);
      sources_.clusters->Set(nullptr);
      sources_.workloads->Set(nullptr);
      sources_.finalized->Set(nullptr);
      sources_.quotas->Set(nullptr);
      stopping = std::move(running_);
    }
    stopping.reset();
  }

  std::string RenderMetrics() {
    MutexLock lock(mu_);
    return running_ ? running_->RenderMetrics() : std::string();
  }
  federation::dns::FederationDns* dns() {
    MutexLock lock(mu_);
    return running_ ? running_->dns() : nullptr;
  }

 private:
  client::Client& client_;
  const federation::FederationOptions& opts_;
  Sources sources_;
  Mutex mu_;
  std::unique_ptr<federation::FederationControllers> running_ GUARDED_BY(mu_);
};

bool LeaderElect(const ServerFlags& flags) {
  if (flags.leader.elect == "auto") return flags.server.storage == "etcd";
  return flags.leader.elect == "true";
}

// kube-controller-manager's: the host name and a random id.
std::string LeaderIdentity() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::random_device rd;
  char id[17];
  std::snprintf(id, sizeof id, "%08x%08x", rd(), rd());
  return std::string(host) + "_" + id;
}

std::string LeaderMetrics(const std::string& lease, bool leading, const std::string& holder) {
  return "# HELP flotilla_leader_election_master_status 1 while this server runs the federation "
         "controllers, 0 otherwise.\n"
         "# TYPE flotilla_leader_election_master_status gauge\n"
         "flotilla_leader_election_master_status{name=\"" +
         lease + "\"} " + (leading ? "1" : "0") +
         "\n# HELP flotilla_leader_election_leader The holder of the lease as this server last "
         "saw it.\n"
         "# TYPE flotilla_leader_election_leader gauge\n"
         "flotilla_leader_election_leader{name=\"" +
         lease + "\",identity=\"" + holder + "\"} 1\n";
}

// Campaigns for the Lease; the controllers run while this server holds it.
// Failing to start them when leading ends the server (SIGTERM to itself),
// as a crashing kube-controller-manager would.
StatusOr<std::unique_ptr<runtime::LeaderElector>> StartElector(client::Client& client,
                                                               const ServerFlags& flags,
                                                               ControllerHost& host) {
  json::object ns{{"apiVersion", "v1"},
                  {"kind", "Namespace"},
                  {"metadata", json::object{{"name", flags.leader.lease_namespace}}}};
  auto created = client.Create(federation::kNamespaces, "", ns);
  if (!created.ok() && !created.status().Is(Reason::kAlreadyExists)) return created.status();
  runtime::LeaderElectionConfig config;
  config.lease_namespace = flags.leader.lease_namespace;
  config.lease_name = flags.leader.lease_name;
  config.identity = LeaderIdentity();
  config.lease_duration = flags.leader.lease_duration;
  config.renew_deadline = flags.leader.renew_deadline;
  config.retry_period = flags.leader.retry_period;
  runtime::LeaderCallbacks callbacks;
  const std::string identity = config.identity;
  callbacks.on_started_leading = [&host, identity] {
    spdlog::info("leading as {}: starting the federation controllers", identity);
    Status started = host.Start();
    if (!started.ok()) {
      spdlog::critical("starting the federation controllers: {}", started.ToString());
      kill(getpid(), SIGTERM);
    }
  };
  callbacks.on_stopped_leading = [&host, identity] {
    spdlog::warn("{} lost the lease: stopping the federation controllers", identity);
    host.Stop();
  };
  callbacks.on_new_leader = [](const std::string& leader) {
    spdlog::info("the federation controllers' leader is {}", leader.empty() ? "nobody" : leader);
  };
  FLOTILLA_ASSIGN_OR_RETURN(
      auto elector,
      runtime::LeaderElector::Create(client, RealClock(), std::move(config), std::move(callbacks)));
  spdlog::info("campaigning for lease {}/{} as {}", flags.leader.lease_namespace,
               flags.leader.lease_name, identity);
  elector->Start();
  return elector;
}

// The host of HOST:PORT, for the dig line ("127.0.0.1" for a wildcard).
std::string DnsHost(const std::string& address) {
  auto hp = ::flotilla::dns::SplitHostPort(address);
  if (!hp.ok() || hp->first.empty() || hp->first == "0.0.0.0") return "127.0.0.1";
  if (hp->first == "::") return "::1";
  return hp->first;
}

Status WriteKubeconfigs(const apiserver::Server& s, const std::string& dir) {
  const auto& pki = s.pki();
  FLOTILLA_RETURN_IF_ERROR(client::WriteKubeconfig(dir + "/kubeconfig", "flotilla", s.url(),
                                                   pki.ca_cert_pem, "flotilla-admin",
                                                   {pki.admin_token, "", ""}));
  return client::WriteKubeconfig(dir + "/readonly.kubeconfig", "flotilla", s.url(), pki.ca_cert_pem,
                                 "flotilla-viewer", {pki.readonly_token, "", ""});
}

int RunServer(ServerFlags& flags) {
  InitLogging(flags.log_level);
  flags.federation.parts.Mutable<federation::hpa::HpaOptions>().member_change_delay =
      flags.federation.workloads.member_change_delay;
  flags.federation.dns.ttl = static_cast<uint32_t>(
      std::chrono::duration_cast<std::chrono::seconds>(flags.dns_ttl).count());
  RaiseDescriptorLimit();
  BlockTerminationSignals();
  flags.server.etcd.compaction_interval =
      std::chrono::duration_cast<std::chrono::milliseconds>(flags.etcd_compaction_interval);
  api::Registry registry;
  api::RegisterFoundationKinds(registry);
  api::RegisterPolicyKinds(registry);
  // The members' pods (federation/cluster/member_pods.h): served from a
  // view in memory that MemberPods fills once the API is up.
  std::shared_ptr<federation::cluster::MemberPodsStore> pods_view;
  if (flags.member_pods) {
    api::RegisterMemberPodsView(registry);
    pods_view = std::make_shared<federation::cluster::MemberPodsStore>(RealClock());
    flags.server.side_prefix = federation::cluster::kMemberPodsPrefix;
    flags.server.side_store = pods_view;
  }
  auto cluster_names = std::make_shared<federation::ClusterNames>();
  auto workloads = std::make_shared<federation::ApplicationWorkloads>();
  auto finalized = std::make_shared<federation::FinalizedAtCreate>();
  auto quotas = std::make_shared<federation::QuotaAdmission>();
  federation::AddFederationAdmission(registry, federation::BuiltInKinds(),
                                     {.clusters = cluster_names,
                                      .workloads = workloads,
                                      .finalized = finalized,
                                      .quotas = quotas});
  flags.server.registry = &registry;
  flags.server.controller_groups = federation::ControllerGroups();
  flags.server.schemas = &api::SchemaSet::Builtin();
  // Agents' tunnels (federation/cluster/tunnel.h): taken by this server,
  // used by its controllers, proxy and pods view.
  // This server, to agents (federation/cluster/server_lease.h).
  flags.tunnels.server_id = federation::cluster::NewServerId();
  auto tunnels = std::make_shared<federation::cluster::Tunnels>(flags.tunnels);
  flags.server.tunnel = [tunnels](apiserver::Request& req, const std::string& name,
                                  const apiserver::UserInfo& user, apiserver::Responder& resp) {
    tunnels->Serve(req, name, user, resp);
  };
  // Agents registering with bootstrap tokens (federation/cluster/registration.h).
  auto registrar = std::make_shared<federation::cluster::AgentRegistrar>();
  flags.server.register_agent =
      [registrar](apiserver::Request& req, const std::string& name, const apiserver::UserInfo& user,
                  apiserver::Responder& resp) { registrar->Serve(req, name, user, resp); };
  auto& cluster_options =
      flags.federation.parts.Mutable<federation::cluster::ClusterControllerOptions>();
  cluster_options.tunnels = tunnels.get();
  // Started below, once its in-process client exists.
  auto proxy = std::make_shared<federation::cluster::ClusterProxy>(
      federation::cluster::ClusterProxyOptions{.tunnels = tunnels.get()});
  flags.server.proxy = [proxy](apiserver::Request& req, const apiserver::ProxyTarget& target,
                               const apiserver::UserInfo& user, apiserver::Responder& resp) {
    proxy->Serve(req, target, user, resp);
  };
  // `kubectl logs` and `kubectl delete` of a member's pod: the same request
  // to the member that runs it, through the proxy, as the caller.
  flags.server.pod_logs = [proxy](apiserver::Request& req, const json::object& pod,
                                  std::function<StatusOr<json::object>()>,
                                  const apiserver::UserInfo& user, apiserver::Responder& resp) {
    proxy->ServeForPod(req, pod, user, resp);
  };
  flags.server.pod_delete = [proxy](apiserver::Request& req, const json::object& pod,
                                    const apiserver::UserInfo& user, apiserver::Responder& resp) {
    proxy->ServeForPod(req, pod, user, resp);
  };
  // `kubectl exec`, `attach` and `port-forward` likewise.
  flags.server.pod_connect =
      [proxy](apiserver::Request& req, const std::string&, const json::object& pod,
              std::function<StatusOr<json::object>()>, const apiserver::UserInfo& user,
              apiserver::Responder& resp) { proxy->ServeForPod(req, pod, user, resp); };
  auto server = apiserver::Server::Start(flags.server);
  if (!server.ok()) {
    spdlog::error("starting the API server: {}", server.status().ToString());
    return 1;
  }
  const std::string& dir = flags.server.data_dir;
  Status written = WriteKubeconfigs(**server, dir);
  if (!written.ok()) {
    spdlog::error("writing kubeconfig: {}", written.ToString());
    return 1;
  }
  std::unique_ptr<client::Client> admin = client::NewInProcessClient(
      (*server)->api(), (*server)->pki().controller_token, api::kFederationFieldManager);
  proxy->Start(*admin);
  tunnels->Start(*admin);
  // Registrations write as their own identity: they create ClusterRoleBindings,
  // which the controllers may not.
  std::unique_ptr<client::Client> registrar_client = client::NewInProcessClient(
      (*server)->api(), (*server)->pki().registrar_token, api::kFederationFieldManager);
  registrar->Start(*registrar_client);
  federation::cluster::ServerLease server_lease(
      {.id = flags.tunnels.server_id,
       .url = flags.advertise_url.empty() ? (*server)->url() : flags.advertise_url});
  server_lease.Start(*admin);
  // The rechecks and the Lease use `admin`: they end before it does,
  // however this returns.
  struct StopTunnels {
    federation::cluster::Tunnels& t;
    federation::cluster::ServerLease& lease;
    ~StopTunnels() {
      t.Stop();
      lease.Stop();
    }
  } stop_tunnels{*tunnels, server_lease};
  std::optional<federation::cluster::MemberPods> member_pods;
  if (pods_view != nullptr) {
    member_pods.emplace(pods_view, RealClock(), cluster_options.member_http2, tunnels.get());
    if (Status started = member_pods->Start(*admin); !started.ok()) {
      spdlog::error("watching the members' pods: {}", started.ToString());
      return 1;
    }
  }
  ControllerHost host(*admin, flags.federation,
                      {.clusters = cluster_names,
                       .workloads = workloads,
                       .finalized = finalized,
                       .quotas = quotas});
  std::unique_ptr<runtime::LeaderElector> elector;
  if (LeaderElect(flags)) {
    auto started = StartElector(*admin, flags, host);
    if (!started.ok()) {
      spdlog::error("leader election: {}", started.status().ToString());
      return 1;
    }
    elector = std::move(started).value();
    runtime::LeaderElector* e = elector.get();
    (*server)->api().metrics().SetSource("leader", [e, &flags] {
      return LeaderMetrics(flags.leader.lease_name, e->IsLeading(), e->Leader());
    });
  } else if (Status started = host.Start(); !started.ok()) {
    spdlog::error("starting the federation controllers: {}", started.ToString());
    return 1;
  }
  (*server)->api().metrics().SetSource("federation", [&host] { return host.RenderMetrics(); });
  spdlog::info("Flotilla API server {} listening on {} (storage: {})", kVersion, (*server)->url(),
               flags.server.storage);
  // The DNS line first: `flotilla up` reads it once it sees the API's.
  if (federation::dns::FederationDns* dns = host.dns()) {
    const auto& d = flags.federation.dns;
    std::cout << "Flotilla DNS serving " << d.address << " (UDP and TCP port " << dns->port()
              << ")\n"
              << "  dig @" << DnsHost(d.address) << " -p " << dns->port() << " SVC.NAMESPACE."
              << d.names.federation << ".svc." << d.names.domain << "\n";
  }
  std::cout << "Flotilla API server ready at " << (*server)->url() << "\n"
            << "  export KUBECONFIG=" << dir << "/kubeconfig\n"
            << "  kubectl get namespaces\n"
            << std::flush;
  int sig = WaitForTerminationSignal();
  spdlog::info("received signal {}, shutting down", sig);
  (*server)->api().metrics().SetSource("federation", nullptr);
  (*server)->api().metrics().SetSource("leader", nullptr);
  if (elector) elector->Stop();  // stops the controllers if leading
  host.Stop();
  if (member_pods) member_pods->Stop();
  server_lease.Stop();  // deletes it while the API still serves
  (*server)->Stop();
  return 0;
}

// The federation controllers' settings (docs/federation.md).
void AddFederationFlags(CLI::App& cmd, ServerFlags& flags) {
  cmd.add_option("--controllers", flags.federation.controllers, federation::ControllersHelp())
      ->delimiter(',')
      ->check([](const std::string& c) { return federation::CheckControllers({c}); })
      ->capture_default_str()
      ->group("Federation");
  cmd.add_option("--member-pods", flags.member_pods,
                 "Serve every Ready member's pods, read-only, as the federation's v1 pods "
                 "(kubectl get pods, logs, describe): one more watch of each member per server")
      ->default_str("true")
      ->group("Federation");
  auto& cluster = flags.federation.parts.Mutable<federation::cluster::ClusterControllerOptions>();
  AddDurationOption(cmd, "--cluster-monitor-period", &cluster.monitor_period, "10s",
                    "How often each member cluster's health is probed")
      ->group("Federation");
  AddDurationOption(cmd, "--cluster-status-report-period", &cluster.status_report_period, "5m",
                    "How often a Cluster's status is written when no probe changed it (to move "
                    "lastProbeTime), and its Kubernetes version asked")
      ->group("Federation");
  cmd.add_option("--cluster-count-report-qps", cluster.count_report_qps,
                 "Writes per second, over all clusters, of a Cluster status whose only news is "
                 "its count of federated objects (each such write waits a minute after the "
                 "last anyway); 0: no limit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->group("Federation");
  cmd.add_option("--cluster-failure-threshold", cluster.failure_threshold,
                 "Consecutive failed probes before a Ready cluster becomes NotReady")
      ->check(CLI::PositiveNumber)
      ->capture_default_str()
      ->group("Federation");
  cmd.add_option("--cluster-success-threshold", cluster.success_threshold,
                 "Consecutive good probes before a NotReady cluster becomes Ready")
      ->check(CLI::PositiveNumber)
      ->capture_default_str()
      ->group("Federation");
  cmd.add_option("--member-qps", cluster.member_qps,
                 "Client-side limit of the federation's requests per second to each member")
      ->capture_default_str()
      ->group("Federation");
  cmd.add_option("--member-http2", cluster.member_http2,
                 "Speak HTTP/2 to members that offer it: the controllers' requests and watches "
                 "of each member share one connection, the pods view's another; false: "
                 "HTTP/1.1, a connection per watch")
      ->default_str("true")
      ->group("Federation");
  AddDurationOption(cmd, "--tunnel-keepalive", &flags.tunnels.keepalive, "10s",
                    "How often the federation PINGs each agent's tunnel; a PING unanswered "
                    "until the next closes the tunnel")
      ->group("Federation");
  AddDurationOption(cmd, "--agent-claim-duration", &flags.tunnels.claim_duration, "40s",
                    "How long an agent's claim on its cluster lives unrenewed: another agent "
                    "for the cluster is refused until then (the servers holding a tunnel of "
                    "the claimant renew it every quarter of this)")
      ->group("Federation");
  AddDurationOption(cmd, "--tunnel-recheck", &flags.tunnels.recheck, "30s",
                    "How often the token each agent's tunnel was opened with is reviewed "
                    "again; a token revoked or expired since closes the tunnel")
      ->group("Federation");
  cmd.add_option("--advertise-url", flags.advertise_url,
                 "The https:// URL agents reach this server by, which its Lease in "
                 "kube-system names (with several servers an agent keeps a tunnel to each); "
                 "default: the address and port it serves on")
      ->check([](const std::string& url) -> std::string {
        if (!url.starts_with("https://") || url.size() == std::string("https://").size()) {
          return "--advertise-url must be an https:// URL, not \"" + url + "\"";
        }
        return "";
      })
      ->group("Federation");
  cmd.add_option("--member-burst", cluster.member_burst,
                 "Burst above --member-qps of the federation's requests to each member")
      ->check(CLI::PositiveNumber)
      ->capture_default_str()
      ->group("Federation");
  auto& w = flags.federation.workloads;
  AddDurationOption(cmd, "--unschedulable-threshold", &w.unschedulable_threshold, "1m",
                    "How long pods may wait to be scheduled before their cluster counts as full "
                    "for their federated ReplicaSet or Deployment")
      ->group("Federation");
  AddDurationOption(cmd, "--capacity-probe-interval", &w.capacity_probe_interval, "5m",
                    "How long after a cluster was found full for a federated ReplicaSet or "
                    "Deployment a couple of its replicas are tried there again (doubling after "
                    "each try that finds no room, up to an hour)")
      ->group("Federation");
  AddDurationOption(cmd, "--recheck-delay,--replicaset-recheck-delay", &w.recheck_delay, "1m",
                    "When a federated ReplicaSet or Deployment not in its desired state is "
                    "checked again, and a local copy a member refused is created again")
      ->group("Federation");
  AddDurationOption(cmd, "--migration-timeout", &flags.federation.applications.migration_timeout,
                    "10m",
                    "How long a coupled application's move to another cluster may take before "
                    "it is rolled back")
      ->group("Federation");
  auto& hpa = flags.federation.parts.Mutable<federation::hpa::HpaOptions>();
  AddDurationOption(cmd, "--hpa-freeze-window", &hpa.freeze_window, "30s",
                    "How long a member cluster whose share of a federated HPA's minReplicas or "
                    "maxReplicas changed is left alone before its share moves again")
      ->group("Federation");
  cmd.add_option("--hpa-min-transfer-load", hpa.min_transfer_load,
                 "A cluster whose local HPA sits at its minReplicas with a load under this "
                 "fraction of its target gives minReplicas to busier clusters")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str()
      ->group("Federation");
  auto& dns = flags.federation.dns;
  cmd.add_option("--dns-address", dns.address,
                 "HOST:PORT on which the federation's DNS server answers over UDP and TCP "
                 "(port 0 picks one); empty: no DNS")
      ->group("DNS");
  cmd.add_option("--dns-domain", dns.names.domain,
                 "The DNS suffix the federation is authoritative for")
      ->capture_default_str()
      ->group("DNS");
  cmd.add_option("--federation-name", dns.names.federation,
                 "The federation's name in DNS names: SVC.NAMESPACE.NAME.svc.DOMAIN")
      ->capture_default_str()
      ->group("DNS");
  AddDurationOption(cmd, "--dns-ttl", &flags.dns_ttl, std::to_string(dns::kDefaultTtlSeconds) + "s",
                    "The TTL of the DNS answers")
      ->group("DNS");
  cmd.add_option("--placement-move-qps", flags.federation.context.move_qps,
                 "Objects per second (beyond --placement-move-burst) that may begin to leave a "
                 "ready cluster their placement no longer admits, after a change of a policy, "
                 "a cluster's labels or taints, or an object's labels; 0: no limit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->group("Federation");
  cmd.add_option("--placement-move-burst", flags.federation.context.move_burst,
                 "Objects that may begin such a move at once before --placement-move-qps paces "
                 "them")
      ->check(CLI::PositiveNumber)
      ->capture_default_str()
      ->group("Federation");
  AddDurationOption(cmd, "--member-change-delay", &w.member_change_delay, "2s",
                    "How long after a local workload or pod changes its federated workload is "
                    "checked",
                    /*allow_zero=*/true)
      ->group("Federation");
}

}  // namespace

void AddServerCommand(CLI::App& app) {
  auto flags = std::make_shared<ServerFlags>();
  auto* cmd = app.add_subcommand("server", "Run the federation API server");
  cmd->add_option("--data-dir", flags->server.data_dir,
                  "Directory for state, certificates and kubeconfigs")
      ->capture_default_str()
      ->group("Storage");
  cmd->add_option("--storage", flags->server.storage,
                  "Storage backend: sqlite (one server), etcd (several servers) or memory")
      ->check(CLI::IsMember({"sqlite", "memory", "etcd"}))
      ->capture_default_str()
      ->group("Storage");
  cmd->add_option("--etcd-servers", flags->server.etcd.endpoints,
                  "With --storage etcd: the etcd members, http(s)://HOST:PORT,...")
      ->delimiter(',')
      ->group("Storage");
  cmd->add_option("--etcd-cafile", flags->server.etcd.ca_file,
                  "CA certificate that signed etcd's serving certificates")
      ->group("Storage");
  cmd->add_option("--etcd-certfile", flags->server.etcd.cert_file, "Client certificate for etcd")
      ->group("Storage");
  cmd->add_option("--etcd-keyfile", flags->server.etcd.key_file, "Client key for etcd")
      ->group("Storage");
  cmd->add_option("--etcd-prefix", flags->server.etcd.prefix,
                  "Every key is stored under this prefix in etcd")
      ->capture_default_str()
      ->group("Storage");
  AddDurationOption(*cmd, "--etcd-compaction-interval", &flags->etcd_compaction_interval, "5m",
                    "How often this server compacts etcd's history (0: never)",
                    /*allow_zero=*/true)
      ->group("Storage");
  cmd->add_option("--leader-elect", flags->leader.elect,
                  "Run the federation controllers only while holding a Lease, so that several "
                  "servers can share one etcd: true, false, or auto (true with --storage etcd)")
      ->check(CLI::IsMember({"true", "false", "auto"}))
      ->capture_default_str()
      ->group("Leader election");
  AddDurationOption(*cmd, "--leader-elect-lease-duration", &flags->leader.lease_duration, "15s",
                    "How long a candidate waits after the last observed renewal before taking "
                    "the lease")
      ->group("Leader election");
  AddDurationOption(*cmd, "--leader-elect-renew-deadline", &flags->leader.renew_deadline, "10s",
                    "How long the leader keeps trying to renew before it stops leading")
      ->group("Leader election");
  AddDurationOption(*cmd, "--leader-elect-retry-period", &flags->leader.retry_period, "2s",
                    "How often candidates try to acquire and the leader renews")
      ->group("Leader election");
  cmd->add_option("--leader-elect-resource-namespace", flags->leader.lease_namespace,
                  "Namespace of the Lease")
      ->capture_default_str()
      ->group("Leader election");
  cmd->add_option("--leader-elect-resource-name", flags->leader.lease_name, "Name of the Lease")
      ->capture_default_str()
      ->group("Leader election");
  AddDurationOption(*cmd, "--event-ttl", &flags->server.event_ttl, "1h",
                    "How long an Event is kept after its last write (kube-apiserver's "
                    "--event-ttl; 0: for ever)",
                    /*allow_zero=*/true)
      ->group("Storage");
  cmd->add_option("--watch-history", flags->server.store_options.history_events,
                  "Events kept in memory for watch resumption; older resourceVersions get 410 Gone")
      ->check(CLI::PositiveNumber)
      ->capture_default_str()
      ->group("Storage");
  AddDurationOption(*cmd, "--watch-history-window", &flags->server.store_options.history_window,
                    "5m",
                    "Nor any watch events older than this, with --storage sqlite or memory (etcd's "
                    "history is bounded by --etcd-compaction-interval); 0: no time bound",
                    /*allow_zero=*/true)
      ->group("Storage");
  cmd->add_option("--max-requests-inflight", flags->server.inflight.max_requests,
                  "Read-only requests served at once (watches not counted); past it, 429 with "
                  "Retry-After. 0: no limit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->group("Serving");
  cmd->add_option("--http2", flags->server.http2,
                  "Offer HTTP/2 by ALPN beside HTTP/1.1, as kube-apiserver does (kubectl and "
                  "the federation's clients take it): every request and watch of a client on "
                  "one connection")
      ->default_str("true")
      ->group("Serving");
  cmd->add_option("--http2-max-streams-per-connection", flags->server.http2_max_streams,
                  "Streams (requests and watches) one HTTP/2 connection may have open at once; a "
                  "client opens another connection past it")
      ->check(CLI::PositiveNumber)
      ->capture_default_str()
      ->group("Serving");
  cmd->add_option("--max-mutating-requests-inflight", flags->server.inflight.max_mutating_requests,
                  "Mutating requests served at once; past it, 429 with Retry-After. 0: no limit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->group("Serving");
  cmd->add_option("--audit-log-path", flags->server.audit_log.path,
                  "Write audit.k8s.io/v1 events, one JSON line each, to this file (- for "
                  "standard output); needs --audit-policy-file")
      ->group("Auditing");
  cmd->add_option("--audit-policy-file", flags->server.audit_policy_file,
                  "The audit.k8s.io/v1 Policy (YAML or JSON) deciding what is logged at which "
                  "level; docs/audit-policy.yaml is a starting point")
      ->check(CLI::ExistingFile)
      ->group("Auditing");
  cmd->add_option("--audit-log-maxsize", flags->server.audit_log.max_size_mb,
                  "Rotate the audit log when it would grow past this many MiB. 0: never")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->group("Auditing");
  cmd->add_option("--audit-log-maxbackup", flags->server.audit_log.max_backups,
                  "Rotated audit logs to keep. 0: all")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->group("Auditing");
  cmd->add_option("--bind-address", flags->server.bind_address, "Address to listen on")
      ->capture_default_str()
      ->group("Serving");
  cmd->add_option("--secure-port", flags->server.port, "HTTPS port (0 picks a free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str()
      ->group("Serving");
  cmd->add_option("--tls-san", flags->server.extra_sans,
                  "Extra DNS names or IPs for the serving certificate")
      ->group("Serving");
  AddFederationFlags(*cmd, *flags);
  cmd->add_option("--log-level", flags->log_level, "trace, debug, info, warn or error")
      ->capture_default_str()
      ->group("Logging");
  cmd->callback([flags] { ExitProcess(RunServer(*flags)); });
}

}  // namespace flotilla::cli
