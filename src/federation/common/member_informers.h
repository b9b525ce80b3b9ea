// MemberInformers: informers in every Ready member cluster (DESIGN §4), one
// per resource that some federation controller reads, shared by all of
// them; started when a cluster becomes Ready (again, or with a new client
// after its Secret changed) and stopped when it becomes NotReady or leaves,
// driven by a ClusterClients registry. The propagation and workload
// controllers read members through these caches and get their events
// through the handlers they register.
//
// Thread-safe. Handlers run on the informers' threads, as runtime::Informer
// says; they must only enqueue.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "client/client.h"
#include "federation/common/cluster_clients.h"
#include "runtime/informer.h"

namespace flotilla::federation {

// Makes the handler for one member's informer on one resource.
using MemberHandlerFactory = std::function<runtime::EventHandler(const std::string& cluster)>;

class MemberInformers {
 public:
  // `clusters` and `clock` must outlive this.
  MemberInformers(ClusterClients& clusters, Clock& clock, runtime::InformerOptions options = {});
  // Stops everything.
  ~MemberInformers();
  MemberInformers(const MemberInformers&) = delete;
  MemberInformers& operator=(const MemberInformers&) = delete;

  // Every Ready member gets an informer on `resource` (one per resource,
  // however many controllers ask); `factory` makes its handler there. Once
  // started, the members already Ready get the handler (and the informer,
  // started at once) too: how a controller for a kind that appeared (a
  // custom kind) reads the members. The id removes it.
  using HandlerId = uint64_t;
  HandlerId AddHandler(const client::ResourceRef& resource, MemberHandlerFactory factory);
  // Removes a handler from every member: none of its handlers runs or is
  // called once this returns. The informers of a resource left without
  // handlers (and without a transform set) are stopped and dropped. Not
  // from a handler of the members' informers.
  void RemoveHandler(HandlerId id);
  // The informers on `resource` cache `transform`'s view of each object (it
  // must keep what every handler and reader of theirs uses). REQUIRES: before
  // Start.
  void SetTransform(const client::ResourceRef& resource, runtime::Transform transform);
  // The informers on `resource` list and watch only the objects
  // `field_selector` selects ("involvedObject.kind=Pod"): every reader of
  // theirs must want no other. REQUIRES: before Start.
  void SetFieldSelector(const client::ResourceRef& resource, std::string field_selector);
  // Subscribes to the registry: informers start for every Ready cluster.
  void Start();
  // Unsubscribes and stops every informer. Idempotent.
  void Stop();

  // How the informers of one member are named: the plural of a built-in
  // group's resource ("pods", "replicasets"), the plural and group of a
  // custom one, whose group has a dot ("crontabs.stable.example.com"), so
  // that a custom kind named like a built-in one ("services" of
  // serving.knative.dev) is another informer.
  static std::string Key(const client::ResourceRef& resource);
  // The informer on `resource` (Key) in `cluster`; null when that
  // cluster is not Ready. The informer may be stopped once the cluster
  // leaves; the pointer stays valid as long as it is held.
  std::shared_ptr<runtime::Informer> Get(const std::string& cluster,
                                         const std::string& resource) const;
  std::shared_ptr<runtime::Informer> Get(const std::string& cluster,
                                         const client::ResourceRef& resource) const {
    return Get(cluster, Key(resource));
  }
  // The client the informers in `cluster` read through; null when it is not
  // Ready. Another than the cluster's current one means they are about to
  // be restarted: their caches are of the old endpoint.
  std::shared_ptr<client::Client> ClientOf(const std::string& cluster) const;
  // Every informer in `cluster` (none when it is not Ready), by Key.
  std::map<std::string, std::shared_ptr<runtime::Informer>> Of(const std::string& cluster) const;
  // The clusters with informers, sorted.
  std::vector<std::string> Clusters() const;
  // The clusters with informers, sorted, each with whether its informers on
  // every one of `resources` have synced (one the member does not serve
  // counts as synced, and empty) and whether it serves the first of them:
  // one pass under one lock, for a caller that asks of every cluster at once
  // (each check of a federated object).
  struct ClusterSync {
    std::string cluster;
    bool synced;
    bool served = true;
  };
  std::vector<ClusterSync> Synced(std::span<const client::ResourceRef> resources) const;
  // The resources `cluster` does not serve among those read, as kubectl
  // names them fully ("horizontalpodautoscalers.v2.autoscaling"), sorted.
  std::vector<std::string> NotServed(const std::string& cluster) const;
  // Whether `cluster` serves `resource` (Key): false only once its
  // informer there found that it does not.
  bool Serves(const std::string& cluster, const std::string& resource) const;

 private:
  struct Member {
    std::shared_ptr<client::Client> client;                               // outlives its informers
    std::map<std::string, std::shared_ptr<runtime::Informer>> informers;  // by Key
    // Where each of our handlers is registered in this member's informers.
    std::map<HandlerId, std::pair<std::string, runtime::Informer::HandlerId>> handlers;
  };
  void OnReady(const std::string& name, std::shared_ptr<client::Client> client);
  void Drop(const std::string& name);
  static void StopAll(Member& m);

  struct Kind {
    client::ResourceRef resource;
    std::vector<std::pair<HandlerId, MemberHandlerFactory>> factories;
    runtime::Transform transform;
    std::string field_selector;
  };
  Kind& KindOf(const client::ResourceRef& resource) REQUIRES(mu_);
  std::shared_ptr<runtime::Informer> NewInformer(client::Client& client, const Kind& kind) const;
  ClusterClients& clusters_;
  Clock& clock_;
  const runtime::InformerOptions options_;
  int subscription_ = -1;

  // Taken before the lock an informer's HasSynced takes (in Synced), never
  // after: an informer calls its handlers, which may take this lock,
  // without holding that one. Informers are made under it, and started and
  // given handlers outside it.
  mutable Mutex mu_;
  std::vector<Kind> kinds_ GUARDED_BY(mu_);
  bool started_ GUARDED_BY(mu_) = false;
  std::map<std::string, Member> members_ GUARDED_BY(mu_);
  HandlerId next_id_ GUARDED_BY(mu_) = 1;
};

}  // namespace flotilla::federation
