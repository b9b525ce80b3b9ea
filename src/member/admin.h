// A member's control and fault injection (docs/member.md, "Control and
// fault injection"): the admin endpoint served on the member's own API port
// under /flotilla/admin/v1/, for the admin credential only (group
// system:masters), and the API faults it switches on.
//
//   GET    /flotilla/admin/v1/state                  -> {"name","api":{"mode","latency"},"reject"?}
//   POST   /flotilla/admin/v1/api     {"mode":"unavailable"|"slow"|"healthy","latency":"2s"}
//   POST   /flotilla/admin/v1/reject  {"verb":"create","resource":"replicasets","namespace"?}
//   DELETE /flotilla/admin/v1/reject                 -> requests are served again
//   POST   /flotilla/admin/v1/demand  {"kind":"Deployment","namespace":"default",
//                                      "name":"web","cpu":"2500m"}
//   POST   /flotilla/admin/v1/nodes   {"name"?,"cpu"?,"memory"?,"pods"?} -> 201 the Node
//   PATCH  /flotilla/admin/v1/nodes/NAME {"cpu"?,"memory"?,"pods"?} -> the Node
//   DELETE /flotilla/admin/v1/nodes/NAME             -> the Node's pods go with it
//   POST   /flotilla/admin/v1/pods/NS/NAME/fail  {"reason"?,"message"?}
//   POST   /flotilla/admin/v1/pods/NS/NAME/crash
//
// Errors are Kubernetes Status bodies. Every write goes through the member's
// own client, so the member's controllers see it as they would see a change
// made by anyone.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "apiserver/auth.h"
#include "apiserver/http.h"
#include "base/clock.h"
#include "base/json.h"
#include "base/mutex.h"
#include "client/client.h"
#include "member/context.h"

namespace flotilla::member {

inline constexpr std::string_view kAdminPrefix = "/flotilla/admin/";

// Which API requests a member refuses (Faults::SetRejection): a kube verb
// ("create", "update", "patch", "delete", ... or "*") on a resource
// ("replicasets", "replicasets.apps", "replicasets/status"), in one
// namespace or, when `ns` is empty, in all.
struct Rejection {
  std::string verb;
  std::string resource;
  std::string ns;
};

// The API faults of one member, applied to every HTTPS request but the
// admin endpoint's (the member's own controllers use the in-process client
// and keep working, as a cluster behind a broken load balancer does).
// Thread-safe.
class Faults {
 public:
  enum class Mode { kHealthy, kUnavailable, kSlow };

  void Set(Mode mode, Duration latency = Duration::zero());
  Mode mode() const { return mode_; }
  Duration latency() const { return Duration(latency_.load()); }
  json::object State() const;
  // Replaces the rejection rule; nullopt serves every request again.
  void SetRejection(std::optional<Rejection> rule);
  std::optional<json::object> RejectionState() const;

  // An apiserver::ServerOptions::http_filter: unavailable answers 503
  // ServiceUnavailable Status (health checks included); slow waits
  // `latency` and lets the request through; a request the rejection rule
  // matches gets 403 Forbidden, as an admission webhook or RBAC would give
  // it, while health checks and other requests are served.
  bool Filter(apiserver::Request& req, apiserver::Responder& resp);

 private:
  bool Rejects(const apiserver::Request& req, std::string* message) const;

  std::atomic<Mode> mode_{Mode::kHealthy};
  std::atomic<Duration::rep> latency_{0};
  mutable Mutex reject_mu_;
  std::optional<Rejection> rejection_ GUARDED_BY(reject_mu_);
  std::atomic<bool> rejecting_{false};  // rejection_ is set; read without the lock
};

class Admin {
 public:
  // All references must outlive the Admin.
  Admin(std::string name, client::Client& client, Clock& clock, WorkloadDemand& demand,
        Faults& faults, const SimulationOptions& options);

  // An apiserver::PathHandler: answers paths under kAdminPrefix.
  bool Handle(apiserver::Request& req, const apiserver::UserInfo& user, apiserver::Responder& resp);

 private:
  StatusOr<std::pair<int, json::object>> Serve(const apiserver::Request& req,
                                               const json::object& body);
  StatusOr<json::object> SetApi(const json::object& body);
  StatusOr<json::object> SetRejection(const json::object& body);
  json::object State() const;
  StatusOr<json::object> SetDemand(const json::object& body);
  StatusOr<json::object> AddNode(const json::object& body);
  StatusOr<json::object> SetNode(const std::string& name, const json::object& body);
  StatusOr<json::object> RemoveNode(const std::string& name);
  StatusOr<json::object> FailPod(const std::string& ns, const std::string& name,
                                 const json::object& body);
  StatusOr<json::object> CrashPod(const std::string& ns, const std::string& name);
  using PodChange = std::function<void(json::object& pod)>;
  StatusOr<json::object> ChangePodStatus(const std::string& ns, const std::string& name,
                                         const PodChange& change);

  const std::string name_;
  client::Client& client_;
  Clock& clock_;
  WorkloadDemand& demand_;
  Faults& faults_;
  const SimulationOptions& options_;
  Mutex nodes_mu_;  // serializes node additions (name choice)
};

// A CPU quantity ("2500m", "2", "1.5") in millicores; nullopt when it is not
// one.
std::optional<int64_t> ParseMilliCpu(std::string_view text);

}  // namespace flotilla::member
