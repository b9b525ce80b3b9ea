// Pieces of the federation benchmark (federation_bench.cc): the federation
// and its members as child processes of the real binary, REST clients for
// them, and a watcher that records when local ReplicaSets appear in the
// members.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/child_process.h"
#include "base/json.h"
#include "base/mutex.h"
#include "base/status.h"
#include "client/client.h"

namespace flotilla::bench {

using Steady = std::chrono::steady_clock;

inline const client::ResourceRef kReplicaSets{"apps", "v1", "replicasets", true};
inline const client::ResourceRef kPods{"", "v1", "pods", true};
inline const client::ResourceRef kConfigMaps{"", "v1", "configmaps", true};
inline const client::ResourceRef kDeployments{"apps", "v1", "deployments", true};
inline const client::ResourceRef kNamespaces{"", "v1", "namespaces", false};
inline const client::ResourceRef kClusters{"federation", "v1beta1", "clusters", false};

double SecondsSince(Steady::time_point start);
// The flotilla binary of this build: build/flotilla next to build/bench/.
std::string FlotillaOfThisBuild();
// VmRSS and VmHWM (peak) of a process, in MiB (0 when unreadable).
double RssMiB(pid_t pid, const char* field = "VmRSS");

// A child process of the flotilla binary and the kubeconfigs it wrote.
struct Process {
  std::unique_ptr<ChildProcess> child;
  std::vector<std::string> kubeconfigs;  // the server's, or one per member cluster
};

// `flotilla server --data-dir DIR --secure-port 0 FLAGS...`, once ready.
StatusOr<Process> StartServer(const std::string& binary, const std::string& dir,
                              const std::vector<std::string>& flags);
// `flotilla member --data-dir DIR --secure-port 0 ARGS...` hosting `clusters`
// clusters, once all are ready.
StatusOr<Process> StartMembers(const std::string& binary, const std::string& dir,
                               const std::vector<std::string>& args, int clusters);
// The same in two steps: LaunchMembers starts the process (on a thread that
// outlives it: see ChildProcess), AwaitMembers reads its `clusters` ready
// lines into p.kubeconfigs (from any one thread).
StatusOr<Process> LaunchMembers(const std::string& binary, const std::string& dir,
                                const std::vector<std::string>& args);
Status AwaitMembers(Process& p, const std::string& dir, int clusters);

// A REST client without client-side rate limit.
StatusOr<std::unique_ptr<client::Client>> ClientFor(const std::string& kubeconfig);

// Joins every member cluster (`flotilla join` as a library call) and waits
// until the federation reports them all Ready.
Status JoinAndWaitReady(client::Client& fed, const std::map<std::string, std::string>& kubeconfigs,
                        std::chrono::seconds timeout);

// The Ready condition's status of a Cluster ("" when unknown).
std::string ClusterReady(client::Client& fed, const std::string& name);
// The same of a Cluster object.
std::string ReadyStatus(const json::object& cluster);

// A namespace, created unless it exists.
Status EnsureNamespace(client::Client& c, const std::string& name);

// A federation server and one member process of `clusters` clusters named
// m-1..m-N (`member_args` added), all joined; namespace "bench" everywhere.
struct Fleet {
  Process server, members;
  std::unique_ptr<client::Client> fed;
  std::vector<std::unique_ptr<client::Client>> member_clients;

  std::vector<client::Client*> Members() const;
};
StatusOr<Fleet> StartFleet(const std::string& binary, const std::string& dir, int clusters,
                           const std::vector<std::string>& member_args, int timeout_s,
                           const std::vector<std::string>& server_flags = {});

// A ReplicaSet with `replicas` pods of no resource requests that go at once
// when deleted; `preferences` ("" for none) is its placement annotation.
json::object ReplicaSet(const std::string& name, int64_t replicas, const std::string& preferences);

// A federated Deployment spread evenly (rebalance) with `replicas` pods of
// `image`, no resource requests, rolled out one pod at a time (maxSurge 1,
// maxUnavailable 0).
json::object Deployment(const std::string& name, int64_t replicas, const std::string& image);

// Watches the managed local copies (ReplicaSets unless told) of every
// member and records, per name, in how many members it appeared and when
// it first and last did. Thread-safe.
class LocalCopyWatcher {
 public:
  // Starts one watch per member (all namespaces). The clients must outlive
  // the watcher.
  static StatusOr<std::unique_ptr<LocalCopyWatcher>> Start(
      const std::vector<client::Client*>& members,
      const client::ResourceRef& resource = kReplicaSets);
  ~LocalCopyWatcher();

  // When a ReplicaSet was seen in the first and in the last of its members.
  struct Arrival {
    Steady::time_point first, last;
  };
  // Waits until `name` exists in `count` members, or returns nullopt after
  // `timeout`.
  std::optional<Arrival> WaitFor(const std::string& name, int count,
                                 std::chrono::milliseconds timeout);
  // Waits until `names` ReplicaSets have appeared somewhere; returns when
  // the last one did, or nullopt after `timeout`.
  std::optional<Steady::time_point> WaitForNames(size_t names, std::chrono::milliseconds timeout);
  size_t names() const;
  int broken_watches() const;

 private:
  LocalCopyWatcher() = default;
  void Seen(const std::string& name);

  struct Arrivals {
    int count = 0;
    Arrival at;
  };
  mutable Mutex mu_;
  CondVar cv_;
  std::map<std::string, Arrivals> seen_ GUARDED_BY(mu_);
  Steady::time_point last_new_name_ GUARDED_BY(mu_);
  int broken_ GUARDED_BY(mu_) = 0;
  std::vector<std::unique_ptr<client::Watch>> watches_;
};

}  // namespace flotilla::bench
