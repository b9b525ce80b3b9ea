// The Kubernetes-compatible API server: authenticates, routes and answers
// every request (discovery, OpenAPI, health, metrics, and the resource verbs
// through Objects). Transport-independent: HttpServer feeds it requests.
//
// Thread-safe: Handle may run on many threads at once.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "api/registry.h"
#include "apiserver/audit.h"
#include "apiserver/auth.h"
#include "apiserver/custom_resources.h"
#include "apiserver/discovery.h"
#include "apiserver/http.h"
#include "apiserver/inflight.h"
#include "apiserver/metrics.h"
#include "apiserver/objects.h"
#include "apiserver/openapi.h"
#include "apiserver/rbac_authorizer.h"
#include "apiserver/request_info.h"
#include "apiserver/sa_token.h"
#include "apiserver/timed_store.h"
#include "base/mutex.h"

namespace flotilla::apiserver {

// Serves paths of its own beside the API (a member's /flotilla/admin/):
// called for every authenticated non-resource request before the built-in
// paths, with the authenticated user; returns true when it answered. It
// does its own authorization.
using PathHandler = std::function<bool(Request& req, const UserInfo& user, Responder& resp)>;

// What a proxy subresource's request addresses (api::Resource::has_proxy):
// GET /apis/federation/v1beta1/clusters/a/proxy/api/v1/pods?limit=5 is
// name "a", path "/api/v1/pods", query "limit=5".
struct ProxyTarget {
  const api::Resource* resource = nullptr;
  std::string ns, name;
  std::string path;   // percent-encoded as received; "/" when none
  std::string query;  // percent-encoded as received, without '?'
};

// Answers a proxy subresource's request, after authentication, RBAC on
// {plural}/proxy (the verb from the HTTP method) and audit; `user` is the
// caller (impersonated, when it impersonates). May block; may stream.
using ProxyHandler = std::function<void(Request& req, const ProxyTarget& target,
                                        const UserInfo& user, Responder& resp)>;

// Answers an agent's POST to an agent subresource (api::Resource::has_agent:
// clusters/NAME/tunnel, clusters/NAME/register), after authentication, RBAC
// (create on {plural}/{subresource}) and audit: for a tunnel with 101 and
// Responder::SwitchProtocols, or an error. `user` is the agent. May block
// briefly.
using AgentHandler = std::function<void(Request& req, const std::string& name, const UserInfo& user,
                                        Responder& resp)>;

// Answers GET pods/NAME/log (kube's kubelet does, behind kube-apiserver):
// called after RBAC on pods/log with the pod as stored and the caller;
// `reread` reads the pod again (a follow that must notice the pod going).
// May stream.
using PodLogsHandler = std::function<void(Request& req, const json::object& pod,
                                          std::function<StatusOr<json::object>()> reread,
                                          const UserInfo& user, Responder& resp)>;

// Answers DELETE of one pod instead of Objects (the federation forwards it
// to the member that runs the pod): called after RBAC on pods and audit,
// with the pod as stored and the caller. May block.
using PodDeleteHandler = std::function<void(Request& req, const json::object& pod,
                                            const UserInfo& user, Responder& resp)>;

// Answers pods/NAME/exec, attach and portforward (kube's kubelet does,
// behind kube-apiserver): called after RBAC on pods/{subresource} (a GET,
// which a WebSocket client sends, needs create as well as get, as
// Kubernetes 1.35 asks) and audit, with the subresource, the pod as stored
// (`reread` reads it again) and the caller. Answers with an upgrade (Responder::SwitchProtocols or
// TakeConnection) or an error. May block; the connection it takes lives on.
using PodConnectHandler = std::function<void(
    Request& req, const std::string& subresource, const json::object& pod,
    std::function<StatusOr<json::object>()> reread, const UserInfo& user, Responder& resp)>;

struct ApiServerOptions {
  const api::Registry* registry = nullptr;  // REQUIRED
  storage::Store* store = nullptr;          // REQUIRED
  Clock* clock = nullptr;                   // REQUIRED
  const api::SchemaSet* schemas = nullptr;  // null: no schema checks, no OpenAPI
  // Null: every request runs as an unrestricted in-process user.
  const Authenticator* authenticator = nullptr;
  // Where audit events go (audit.h); null: no audit log.
  AuditLog* audit_log = nullptr;
  // Signs TokenRequests (serviceaccounts/token); null: not served.
  const ServiceAccountTokens* service_account_tokens = nullptr;
  std::string git_version = "v1.32.0";
  // At most so many requests served at once (inflight.h); {0, 0}: no limit.
  InflightLimits inflight{0, 0};
  PathHandler extra_paths;  // empty: none
  // Serves the proxy subresources; empty: they are NotFound.
  ProxyHandler proxy;
  // Serve the agent subresources; empty: they are NotFound.
  AgentHandler tunnel;
  AgentHandler register_agent;
  // Serves pods/log; empty: it is NotFound.
  PodLogsHandler pod_logs;
  // Serves DELETE of a pod; empty: Objects deletes it.
  PodDeleteHandler pod_delete;
  // Serves pods/exec, attach and portforward; empty: they are NotFound.
  PodConnectHandler pod_connect;
  // API groups the federation's controllers also read and write, besides
  // those their role names (rbac_bootstrap.h): the groups of the kinds the
  // federation propagates.
  std::vector<std::string> controller_groups;
  // How long an Event lives after its last write; zero: for ever
  // (ServerOptions::event_ttl).
  Duration event_ttl = std::chrono::hours(1);
};

class ApiServer {
 public:
  explicit ApiServer(const ApiServerOptions& opts);
  ~ApiServer();

