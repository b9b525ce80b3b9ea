// flotilla join / unjoin (join.h).
#include "federation/cluster/join.h"

#include <functional>

#include "api/policy/policy.h"
#include "api/views.h"
#include "base/base64.h"
#include "client/rest_client.h"
#include "federation/cluster/member_access.h"
#include "federation/common/names.h"

namespace flotilla::federation::cluster {
namespace {

std::string SecretNameFor(const std::string& cluster) { return cluster + "-kubeconfig"; }

// The member answers GET /version with these credentials.
Status CheckMember(const JoinOptions& opts) {
  Clock& clock = opts.io_clock != nullptr ? *opts.io_clock : RealClock();
  std::string where = "cluster " + opts.name + " at " + opts.member.server;
  auto prober = MemberProber::Create(opts.member, opts.timeout, clock);
  if (!prober.ok()) {
    return Status(prober.status().reason(), where + ": " + prober.status().message());
  }
  auto r = (*prober)->Get("/version");
  if (!r.ok()) {
    return Status(Reason::kServiceUnavailable, where + " does not answer: " + r.status().message());
  }
  if (r->code == 401) return Status::Unauthorized(where + " rejects the credentials (401)");
  if (r->code == 403) return Status::Forbidden(where + " forbids GET /version (403)");
  if (r->code != 200) {
    return Status(Reason::kServiceUnavailable,
                  where + " answers GET /version with HTTP " + std::to_string(r->code));
  }
  return Status::Ok();
}

Status EnsureNamespace(client::Client& fed, const std::string& ns) {
  json::object obj{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}};
  auto created = fed.Create(kNamespaces, "", obj);
  if (created.ok() || created.status().Is(Reason::kAlreadyExists)) return Status::Ok();
  return created.status();
}

Status DeleteManaged(client::Client& member, const std::vector<client::ResourceRef>& kinds,
                     UnjoinResult& out) {
  client::ListOptions managed;
  managed.label_selector = std::string(kManagedByLabel) + "=" + kManagedByValue;
  client::DeleteOptions background{.propagation_policy = "Background"};
  for (const client::ResourceRef& res : kinds) {
    auto list = member.List(res, "", managed);
    if (!list.ok() && list.status().Is(Reason::kNotFound)) continue;  // not served there
    if (!list.ok()) return list.status();
    for (const json::object& obj : list->items) {
      std::string ns(GetString(*GetObject(obj, "metadata"), "namespace").value_or(""));
      std::string name(GetString(*GetObject(obj, "metadata"), "name").value_or(""));
      Status s = member.Delete(res, ns, name, background);
      if (!s.ok() && !s.Is(Reason::kNotFound)) return s;
      out.deleted.push_back(res.resource + " " + (ns.empty() ? name : ns + "/" + name));
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::map<std::string, std::string>> ParseLabels(const std::string& text) {
  std::map<std::string, std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::BadRequest("invalid label \"" + item + "\": want key=value");
    }
    out[item.substr(0, eq)] = item.substr(eq + 1);
    start = end + 1;
  }
  return out;
}

json::object ClusterObject(const JoinOptions& opts) {
  json::object labels;
  for (const auto& [k, v] : opts.labels) labels[k] = v;
  json::object meta{{"name", opts.name}};
  if (!labels.empty()) meta["labels"] = std::move(labels);
  json::object secret_ref{{"name", SecretNameFor(opts.name)}};
  if (opts.secret_namespace != kSystemNamespace) secret_ref["namespace"] = opts.secret_namespace;
  json::object spec{
      {"secretRef", std::move(secret_ref)},
      {"serverAddressByClientCIDRs",
       json::array{{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", opts.member.server}}}}};
  if (!opts.provider.empty()) spec["provider"] = opts.provider;
  if (!opts.region.empty()) spec["region"] = opts.region;
  if (!opts.zones.empty()) spec["zones"] = ToJsonArray(opts.zones);
  return {{"apiVersion", "federation/v1beta1"},
          {"kind", "Cluster"},
          {"metadata", std::move(meta)},
          {"spec", std::move(spec)}};
}

namespace {

// Reads Cluster `name`, lets `change` edit it and writes it back at the
// resourceVersion read: a concurrent change is a conflict, retried on a
// fresh read (up to five times).
Status UpdateCluster(client::Client& fed, const std::string& name,
                     const std::function<void(json::object& cluster)>& change) {
  Status s;
  for (int attempt = 0; attempt < 5; ++attempt) {
    FLOTILLA_ASSIGN_OR_RETURN(json::object cluster, fed.Get(kClusters, "", name));
    change(cluster);
    s = fed.Update(kClusters, "", cluster).status();
    if (!s.Is(Reason::kConflict)) return s;
  }
  return s;
}

// The Secret with the member's credentials, as Join writes it.
json::object SecretObject(const JoinOptions& opts, const std::string& kubeconfig) {
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata",
           {{"name", SecretNameFor(opts.name)},
            {"namespace", opts.secret_namespace},
            {"labels", {{"federation.kubernetes.io/cluster", opts.name}}}}},
          {"type", "Opaque"},
          {"data", {{kKubeconfigKey, Base64Encode(kubeconfig)}}}};
}

// Points the joined Cluster `name` at the member anew (JoinOptions::rejoin):
// its Secret written over, its labels, address and location set, the rest
// of it kept.
StatusOr<json::object> Rejoin(client::Client& fed, const JoinOptions& opts,
                              const json::object& secret) {
  auto stored = fed.Get(kSecrets, opts.secret_namespace, SecretNameFor(opts.name));
  if (stored.ok()) {
    json::object updated = *stored;
    updated["data"] = secret.at("data");
    updated["type"] = "Opaque";
    FLOTILLA_RETURN_IF_ERROR(fed.Update(kSecrets, opts.secret_namespace, updated).status());
  } else if (stored.status().Is(Reason::kNotFound)) {
    FLOTILLA_RETURN_IF_ERROR(fed.Create(kSecrets, opts.secret_namespace, secret).status());
  } else {
    return stored.status();
  }
  const json::object wanted = ClusterObject(opts);
  FLOTILLA_RETURN_IF_ERROR(UpdateCluster(fed, opts.name, [&](json::object& cluster) {
    json::value& labels = EnsureObject(cluster, "metadata")["labels"];
    if (!labels.is_object()) labels = json::object();
    for (const auto& [k, v] : opts.labels) labels.as_object()[k] = v;
    json::object& spec = EnsureObject(cluster, "spec");
    // A cluster an agent connected is dialled from now on.
    for (const char* field : {"provider", "region", "zones", "connection"}) spec.erase(field);
    for (const auto& [k, v] : wanted.at("spec").as_object()) spec[k] = v;
  }));
  return fed.Get(kClusters, "", opts.name);
}

}  // namespace

StatusOr<json::object> Join(client::Client& fed, const JoinOptions& opts) {
  auto existing = fed.Get(kClusters, "", opts.name);
  if (existing.ok()) {
    if (!opts.rejoin) {
      return Status::AlreadyExists("clusters.federation \"" + opts.name + "\" already exists");
    }
    if (Find(*existing, "metadata.deletionTimestamp") != nullptr) {
      return Status::Conflict("clusters.federation \"" + opts.name +
                              "\" is being unjoined: join it again once it is gone");
    }
  } else if (!existing.status().Is(Reason::kNotFound)) {
    return existing.status();
  }
  FLOTILLA_RETURN_IF_ERROR(CheckMember(opts));
  FLOTILLA_ASSIGN_OR_RETURN(std::string kubeconfig,
                            SelfContainedKubeconfig(opts.name, opts.member));
  FLOTILLA_RETURN_IF_ERROR(EnsureNamespace(fed, opts.secret_namespace));
  json::object secret = SecretObject(opts, kubeconfig);
  if (existing.ok()) return Rejoin(fed, opts, secret);
  FLOTILLA_RETURN_IF_ERROR(fed.Create(kSecrets, opts.secret_namespace, secret).status());
  auto cluster = fed.Create(kClusters, "", ClusterObject(opts));
  if (!cluster.ok()) {
    (void)fed.Delete(kSecrets, opts.secret_namespace, SecretNameFor(opts.name));
    return cluster.status();
  }
  return cluster;
}

namespace {

// The Cluster's finalizers with kUnjoinFinalizer added or removed.
Status SetUnjoinFinalizer(client::Client& fed, const std::string& name, bool held) {
  return UpdateCluster(fed, name, [held](json::object& cluster) {
    json::object& meta = cluster["metadata"].as_object();
    json::array finalizers;
    for (const json::value& f : ArrayOrEmpty(meta, "finalizers")) {
      if (!(f.is_string() && f.get_string() == kUnjoinFinalizer)) finalizers.push_back(f);
    }
    if (held) finalizers.push_back(json::string(kUnjoinFinalizer));
    meta["finalizers"] = std::move(finalizers);
  });
}

// An agent-connected member's cascade, through the cluster proxy (Unjoin).
StatusOr<UnjoinResult> UnjoinThroughProxy(client::Client& fed, const std::string& name,
                                          const std::vector<client::ResourceRef>& managed,
                                          Clock* io_clock, const client::RestConfig& federation,
                                          Duration timeout) {
  client::RestConfig proxied = federation;
  proxied.server = federation.server + "/apis/federation/v1beta1/clusters/" + name + "/proxy";
  client::RestOptions opts{.timeout = std::chrono::seconds(10), .max_retries = 0};
  opts.clock = io_clock;
  FLOTILLA_ASSIGN_OR_RETURN(std::unique_ptr<client::Client> member,
                            client::NewRestClient(proxied, opts));
  FLOTILLA_RETURN_IF_ERROR(SetUnjoinFinalizer(fed, name, true));
  Status s = fed.Delete(kClusters, "", name);
  if (!s.ok()) {
    (void)SetUnjoinFinalizer(fed, name, false);
    return s;
  }
  // Until the federation no longer places anything there, a copy deleted
  // now could be made again.
  Clock& clock = io_clock != nullptr ? *io_clock : RealClock();
  TimePoint deadline = clock.Now() + timeout;
  for (;;) {
    auto cluster = fed.Get(kClusters, "", name);
    if (!cluster.ok()) return cluster.status();
    bool let_go = false;
    const json::object* status = GetObject(*cluster, "status");
    for (const json::value& c :
         status != nullptr ? ArrayOrEmpty(*status, "conditions") : json::array()) {
      if (c.is_object() && GetString(c.get_object(), "type") == "Ready" &&
          GetString(c.get_object(), "reason") == kUnjoiningReason) {
        let_go = true;
      }
    }
    if (let_go) break;
    if (clock.Now() >= deadline) {
      (void)SetUnjoinFinalizer(fed, name, false);
      return Status::Timeout("cluster " + name +
                             " was unjoined, but the federation's cluster controller did not let "
                             "go of it in time: nothing was deleted in it");
    }
    clock.SleepUntil(clock.Now() + std::chrono::milliseconds(100));
  }
  UnjoinResult out;
  Status deleted = DeleteManaged(*member, managed, out);
  // Either way the Cluster goes: it is unjoined.
  FLOTILLA_RETURN_IF_ERROR(SetUnjoinFinalizer(fed, name, false));
  if (!deleted.ok()) {
    return Status(deleted.reason(), "cluster " + name +
                                        " was unjoined, but deleting the federation's objects in "
                                        "it through its agent failed: " +
                                        deleted.message());
  }
  return out;
}

}  // namespace

StatusOr<UnjoinResult> Unjoin(client::Client& fed, const std::string& name, bool cascade,
                              const std::vector<client::ResourceRef>& managed, Clock* io_clock,
                              const client::RestConfig* federation, Duration unjoining_timeout) {
  FLOTILLA_ASSIGN_OR_RETURN(json::object cluster, fed.Get(kClusters, "", name));
  if (cascade && api::ClusterView(cluster).via_agent()) {
    if (federation == nullptr) {
      return Status::BadRequest("cluster " + name +
                                " is connected by an agent: its cascade goes through the "
                                "federation's cluster proxy, whose address was not given");
    }
    return UnjoinThroughProxy(fed, name, managed, io_clock, *federation, unjoining_timeout);
  }
  auto [secret_ns, secret_name] = SecretRefOf(cluster);
  UnjoinResult out;
  std::unique_ptr<client::Client> member;
  if (cascade) {
    FLOTILLA_ASSIGN_OR_RETURN(json::object secret, fed.Get(kSecrets, secret_ns, secret_name));
    FLOTILLA_ASSIGN_OR_RETURN(client::RestConfig config, RestConfigFromSecret(secret));
    client::RestOptions opts{.timeout = std::chrono::seconds(10), .max_retries = 0};
    opts.clock = io_clock;
    FLOTILLA_ASSIGN_OR_RETURN(member, client::NewRestClient(config, opts));
  }
  // The Cluster goes first: while it exists the federation restores the
  // copies a cascade deletes.
  Status s = fed.Delete(kClusters, "", name);
  if (!s.ok() && !s.Is(Reason::kNotFound)) return s;
  if (member != nullptr) {
    if (Status d = DeleteManaged(*member, managed, out); !d.ok()) {
      return Status(d.reason(), "cluster " + name +
                                    " was unjoined, but deleting the federation's objects in it "
                                    "failed (its Secret " +
                                    secret_ns + "/" + secret_name + " is kept): " + d.message());
    }
  }
  if (!secret_name.empty()) {
    s = fed.Delete(kSecrets, secret_ns, secret_name);
    if (!s.ok() && !s.Is(Reason::kNotFound)) return s;
  }
  return out;
}

namespace {

// The Cluster's spec merged with `spec` (a null removes a field), and its
// taints with the cordon taint (Karmada's
// cluster.karmada.io/unschedulable:NoSchedule) set or removed.
Status SetCordon(client::Client& fed, const std::string& name, const json::object& spec,
                 bool taint) {
  return UpdateCluster(fed, name, [&](json::object& cluster) {
    json::value& spec_value = cluster["spec"];
    if (!spec_value.is_object()) spec_value = json::object();
    json::object& current = spec_value.as_object();
    json::array taints;
    for (const json::value& t : ArrayOrEmpty(current, "taints")) {
      if (t.is_object() &&
          GetString(t.get_object(), "key") == api::policy::kUnschedulableTaintKey &&
          GetString(t.get_object(), "effect") == api::policy::kNoSchedule) {
        continue;
      }
      taints.push_back(t);
    }
    if (taint) {
      taints.push_back(json::object{{"key", api::policy::kUnschedulableTaintKey},
                                    {"effect", api::policy::kNoSchedule}});
    }
    if (taints.empty()) {
      current.erase("taints");
    } else {
      current["taints"] = std::move(taints);
    }
    for (const auto& [key, value] : spec) {
      if (value.is_null()) {
        current.erase(key);
      } else {
        current[key] = value;
      }
    }
  });
}

}  // namespace

StatusOr<bool> SetUnschedulable(client::Client& fed, const std::string& name, bool unschedulable) {
  FLOTILLA_ASSIGN_OR_RETURN(json::object cluster, fed.Get(kClusters, "", name));
  if (api::ClusterView(cluster).cordoned() == unschedulable) return false;
  json::object spec = unschedulable
                          ? json::object{{"unschedulable", true}}
                          : json::object{{"unschedulable", nullptr}, {"draining", nullptr}};
  FLOTILLA_RETURN_IF_ERROR(SetCordon(fed, name, spec, unschedulable));
  return true;
}

StatusOr<bool> SetDraining(client::Client& fed, const std::string& name) {
  FLOTILLA_ASSIGN_OR_RETURN(json::object cluster, fed.Get(kClusters, "", name));
  if (api::ClusterView(cluster).draining()) return false;
  FLOTILLA_RETURN_IF_ERROR(SetCordon(
      fed, name, json::object{{"unschedulable", true}, {"draining", true}}, /*taint=*/true));
  return true;
}

}  // namespace flotilla::federation::cluster
