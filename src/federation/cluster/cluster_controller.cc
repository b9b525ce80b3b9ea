// The cluster controller (cluster_controller.h).
#include "federation/cluster/cluster_controller.h"

#include <spdlog/spdlog.h>

#include <sstream>

#include "api/federated.h"
#include "api/views.h"
#include "base/due_time.h"
#include "base/mutex.h"
#include "client/rest_client.h"
#include "federation/cluster/cluster_status.h"
#include "federation/cluster/join.h"
#include "federation/cluster/tunnel.h"
#include "federation/common/federated_kind.h"
#include "federation/common/member_copy.h"

namespace flotilla::federation::cluster {

// What one probe saw.
struct ClusterController::Observation {
  bool reachable = false;
  bool ok = false;
  std::string message;
  double seconds = 0;
  std::optional<std::string> version;
  std::optional<Topology> topology;  // null: not known this time
  // From the federation's caches of the member; null: not synced yet.
  std::optional<ResourceSummary> resources;
  std::optional<int64_t> federated_objects;
  // The resources read in the member that it does not serve; null: its
  // caches are not synced yet.
  std::optional<std::vector<std::string>> unsupported;
};

namespace {

bool SameResources(const ResourceSummary& a, const ResourceSummary& b) {
  auto same = [](const api::Resources& x, const api::Resources& y) {
    return x.milli_cpu == y.milli_cpu && x.memory == y.memory &&
           x.ephemeral_storage == y.ephemeral_storage && x.pods == y.pods;
  };
  return a.nodes == b.nodes && a.ready_nodes == b.ready_nodes &&
         same(a.allocatable, b.allocatable) && same(a.allocated, b.allocated);
}

// Whether `seen` (a probe's observation) adds nothing to `known` that would
// change the status written from it: what a probe did not learn this time
// (a null field) leaves the status as it is.
template <typename T, typename Same>
bool Adds(const std::optional<T>& seen, const std::optional<T>& known, Same same) {
  return seen && (!known || !same(*seen, *known));
}

std::string Trim(std::string s, size_t max) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.size() > max ? s.substr(0, max) + "..." : s;
}

}  // namespace

// The controller's state for one cluster. Only the reconcile of its key
// touches it (the queue never runs one key twice at once), except `health`,
// which Health() and RenderMetrics() read from other threads.
struct ClusterController::Member {
  std::string secret_version;  // "uid/resourceVersion" the clients were built from
  std::string secret_error;    // why there are no clients
  std::unique_ptr<MemberProber> prober;
  std::shared_ptr<client::Client> client;
  std::optional<bool> healthy;  // the reported health, with hysteresis
  int failures_in_row = 0;
  int successes_in_row = 0;
  TimePoint next_probe{};
  std::optional<Observation> unwritten;  // a probe whose status is not written yet
  TimePoint probed_at;
  std::optional<TimePoint> reported_at;  // the probe time last written
  std::optional<TimePoint> version_at;   // when GET /version was last asked
  // What the status the federation's cache holds was judged or written
  // from, at the Cluster's resourceVersion then: a probe that adds nothing
  // to it, on the same object, needs no status built to compare
  // (WriteStatus). Its null fields are those no probe has learnt.
  struct Judged {
    std::string resource_version;
    bool healthy = false;
    Observation obs;
  };
  std::optional<Judged> judged;
  mutable Mutex mu;
  ClusterHealth health GUARDED_BY(mu);
};