  void Handle(Request& req, Responder& resp);

  // Creates default, kube-system, kube-public and kube-node-lease if absent.
  Status EnsureDefaultNamespaces();
  // Loads RBAC, writes the bootstrap policy and starts aggregation
  // (rbac_authorizer.h). Until then only system:masters is allowed anything.
  Status StartRbac() { return rbac_.Start(); }
  // Serves the kinds of the stored CustomResourceDefinitions and follows
  // their changes (custom_resources.h), when the registry has the CRD kind.
  Status StartCustomResources();
  // Marks the server ready (/readyz answers ok) or shutting down.
  void SetReady(bool ready) { ready_ = ready; }

  Objects& objects() { return objects_; }
  RbacAuthorizer& rbac() { return rbac_; }
  Metrics& metrics() { return metrics_; }

 private:
  void HandleNonResource(Request& req, const RequestInfo& info, Responder& resp);
  void HandleResource(Request& req, const RequestInfo& info, const UserInfo& user, Responder& resp,
                      AuditRequest& audit);
  bool AuthorizedNonResource(const UserInfo& user, const Request& req, const RequestInfo& info,
                             AuditRequest& audit) const;
  // kube-apiserver's impersonation: the Impersonate-User, -Group, -Uid and
  // -Extra-* headers replace the user when it may `impersonate` each of
  // them; Forbidden otherwise. The user unchanged when there are none.
  StatusOr<UserInfo> Impersonate(const Request& req, UserInfo user) const;
  // apiserver_storage_objects: the objects stored per resource, as
  // kube-apiserver's gauge ("deployments.apps", core resources bare).
  std::string RenderStorageObjects();
  // Who a request is from (authenticated) and acts as (user: the same, or
  // the impersonated user); `impersonation` says why impersonating failed.
  struct Identity {
    std::optional<UserInfo> authenticated;
    std::optional<UserInfo> impersonated;  // the user Impersonate-User named
    std::string unauthenticated;           // why a credential was refused, when it may be told
    Status impersonation = Status::Ok();
    // Whom the request acts as.
    const std::optional<UserInfo>& user() const {
      return impersonated ? impersonated : authenticated;
    }
  };
  Identity Identify(const Request& req) const;
  std::shared_ptr<const api::Resource> ResolveResource(const RequestInfo& info) const;
  // The handler of agent subresource `subresource` of `res`; null: none.
  const AgentHandler* AgentHandlerFor(const api::Resource& res,
                                      const std::string& subresource) const;

  // What the server serves: the registry's kinds and the custom ones, their
  // discovery documents, schemas and OpenAPI. Replaced whole when a CRD
  // changes; a request holds the one it started with.
  //
  // The OpenAPI documents are built on their first request, as
  // kube-apiserver's lazy OpenAPI service does: they are 5 MiB of JSON
  // that few clients read (kubectl's explain, apply and create), and a
  // process of many simulated members, or a burst of CRD changes, would
  // otherwise build and hold them for every server and every change.
  struct Served {
    api::Registry registry;
    Discovery discovery;
    std::unique_ptr<api::SchemaSet> own_schemas;  // the built-in ones plus custom kinds'
    const api::SchemaSet* schemas = nullptr;      // null without opts_.schemas
    explicit Served(api::Registry r) : registry(std::move(r)), discovery(registry) {}
    // Null without schemas. Thread-safe; the first call builds.
    const OpenApi* openapi() const;

   private:
    mutable std::once_flag openapi_once_;
    mutable std::unique_ptr<OpenApi> openapi_;
  };
  std::shared_ptr<const Served> served() const;
  // Serves the registry's kinds and `custom` (CustomResources' publish).
  void Publish(std::vector<std::shared_ptr<api::Resource>> custom);

  ApiServerOptions opts_;
  Metrics metrics_;
  TimedStore store_;  // opts_.store, timed into metrics_
  Objects objects_;
  mutable Mutex served_mu_;
  std::shared_ptr<const Served> served_ GUARDED_BY(served_mu_);
  InflightLimiter inflight_;
  RbacAuthorizer rbac_;
  std::unique_ptr<CustomResources> custom_resources_;
  std::atomic<bool> ready_{false};
};

}  // namespace flotilla::apiserver
