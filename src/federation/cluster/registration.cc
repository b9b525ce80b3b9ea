// Agents registering with a bootstrap token (registration.h).
#include "federation/cluster/registration.h"

#include <algorithm>
#include <thread>

#include "api/views.h"
#include "apiserver/rbac.h"
#include "apiserver/responses.h"
#include "base/log.h"
#include "federation/common/names.h"

namespace flotilla::federation::cluster {
namespace {

const client::ResourceRef kServiceAccounts{"", "v1", "serviceaccounts", true};
const client::ResourceRef kClusterRoles{"rbac.authorization.k8s.io", "v1", "clusterroles", false};
const client::ResourceRef kClusterRoleBindings{"rbac.authorization.k8s.io", "v1",
                                               "clusterrolebindings", false};

// What an agent may do: read its Cluster, open its tunnel, renew its token
// (register again as itself), and list the federation's servers' Leases.
json::array AgentRules(const std::string& name) {
  auto rule = [&](const char* resource, const char* verb) {
    return json::object{{"apiGroups", json::array{"federation"}},
                        {"resources", json::array{resource}},
                        {"verbs", json::array{verb}},
                        {"resourceNames", json::array{json::string(name)}}};
  };
  // The federation's servers, for a tunnel to each (server_lease.h).
  json::object servers{{"apiGroups", json::array{"coordination.k8s.io"}},
                       {"resources", json::array{"leases"}},
                       {"verbs", json::array{"list"}}};
  return json::array{rule("clusters", "get"), rule("clusters/tunnel", "create"),
                     rule("clusters/register", "create"), std::move(servers)};
}

// `v` without the empty fields a server writes by default (a
// ServiceAccount subject's apiGroup "").
json::value WithoutEmpty(const json::value& v) {
  if (v.is_array()) {
    json::array out;
    for (const json::value& e : v.get_array()) out.push_back(WithoutEmpty(e));
    return out;
  }
  if (!v.is_object()) return v;
  json::object out;
  for (const auto& [k, e] : v.get_object()) {
    bool empty = e.is_null() || (e.is_string() && e.get_string().empty()) ||
                 (e.is_array() && e.get_array().empty());
    if (!empty) out[k] = WithoutEmpty(e);
  }
  return out;
}

// Creates `obj`, or finds it made already (by an earlier registration of
// the cluster, whose agent was revoked) with the same `field`. One changed
// since is not taken as it is: 409.
Status CreateOrFind(client::Client& federation, const client::ResourceRef& res,
                    const json::object& obj, std::string_view field) {
  auto created = federation.Create(res, "", obj);
  if (created.ok() || !created.status().Is(Reason::kAlreadyExists)) return created.status();
  std::string name = StringAt(obj, "metadata.name");
  FLOTILLA_ASSIGN_OR_RETURN(json::object existing, federation.Get(res, "", name));
  const json::value* want = Find(obj, field);
  const json::value* have = Find(existing, field);
  if (want == nullptr || have == nullptr || WithoutEmpty(*want) != WithoutEmpty(*have)) {
    return Status::Conflict(res.resource + " \"" + name + "\" exists with another " +
                            std::string(field) + "; delete it to register the cluster");
  }
  return Status::Ok();
}

// Waits until the authorizer, which learns of RBAC writes a moment after
// they are stored, lets the agent open its tunnel: the agent dials as soon
// as it has its token, and a 403 would end it.
Status AwaitTunnelRight(client::Client& federation, const std::string& name,
                        const std::string& account) {
  const client::ResourceRef reviews{"authorization.k8s.io", "v1", "subjectaccessreviews", false};
  json::object review{
      {"apiVersion", "authorization.k8s.io/v1"},
      {"kind", "SubjectAccessReview"},
      {"spec",
       {{"user", apiserver::rbac::ServiceAccountUser(kSystemNamespace, account)},
        {"groups", json::array{"system:serviceaccounts",
                               "system:serviceaccounts:" + std::string(kSystemNamespace),
                               "system:authenticated"}},
        {"resourceAttributes",
         {{"group", "federation"},
          {"resource", "clusters"},
          {"subresource", "tunnel"},
          {"verb", "create"},
          {"name", name}}}}}};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    FLOTILLA_ASSIGN_OR_RETURN(json::object answer, federation.Create(reviews, "", review));
    const json::value* allowed = Find(answer, "status.allowed");
    if (allowed != nullptr && allowed->is_bool() && allowed->as_bool()) return Status::Ok();
    if (std::chrono::steady_clock::now() > deadline) {
      return Status::Internal("the agent's role for cluster \"" + name + "\" did not take effect");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// The Cluster the agent asked for, as the federation creates it: its
// labels and placement fields, connected by agent, without a Secret.
StatusOr<json::object> WantedCluster(const std::string& name, std::string_view body) {
  auto parsed = ParseJsonObject(body);
  if (!parsed.ok()) {
    return Status::BadRequest("the registration's body is not a Cluster: " +
                              parsed.status().message());
  }
  const json::object& in = *parsed;
  std::string kind = StringAt(in, "kind");
  if (!kind.empty() && kind != "Cluster") {
    return Status::BadRequest("the registration's body is a " + kind + ", not a Cluster");
  }
  std::string named = StringAt(in, "metadata.name");
  if (!named.empty() && named != name) {
    return Status::BadRequest("the registration's Cluster is named \"" + named + "\", not \"" +
                              name + "\" as its path says");
  }
  json::object spec;
  if (const json::object* given = GetObject(in, "spec")) spec = *given;
  for (const auto& [field, value] : spec) {
    static constexpr std::string_view kAgentFields[] = {
        "serverAddressByClientCIDRs", "provider", "region", "zones", "connection", "secretRef"};
    if (std::find(std::begin(kAgentFields), std::end(kAgentFields), field) ==
        std::end(kAgentFields)) {
      return Status::BadRequest(
          "an agent registers a Cluster's labels, provider, region, zones "
          "and server address only, not spec." +
          std::string(field));
    }
  }
  if (spec.contains("secretRef")) {
    return Status::BadRequest(
        "an agent's Cluster has no secretRef: the member's credentials stay with the agent");
  }
  if (std::string connection = StringAt(spec, "connection");
      !connection.empty() && connection != "Agent") {
    return Status::BadRequest("an agent registers a Cluster with spec.connection Agent, not " +
                              connection);
  }
  spec["connection"] = "Agent";
  json::object meta{{"name", name}};
  if (const json::value* labels = Find(in, "metadata.labels"); labels && labels->is_object()) {
    meta["labels"] = *labels;
  }
  return json::object{{"apiVersion", "federation/v1beta1"},
                      {"kind", "Cluster"},
                      {"metadata", std::move(meta)},
                      {"spec", std::move(spec)}};
}

}  // namespace

json::object OwnedBy(const json::object& cluster, json::object meta) {
  meta["ownerReferences"] = json::array{json::object{
      {"apiVersion", "federation/v1beta1"},
      {"kind", "Cluster"},
      {"name", StringAt(cluster, "metadata.name")},
      {"uid", StringAt(cluster, "metadata.uid")},
  }};
  return meta;
}

std::string AgentServiceAccount(const std::string& cluster) { return "agent-" + cluster; }

std::string AgentRoleName(const std::string& cluster) { return "system:flotilla:agent:" + cluster; }

void AgentRegistrar::Serve(apiserver::Request& req, const std::string& name,
                           const apiserver::UserInfo& user, apiserver::Responder& resp) {
  client::Client* federation = federation_.load();
  if (federation == nullptr) {
    return apiserver::RespondStatus(resp, Status::Unavailable("registration is starting"));
  }
  // The cluster's own agent, renewing its token.
  const std::string account = AgentServiceAccount(name);
  if (user.name == apiserver::rbac::ServiceAccountUser(kSystemNamespace, account)) {
    auto token = IssueToken(*federation, account);
    if (!token.ok()) return apiserver::RespondStatus(resp, token.status());
    spdlog::info("cluster {}: its agent renewed its token", name);
    return apiserver::RespondJson(resp, 201, json::serialize(*token));
  }
  auto wanted = WantedCluster(name, req.body);
  if (!wanted.ok()) return apiserver::RespondStatus(resp, wanted.status());
  auto token = Register(*federation, name, *wanted);
  if (!token.ok()) {
    spdlog::warn("cluster {}: registration by {} from {} refused: {}", name, user.name, req.remote,
                 token.status().message());
    return apiserver::RespondStatus(resp, token.status());
  }
  spdlog::info("cluster {}: registered by {} from {}; its agent is the ServiceAccount {}/{}", name,
               user.name, req.remote, kSystemNamespace, AgentServiceAccount(name));
  apiserver::RespondJson(resp, 201, json::serialize(*token));
}

StatusOr<json::object> AgentRegistrar::IssueToken(client::Client& federation,
                                                  const std::string& account) {
  int64_t seconds = std::chrono::duration_cast<std::chrono::seconds>(opts_.token_ttl).count();
  return federation.CreateSubresource(kServiceAccounts, kSystemNamespace, account, "token",
                                      json::object{{"apiVersion", "authentication.k8s.io/v1"},
                                                   {"kind", "TokenRequest"},
                                                   {"spec", {{"expirationSeconds", seconds}}}});
}

StatusOr<json::object> AgentRegistrar::Register(client::Client& federation, const std::string& name,
                                                const json::object& wanted) {
  const std::string account = AgentServiceAccount(name);
  auto cluster = federation.Get(kClusters, "", name);
  if (cluster.ok()) {
    if (!api::ClusterView(*cluster).via_agent()) {
      return Status::Conflict("cluster \"" + name +
                              "\" is joined to the federation directly; unjoin it first");
    }
    auto existing = federation.Get(kServiceAccounts, kSystemNamespace, account);
    if (existing.ok()) {
      return Status::Conflict("cluster \"" + name + "\" is registered already: its agent is the " +
                              "ServiceAccount " + kSystemNamespace + "/" + account +
                              "; delete that ServiceAccount to register it again");
    }
    if (!existing.status().Is(Reason::kNotFound)) return existing.status();
  } else if (cluster.status().Is(Reason::kNotFound)) {
    cluster = federation.Create(kClusters, "", wanted);
    if (!cluster.ok()) return cluster.status();
  } else {
    return cluster.status();
  }

  auto ns = federation.Create(
      kNamespaces, "", json::object{{"metadata", {{"name", std::string(kSystemNamespace)}}}});
  if (!ns.ok() && !ns.status().Is(Reason::kAlreadyExists)) return ns.status();
  // The account is the registration's lock: of two agents registering the
  // same cluster at once, one creates it.
  auto created = federation.Create(
      kServiceAccounts, kSystemNamespace,
      json::object{
          {"metadata",
           OwnedBy(*cluster, {{"name", account}, {"namespace", std::string(kSystemNamespace)}})}});
  if (created.status().Is(Reason::kAlreadyExists)) {
    return Status::Conflict("cluster \"" + name + "\" is being registered by another agent");
  }
  if (!created.ok()) return created.status();
  auto registered = [&]() -> StatusOr<json::object> {
    const std::string role = AgentRoleName(name);
    FLOTILLA_RETURN_IF_ERROR(
        CreateOrFind(federation, kClusterRoles,
                     json::object{{"metadata", OwnedBy(*cluster, {{"name", role}})},
                                  {"rules", AgentRules(name)}},
                     "rules"));
    FLOTILLA_RETURN_IF_ERROR(CreateOrFind(
        federation, kClusterRoleBindings,
        json::object{
            {"metadata", OwnedBy(*cluster, {{"name", role}})},
            {"roleRef",
             {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", role}}},
            {"subjects", json::array{json::object{{"kind", "ServiceAccount"},
                                                  {"name", account},
                                                  {"namespace", std::string(kSystemNamespace)}}}}},
        "subjects"));
    FLOTILLA_RETURN_IF_ERROR(AwaitTunnelRight(federation, name, account));
    return IssueToken(federation, account);
  }();
  if (!registered.ok()) {
    // Not registered: the next attempt may be.
    (void)federation.Delete(kServiceAccounts, kSystemNamespace, account, {});
  }
  return registered;
}

}  // namespace flotilla::federation::cluster
