// The federation API servers, as agents find them (docs/federation.md,
// "Several federation servers"): every `flotilla server` keeps a Lease of
// its own in kube-system, as kube-apiserver keeps its identity Lease,
//
//   kube-system/flotilla-apiserver-<16 hex digits, new at each start>
//   labels      apiserver.kubernetes.io/identity: flotilla-apiserver
//   annotations federation.kubernetes.io/url: https://HOST:PORT
//   spec        holderIdentity (the name), leaseDurationSeconds, renewTime
//
// renewed every `renew` period and deleted when the server stops. An agent
// lists them and keeps a tunnel to each server that renews its Lease
// (agent.h), so that whichever server leads the controllers, and every
// server's cluster proxy, has the member's tunnel. A server tells an agent
// which one it is in its tunnel's 101 (kServerIdHeader).
//
// Leases of servers that stopped without deleting theirs (killed) are
// deleted by any server once not renewed for `expire_after`.
//
// Thread-safe.
#pragma once

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/json.h"
#include "base/mutex.h"
#include "client/client.h"

namespace flotilla::federation::cluster {

inline constexpr std::string_view kServerLeaseLabel = "apiserver.kubernetes.io/identity";
inline constexpr std::string_view kServerLeaseLabelValue = "flotilla-apiserver";
inline constexpr std::string_view kServerUrlAnnotation = "federation.kubernetes.io/url";
// The 101 of a tunnel names the server that took it.
inline constexpr std::string_view kServerIdHeader = "Flotilla-Server-Id";

// The label selector of the servers' Leases.
std::string ServerLeaseSelector();

// A new server's name: "flotilla-apiserver-" and 16 random hex digits.
std::string NewServerId();

struct ServerLeaseOptions {
  std::string id;   // NewServerId()
  std::string url;  // how agents reach this server
  Duration renew = std::chrono::seconds(10);
  Duration duration = std::chrono::seconds(30);  // spec.leaseDurationSeconds
  Duration expire_after = std::chrono::hours(1);
  Clock* clock = nullptr;  // null: the real clock
};

class ServerLease {
 public:
  explicit ServerLease(ServerLeaseOptions opts) : opts_(std::move(opts)) {}
  ~ServerLease() { Stop(); }
  ServerLease(const ServerLease&) = delete;
  ServerLease& operator=(const ServerLease&) = delete;

  // Writes the Lease now and then every `renew` through `federation` (not
  // owned; must outlive this, or Stop be called first).
  void Start(client::Client& federation);
  // Stops renewing and deletes the Lease. Idempotent.
  void Stop();

 private:
  // Creates or renews the Lease; deletes others' long expired.
  void Renew(client::Client& federation);

  const ServerLeaseOptions opts_;
  Mutex mu_;
  CondVar cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  client::Client* federation_ GUARDED_BY(mu_) = nullptr;
  std::thread thread_;
};

// The URL of every server Lease among `leases` (a list of kube-system's
// Leases labelled kServerLeaseLabel), by server id.
std::map<std::string, std::string> ServerUrls(const std::vector<json::object>& leases);

}  // namespace flotilla::federation::cluster