ClusterController::ClusterController(FederationContext& ctx, ClusterControllerOptions options)
    : ctx_(ctx),
      fed_(ctx.fed()),
      clock_(ctx.clock()),
      io_clock_(options.io_clock != nullptr ? *options.io_clock : RealClock()),
      options_(options),
      registry_(ctx.clusters()),
      clusters_(ctx.cluster_objects()),
      secrets_(fed_, kSecrets, clock_, runtime::InformerOptions{.ns = kSystemNamespace}),
      count_writes_(options.count_report_qps,
                    std::max(1, static_cast<int>(options.count_report_qps)), clock_) {
  runtime::ControllerManager& manager = ctx.manager();
  controller_ = &manager.AddController("cluster", std::max(1, options_.workers),
                                       [this](const std::string& key) { return Reconcile(key); });
  clusters_.AddEventHandler(controller_->EnqueueHandler());
  // The resource summary reads these caches (shared with the workload
  // controllers); their events need no handling here.
  for (const client::ResourceRef& r : {kNodes, kPods}) {
    ctx.members().AddHandler(r, [](const std::string&) { return runtime::EventHandler{}; });
  }
  secrets_.AddEventHandler(EnqueueClustersOfSecret(clusters_, controller_->queue()));
  manager.AddInformer(&secrets_);
  ctx.metrics().SetCollector("clusters", [this](metrics::TextWriter& w) { WriteMetrics(w); });
}

ClusterController::~ClusterController() {
  ctx_.metrics().SetCollector("clusters", nullptr);
  secrets_.Stop();
}

std::shared_ptr<ClusterController::Member> ClusterController::MemberFor(
    const std::string& name, const json::object& cluster) {
  MutexLock lock(mu_);
  auto& m = members_[name];
  if (m) return m;
  m = std::make_shared<Member>();
  // A restarted controller carries on from the health the status records.
  std::string_view ready = api::ClusterView(cluster).condition_status("Ready");
  if (ready == "True") m->healthy = true;
  if (ready == "False") m->healthy = false;
  return m;
}

std::optional<ClusterHealth> ClusterController::Health(const std::string& name) const {
  std::shared_ptr<Member> m;
  {
    MutexLock lock(mu_);
    auto it = members_.find(name);
    if (it == members_.end()) return std::nullopt;
    m = it->second;
  }
  MutexLock lock(m->mu);
  return m->health;
}

StatusOr<runtime::Result> ClusterController::Reconcile(const std::string& name) {
  runtime::ObjectPtr cluster = clusters_.lister().Get("", name);
  if (!cluster) {
    Forget(name, /*close_tunnel=*/true);
    return runtime::Result{};
  }
  if (!StringViewAt(*cluster, "metadata.deletionTimestamp").empty()) return Unjoining(*cluster);
  std::shared_ptr<Member> m = MemberFor(name, *cluster);
  TimePoint now = clock_.Now();
  if (RefreshClients(*m, *cluster)) m->next_probe = now;
  // Our own status writes come back as updates: probe only when it is due.
  if (now >= m->next_probe) {
    // On a whole second: a member process's clusters are probed together.
    m->next_probe = DueOnWholeSecond(now, options_.monitor_period);
    Probe(name, *m, now);
  }
  FLOTILLA_RETURN_IF_ERROR(WriteStatus(*cluster, *m));
  return runtime::Result{.requeue_after = m->next_probe - now};
}

void ClusterController::Probe(const std::string& name, Member& m, TimePoint now) {
  Observation obs = Observe(name, m, now);
  bool was = m.healthy.value_or(!obs.ok);
  bool healthy = Judge(m, obs);
  if (was != healthy) {
    spdlog::info("cluster {} is {}: {}", name, healthy ? "Ready" : "NotReady", obs.message);
  }
  {
    MutexLock lock(m.mu);
    m.health.ready = healthy;
    m.health.reachable = obs.reachable;
    m.health.probe_seconds = obs.seconds;
    ++m.health.probes;
    if (!obs.ok) ++m.health.failures;
  }
  {
    if (healthy && m.client) registry_.SetReady(name, m.client);
    if (!healthy) registry_.SetNotReady(name);
  }
  m.unwritten = std::move(obs);
  m.probed_at = now;
}

