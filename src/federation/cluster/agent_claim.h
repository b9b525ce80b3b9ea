// Which agent holds a cluster, across all of the federation's servers
// (docs/federation.md, "One agent per cluster"). Each agent process has an
// instance id, kept in its data directory (agent.h), and every tunnel it
// opens names it. The first instance to open a tunnel of cluster NAME
// claims the cluster in a Lease,
//
//   kube-system/flotilla-agent-NAME
//   ownerReferences  the Cluster (the claim goes with it)
//   spec             holderIdentity (the instance), leaseDurationSeconds,
//                    acquireTime, renewTime, leaseTransitions
//
// which every server that holds one of that instance's tunnels renews
// while the tunnel is up. Any server refuses (409) a tunnel from another
// instance while the claim lives, so two agents for one cluster cannot
// both serve it even through different servers. The same instance is let
// in at once, on any server, even where its old tunnel still looks up (an
// agent restarted on a host whose old connection has not yet been seen to
// die): that old tunnel is replaced.
//
// A claim is judged expired as client-go's leader election judges a Lease:
// by this process's own clock, from when it last saw the Lease change, not
// from the renewTime another host wrote. A server that has never seen the
// claim change refuses once and starts counting; an instance is let in
// once the claim has not changed for its leaseDurationSeconds.
//
// Thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/json.h"
#include "base/mutex.h"
#include "base/status.h"
#include "client/client.h"

namespace flotilla::federation::cluster {

// Whether `id` can be an agent's instance id: empty (none), or up to 128
// of [A-Za-z0-9._-].
bool ValidAgentInstance(std::string_view id);

// The claim's Lease (in kube-system) for cluster `cluster`.
std::string AgentClaimName(const std::string& cluster);

class AgentClaims {
 public:
  // `duration`: the claims' leaseDurationSeconds (whole seconds, at least
  // one); `clock` null: the real one.
  explicit AgentClaims(Duration duration, Clock* clock = nullptr);

  // Claims `cluster` (the Cluster object) for agent `instance`: OK when the
  // claim was free, expired or the instance's already (it is renewed);
  // Conflict naming the holder while another instance's claim lives;
  // otherwise the federation's error.
  Status Claim(client::Client& federation, const json::object& cluster,
               const std::string& instance);
  // Renews the claim of `instance` on `cluster` (recreated if gone).
  // Conflict when another instance holds it now: the tunnel is to close.
  Status Renew(client::Client& federation, const json::object& cluster,
               const std::string& instance);

 private:
  Status Write(client::Client& federation, const json::object& cluster, const std::string& instance,
               bool renewal);
  // Whether the claim `lease` has changed within its duration, as this
  // process has seen it.
  bool Lives(const std::string& name, const json::object& lease) EXCLUDES(mu_);
  void Observed(const std::string& name, const std::string& resource_version) EXCLUDES(mu_);

  const Duration duration_;
  Clock& clock_;
  Mutex mu_;
  // A claim's resourceVersion as last seen, and when this process saw it.
  struct Seen {
    std::string resource_version;
    TimePoint at;
  };
  std::map<std::string, Seen> seen_ GUARDED_BY(mu_);
};

}  // namespace flotilla::federation::cluster
