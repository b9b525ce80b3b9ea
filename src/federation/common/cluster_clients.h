// ClusterClients: the registry of the member clusters the federation can
// talk to right now. The cluster controller feeds it (a client for each
// cluster that becomes Ready, NotReady when it fails, Removed when it
// leaves); the other federation controllers subscribe to start and stop
// their per-cluster informers (DESIGN §4: "per ready cluster the federation
// keeps informers on the kinds it manages").
//
// Callbacks run one at a time, in order, on the thread that reported the
// change, and never under the registry's state lock: a callback may call
// Get() or ReadyClusters(), but must not report changes itself.
// on_ready(name, client) is called when a cluster becomes ready, and again
// with the new client when a ready cluster's client is replaced (its Secret
// changed); on_not_ready(name) when a ready cluster stops being ready;
// on_removed(name) when a cluster that was known leaves.
//
// Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "client/client.h"

namespace flotilla::federation {

struct ClusterCallbacks {
  std::function<void(const std::string& name, std::shared_ptr<client::Client> client)> on_ready;
  std::function<void(const std::string& name)> on_not_ready;
  std::function<void(const std::string& name)> on_removed;
};

class ClusterClients {
 public:
  // Registers callbacks; on_ready is called at once for every cluster that
  // is ready now. Returns an id for Unsubscribe.
  int Subscribe(ClusterCallbacks callbacks);
  // No callback of that subscriber runs after it returns. REQUIRES: not
  // called from a callback.
  void Unsubscribe(int id);

  // Reported by the cluster controller. Each is idempotent: reporting the
  // state a cluster is already in calls nobody.
  void SetReady(const std::string& name, std::shared_ptr<client::Client> client);
  void SetNotReady(const std::string& name);
  void Remove(const std::string& name);

  // The client of a ready cluster; null when it is not ready.
  std::shared_ptr<client::Client> Get(const std::string& name) const;
  // The ready clusters' names, sorted.
  std::vector<std::string> ReadyClusters() const;
  // Whether `name` was reported ready or not ready (and not removed since).
  bool Known(const std::string& name) const;

 private:
  std::vector<ClusterCallbacks> Subscribers() const;

  Mutex notify_mu_;  // serializes callbacks; taken before mu_
  mutable Mutex mu_;
  // Every known cluster; the client is null while it is not ready.
  std::map<std::string, std::shared_ptr<client::Client>> clients_ GUARDED_BY(mu_);
  std::map<int, ClusterCallbacks> subscribers_ GUARDED_BY(mu_);
  int next_id_ GUARDED_BY(mu_) = 0;
};

}  // namespace flotilla::federation