ClusterController::Pending ClusterController::WhatIsNew(const json::object& cached,
                                                        const Member& m) const {
  if (!m.judged || !m.reported_at || m.judged->healthy != *m.healthy ||
      m.probed_at - *m.reported_at >= options_.status_report_period ||
      api::ObjectView(cached).resource_version() != m.judged->resource_version) {
    return Pending::kMore;
  }
  const Observation& seen = *m.unwritten;
  const Observation& known = m.judged->obs;
  auto equal = [](const auto& a, const auto& b) { return a == b; };
  if (seen.reachable != known.reachable || seen.ok != known.ok || seen.message != known.message ||
      Adds(seen.version, known.version, equal) || Adds(seen.topology, known.topology, equal) ||
      Adds(seen.resources, known.resources, SameResources) ||
      Adds(seen.unsupported, known.unsupported, equal)) {
    return Pending::kMore;
  }
  if (!Adds(seen.federated_objects, known.federated_objects, equal)) return Pending::kNothing;
  // The first count is written at once. A new count alone, where the status
  // has one, waits for its period (WriteStatus would find the status the
  // same but for it): while a fan-out runs, every probe of every member
  // brings one. After its period it waits for a token, so that the counts
  // of thousands of members are not written in one probe round.
  if (!known.federated_objects) return Pending::kMore;
  if (m.probed_at - *m.reported_at < options_.count_report_period) return Pending::kNothing;
  return Pending::kCountAlone;
}

void ClusterController::RecordJudged(Member& m, std::string_view basis,
                                     std::string resource_version) {
  Observation obs = *m.unwritten;
  if (m.judged && m.judged->resource_version == basis) {
    // What this probe did not learn, the status it was judged against
    // still says. (Against another object, what it says is not known.)
    const Observation& known = m.judged->obs;
    if (!obs.version) obs.version = known.version;
    if (!obs.topology) obs.topology = known.topology;
    if (!obs.resources) obs.resources = known.resources;
    if (!obs.federated_objects) obs.federated_objects = known.federated_objects;
    if (!obs.unsupported) obs.unsupported = known.unsupported;
  }
  m.judged = Member::Judged{std::move(resource_version), *m.healthy, std::move(obs)};
}

Status ClusterController::WriteStatus(const json::object& cached, Member& m) {
  if (!m.unwritten) return Status::Ok();
  // The common case at every probe of a steady member: nothing new.
  Pending pending = WhatIsNew(cached, m);
  if (pending == Pending::kNothing || (pending == Pending::kCountAlone && !CountWriteAllowed())) {
    m.unwritten.reset();
    return Status::Ok();
  }
  // As the federation's controllers see it (the shared cache), also when
  // the write goes to the latest object.
  bool cordoned = api::ClusterView(cached).cordoned();
  json::object desired = WithStatus(cached, *m.unwritten, *m.healthy, m.probed_at, cordoned);
  {
    MutexLock lock(m.mu);
    ++m.health.statuses_built;
  }
  if (m.reported_at) {
    Duration since = m.probed_at - *m.reported_at;
    const json::value* now = cached.if_contains("status");
    const json::value* want = desired.if_contains("status");
    if (since < options_.status_report_period && SameButProbeTimes(now, want)) {
      std::string version(api::ObjectView(cached).resource_version());
      RecordJudged(m, version, version);
      m.unwritten.reset();
      return Status::Ok();
    }
    // A new count alone, found here because the status was not the one
    // judged (someone else wrote the Cluster): its period, then a token, as
    // WhatIsNew's. Not judged: the status lacks this count.
    if (since < options_.status_report_period && pending == Pending::kMore &&
        SameButProbeTimesAndCount(now, want) &&
        (since < options_.count_report_period || !CountWriteAllowed())) {
      m.unwritten.reset();
      return Status::Ok();
    }
  }
  std::string basis(api::ObjectView(cached).resource_version());
  auto written = fed_.UpdateStatus(kClusters, "", desired);
  // The cache may not have our last write yet: once more on the latest.
  if (!written.ok() && written.status().Is(Reason::kConflict)) {
    auto latest = fed_.Get(kClusters, "", std::string(api::ObjectView(cached).name()));
    if (!latest.ok()) {
      m.judged.reset();
      return latest.status();
    }
    basis = std::string(api::ObjectView(*latest).resource_version());
    written = fed_.UpdateStatus(
        kClusters, "", WithStatus(*latest, *m.unwritten, *m.healthy, m.probed_at, cordoned));
  }
  if (written.ok()) {
    RecordJudged(m, basis, std::string(api::ObjectView(*written).resource_version()));
  } else {
    m.judged.reset();
  }
  // Anything else is retried with backoff, without probing again.
  if (!written.ok() && !written.status().Is(Reason::kNotFound)) return written.status();
  m.unwritten.reset();
  m.reported_at = m.probed_at;
  return Status::Ok();
}

