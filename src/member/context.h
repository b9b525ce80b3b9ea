// What a simulated member's controllers share: the member's API (an
// in-process client), its clock, its controller manager, one informer per
// resource, an event recorder and the member's options. Each controller
// (scheduler, kubelet, ReplicaSet, Deployment, StatefulSet, HPA, services)
// is a Component that registers its informers' handlers and its
// reconcilers in its constructor; the MemberCluster owns the components and
// starts the manager after all of them are built (DESIGN §4).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "client/client.h"
#include "client/resources.h"
#include "runtime/controller_manager.h"
#include "runtime/event_recorder.h"
#include "runtime/informer.h"
#include "runtime/shared_informers.h"

namespace flotilla::member {

// The kinds a member serves, as client refs.
using client::kDeployments;
using client::kEndpoints;
using client::kEndpointSlices;
using client::kHorizontalPodAutoscalers;
using client::kNodes;
using client::kPersistentVolumeClaims;
using client::kPods;
using client::kReplicaSets;
using client::kResourceQuotas;
using client::kSecrets;
using client::kServices;
using client::kStatefulSets;
using client::kStorageClasses;

// Informers shared by a member's controllers (runtime/shared_informers.h).
using runtime::SharedInformers;

// The member's simulation settings (flags of `flotilla member`).
struct SimulationOptions {
  // Nodes the member starts with, and the template for nodes added later:
  // capacity = allocatable = node_cpu, node_memory, node_pods. Node i is
  // placed in zones[i % zones.size()] (no zone label when `zones` is empty);
  // `region` labels every node (none when empty).
  int nodes = 3;
  std::string node_cpu = "4";
  std::string node_memory = "16Gi";
  int node_pods = 110;
  std::vector<std::string> zones;
  std::string region;
  // Each node's Lease in kube-node-lease lasts this long and is renewed
  // every quarter of it (the kubelet's nodeLeaseDurationSeconds and its
  // renew interval).
  int64_t node_lease_duration_seconds = 40;

  Duration pod_startup = std::chrono::milliseconds(500);  // bound -> Running and Ready
  Duration hpa_sync_period = std::chrono::seconds(15);
  Duration hpa_downscale_stabilization = std::chrono::minutes(5);
  std::string lb_cidr = "172.18.0.0/24";  // LoadBalancer ingress addresses
  std::string pod_cidr = "10.244.0.0/16";
  std::string cluster_name = "member";
};

// Simulated CPU demand per workload (a Deployment, ReplicaSet or
// StatefulSet by namespace and name), in millicores: the member's admin
// endpoint sets it (`flotilla member ctl demand`), the HPA controller spreads
// it over the workload's ready pods to compute utilization. A workload
// without a demand uses none. Thread-safe.
class WorkloadDemand {
 public:
  // kind: "Deployment", "ReplicaSet" or "StatefulSet".
  void Set(const std::string& kind, const std::string& ns, const std::string& name,
           int64_t millicores) {
    MutexLock lock(mu_);
    demand_[kind + "/" + ns + "/" + name] = millicores;
  }
  std::optional<int64_t> Get(const std::string& kind, const std::string& ns,
                             const std::string& name) const {
    MutexLock lock(mu_);
    auto it = demand_.find(kind + "/" + ns + "/" + name);
    if (it == demand_.end()) return std::nullopt;
    return it->second;
  }

 private:
  mutable Mutex mu_;
  std::map<std::string, int64_t> demand_ GUARDED_BY(mu_);
};

struct ControllerContext {
  client::Client& client;
  Clock& clock;
  runtime::ControllerManager& manager;
  SharedInformers& informers;
  runtime::EventRecorder& events;
  const SimulationOptions& options;
  WorkloadDemand& demand;
};

// A controller of a member. Constructed with the ControllerContext before
// the manager starts; destroyed after the manager stopped.
class Component {
 public:
  virtual ~Component() = default;
};

}  // namespace flotilla::member