void ClusterController::Forget(const std::string& name, bool close_tunnel) {
  {
    MutexLock lock(mu_);
    members_.erase(name);
  }
  registry_.Remove(name);
  if (close_tunnel && options_.tunnels != nullptr) options_.tunnels->Close(name);
}

StatusOr<runtime::Result> ClusterController::Unjoining(const json::object& cluster) {
  const std::string name(api::ObjectView(cluster).name());
  // The controllers let go of it; its agent's tunnel stays for the cascade
  // (join.h) until the Cluster is gone.
  Forget(name, /*close_tunnel=*/false);
  json::object out = cluster;
  json::object& status = EnsureObject(out, "status");
  json::array old;
  if (const json::array* c = GetArray(status, "conditions")) old = *c;
  for (const json::value& c : old) {
    if (c.is_object() && GetString(c.get_object(), "type") == "Ready" &&
        GetString(c.get_object(), "reason") == kUnjoiningReason) {
      return runtime::Result{};
    }
  }
  json::array conditions{MakeCondition(&old, "Ready", "False", std::string(kUnjoiningReason),
                                       "the cluster is being unjoined: the federation places "
                                       "nothing in it and reads nothing from it",
                                       clock_.Now())};
  for (const json::value& c : old) {
    if (!c.is_object() || GetString(c.get_object(), "type") != "Ready") conditions.push_back(c);
  }
  status["conditions"] = std::move(conditions);
  spdlog::info("cluster {} is being unjoined", name);
  auto written = fed_.UpdateStatus(kClusters, "", out);
  if (!written.ok() && !written.status().Is(Reason::kNotFound)) return written.status();
  return runtime::Result{};
}

bool ClusterController::RefreshClients(Member& m, const json::object& cluster) {
  // An agent-connected cluster's client goes over its tunnel, whichever
  // connection the agent has open; a dialled one's follows its Secret.
  bool via_agent = api::ClusterView(cluster).via_agent();
  StatusOr<runtime::ObjectPtr> secret = runtime::ObjectPtr();
  std::string version(kAgentCredentials);
  if (!via_agent) {
    secret = SecretOf(cluster, secrets_, fed_);
    version = secret.ok() ? SecretVersion(**secret) : "error: " + secret.status().message();
  }
  if (version == m.secret_version) return false;
  m.secret_version = version;
  m.version_at.reset();
  m.prober.reset();
  m.client.reset();
  Status built = secret.status();
  if (built.ok()) {
    StatusOr<client::RestConfig> config =
        Status::Unavailable("this federation server takes no agents' tunnels");
    if (!via_agent) {
      config = RestConfigFromSecret(**secret);
    } else if (options_.tunnels != nullptr) {
      config = AgentRestConfig(cluster,
                               options_.tunnels->For(std::string(api::ObjectView(cluster).name())));
    }
    built = config.status();
    if (config.ok()) {
      client::RestOptions opts{.qps = options_.member_qps,
                               .burst = options_.member_burst,
                               .timeout = options_.probe_timeout,
                               .max_retries = 0};
      opts.user_agent = api::kFederationFieldManager;
      opts.http2 = options_.member_http2;
      opts.clock = &io_clock_;
      // One transport: the probes keep a connection open for the writes.
      auto transport = client::NewRestTransport(*config, opts);
      built = transport.status();
      if (built.ok()) {
        m.prober = std::make_unique<MemberProber>(*transport);
        m.client = client::NewTransportClient(*transport);
      }
    }
  }
  m.secret_error = built.ok()  ? ""
                   : via_agent ? "the cluster's tunnel: " + built.message()
                               : "the cluster's Secret: " + built.message();
  MutexLock lock(m.mu);
  if (built.ok()) ++m.health.client_generation;
  return true;
}

ClusterController::Observation ClusterController::Observe(const std::string& name, Member& m,
                                                          TimePoint now) {
  Observation obs;
  if (!m.prober) {
    obs.message = m.secret_error;
    return obs;
  }
  TimePoint start = io_clock_.Now();
  std::string path = "/readyz";
  auto r = m.prober->Get(path);
  if (r.ok() && r->code == 404) r = m.prober->Get(path = "/healthz");
  obs.seconds = std::chrono::duration<double>(io_clock_.Now() - start).count();
  if (!r.ok()) {
    obs.message = r.status().message();
    return obs;
  }
  obs.reachable = true;
  obs.ok = r->code == 200;
  obs.message =
      obs.ok ? path + " responded with ok"
             : path + " responded with " + std::to_string(r->code) + ": " + Trim(r->body, 256);
  if (!obs.ok) return obs;
  if (!m.version_at || now - *m.version_at >= options_.status_report_period) {
    auto version = m.prober->Get("/version");
    if (version.ok() && version->code == 200) {
      auto doc = ParseJsonObject(version->body);
      if (doc.ok()) obs.version = std::string(GetString(*doc, "gitVersion").value_or(""));
      m.version_at = now;
    }
  }
  // The federation's caches of the member, unless they still read through
  // clients the last Secret change replaced.
  const bool current = m.client != nullptr && ctx_.members().ClientOf(name) == m.client;
  std::shared_ptr<runtime::Informer> cached =
      current ? ctx_.members().Get(name, kNodes.resource) : nullptr;
  if (cached && cached->HasSynced()) {
    obs.topology = TopologyOfNodes(cached->cache().List());
  } else {
    auto nodes = m.client->List(kNodes, "", {});
    if (nodes.ok()) {
      std::vector<runtime::ObjectPtr> listed;
      for (json::object& n : nodes->items) {
        listed.push_back(std::make_shared<const json::object>(std::move(n)));
      }
      obs.topology = TopologyOfNodes(listed);
    }
    // A member that serves no nodes (another federation) has no zones.
    if (!nodes.ok() && nodes.status().Is(Reason::kNotFound)) obs.topology = Topology{};
  }
  if (current) ObserveCaches(name, obs);
  return obs;
}

void ClusterController::ObserveCaches(const std::string& name, Observation& obs) const {
  auto informers = ctx_.members().Of(name);
  bool synced = !informers.empty();
  for (const auto& [resource, informer] : informers) {
    synced = synced && (informer->HasSynced() || !informer->Served());
  }
  if (synced) obs.unsupported = ctx_.members().NotServed(name);
  auto nodes = informers.find(kNodes.resource), pods = informers.find(kPods.resource);
  if (!synced || nodes == informers.end() || pods == informers.end()) return;
  obs.resources = SummarizeResources(nodes->second->cache().List(), pods->second->cache().List());
  int64_t managed = 0;
  // IsManaged's label, counted in each cache's label index: a probe need
  // not list every object the member has.
  const std::string managed_label =
      std::string(api::kManagedByLabel) + "=" + std::string(api::kManagedByValue);
  for (const auto& [resource, informer] : informers) {
    managed +=
        static_cast<int64_t>(informer->cache().CountByIndex(runtime::kLabelIndex, managed_label));
  }
  obs.federated_objects = managed;
}

bool ClusterController::Judge(Member& m, const Observation& obs) const {
  m.failures_in_row = obs.ok ? 0 : m.failures_in_row + 1;
  m.successes_in_row = obs.ok ? m.successes_in_row + 1 : 0;
  if (!m.healthy) {
    m.healthy = obs.ok;
  } else if (*m.healthy && m.failures_in_row >= options_.failure_threshold) {
    m.healthy = false;
  } else if (!*m.healthy && m.successes_in_row >= options_.success_threshold) {
    m.healthy = true;
  }
  return *m.healthy;
}

json::object ClusterController::WithStatus(const json::object& cluster, const Observation& obs,
                                           bool healthy, TimePoint now, bool cordoned) const {
  json::object out = cluster;
  const bool draining = cordoned && api::ClusterView(cluster).draining();
  json::object& status = EnsureObject(out, "status");
  json::array old;
  if (const json::array* c = GetArray(status, "conditions")) old = *c;
  // While the probes disagree with the reported health (below a threshold)
  // the Ready message stays the one that explains the reported state.
  std::string ready_message = obs.message;
  for (const json::value& c : old) {
    if (obs.ok != healthy && c.is_object() &&
        GetString(c.get_object(), "type").value_or("") == "Ready") {
      ready_message = std::string(GetString(c.get_object(), "message").value_or(obs.message));
    }
  }
  bool reachable = healthy || obs.reachable;
  json::array conditions;
  conditions.push_back(MakeCondition(&old, "Ready", healthy ? "True" : "False",
                                     healthy ? "ClusterReady" : "ClusterNotReady", ready_message,
                                     now));
  conditions.push_back(MakeCondition(&old, "Offline", reachable ? "False" : "True",
                                     reachable ? "ClusterReachable" : "ClusterNotReachable",
                                     reachable ? "cluster is reachable" : obs.message, now));
  conditions.push_back(MakeCondition(
      &old, "Schedulable", cordoned ? "False" : "True",
      draining   ? "ClusterDraining"
      : cordoned ? "ClusterCordoned"
                 : "ClusterSchedulable",
      draining   ? "cluster is draining: nothing new is placed here and what can move leaves"
      : cordoned ? "cluster is cordoned: nothing new is placed here"
                 : "new placements may come here",
      now));
  for (const json::value& c : old) {
    std::string type =
        c.is_object() ? std::string(GetString(c.get_object(), "type").value_or("")) : "";
    if (type != "Ready" && type != "Offline" && type != "Schedulable") conditions.push_back(c);
  }
  status["conditions"] = std::move(conditions);
  if (obs.version && !obs.version->empty()) status["kubernetesVersion"] = *obs.version;
  if (obs.resources) SetResourceSummary(status, *obs.resources);
  if (obs.federated_objects) status["federatedObjects"] = *obs.federated_objects;
  if (obs.unsupported && obs.unsupported->empty()) status.erase("unsupportedKinds");
  if (obs.unsupported && !obs.unsupported->empty()) {
    status["unsupportedKinds"] = json::array(obs.unsupported->begin(), obs.unsupported->end());
  }
  if (obs.topology) {
    json::array zones(obs.topology->zones.begin(), obs.topology->zones.end());
    if (zones.empty())
      status.erase("zones");
    else
      status["zones"] = std::move(zones);
    if (obs.topology->region.empty())
      status.erase("region");
    else
      status["region"] = obs.topology->region;
  }
  return out;
}

void ClusterController::WriteMetrics(metrics::TextWriter& w) const {
  std::map<std::string, ClusterHealth> health;
  {
    MutexLock lock(mu_);
    for (const auto& [name, m] : members_) {
      MutexLock member_lock(m->mu);
      health[name] = m->health;
    }
  }
  auto family = [&](const char* name, const char* type, const char* help, auto value) {
    w.Family(name, type, help);
    for (const auto& [cluster, h] : health) {
      w.Sample(name, {{"cluster", cluster}}, static_cast<double>(value(h)));
    }
  };
  family("flotilla_cluster_ready", "gauge", "Whether the member cluster is Ready (1) or not (0).",
         [](const ClusterHealth& h) { return h.ready ? 1 : 0; });
  family("flotilla_cluster_probe_duration_seconds", "gauge",
         "Latency of the last health probe of the member cluster.",
         [](const ClusterHealth& h) { return h.probe_seconds; });
  family("flotilla_cluster_probes_total", "counter", "Health probes of the member cluster.",
         [](const ClusterHealth& h) { return h.probes; });
  family("flotilla_cluster_probe_failures_total", "counter",
         "Failed health probes of the member cluster.",
         [](const ClusterHealth& h) { return h.failures; });
}

}  // namespace flotilla::federation::cluster

namespace flotilla::federation {

void RegisterCluster(KindRegistry& kinds) {
  kinds.Add({.controller = "cluster",
             .help = "member clusters' health, capacity and zones, probed into each Cluster's "
                     "status",
             .build = [](const KindEnv& env) {
               return std::make_shared<cluster::ClusterController>(
                   env.ctx, env.options.Get<cluster::ClusterControllerOptions>());
             }});
}

}  // namespace flotilla::federation
