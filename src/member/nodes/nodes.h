// The member's simulated nodes, as their kubelets would keep them: at start
// it creates the `options.nodes` nodes "<cluster_name>-node-<i>" that do not
// exist yet, registers every node it sees (its own and those created later
// by anyone, e.g. the admin endpoint), and keeps each alive:
// - every quarter of options.node_lease_duration_seconds (10 s of 40 by
//   default) it renews the node's Lease in kube-node-lease (holder = node
//   name, owned by the Node so it goes with it);
// - every kStatusReportInterval it renews the conditions' lastHeartbeatTime.
// Both fall due on whole seconds (DueOnWholeSecond, at most a second early), so
// that one wake-up of a process of many clusters renews all that are due.
// Registration only fills in what is missing (labels kubernetes.io/hostname,
// os, arch; capacity and allocatable from the options; the MemoryPressure,
// DiskPressure, PIDPressure and Ready conditions; nodeInfo; addresses;
// daemonEndpoints), and the heartbeat patches only the conditions' heartbeat
// times, so capacity, allocatable, labels and taints that someone else set
// are never overwritten. A node deleted by someone stays deleted.
//
// InternalIPs come from 10.0.0.0/16 (10.0.0.2 up), one per node.
#pragma once

#include <map>
#include <set>
#include <string>

#include "base/mutex.h"
#include "client/resources.h"
#include "member/context.h"

namespace flotilla::member {

using client::kLeases;
inline constexpr std::string_view kNodeLeaseNamespace = "kube-node-lease";

class Nodes : public Component {
 public:
  static constexpr Duration kStatusReportInterval = std::chrono::minutes(5);

  explicit Nodes(ControllerContext& ctx);

 private:
  StatusOr<runtime::Result> Reconcile(const std::string& name);
  Status Create(const std::string& name);
  Status Register(const json::object& node);
  Status RenewLease(const json::object& node);
  std::string AddressFor(const std::string& name);
  // A quarter of the Lease's duration, as the kubelet renews it.
  Duration LeaseRenewInterval() const;

  client::Client& client_;
  Clock& clock_;
  const SimulationOptions& options_;
  runtime::Informer& nodes_;
  runtime::Controller* controller_ = nullptr;

  Mutex mu_;
  std::map<std::string, int> to_create_ GUARDED_BY(mu_);  // name -> index
  std::map<std::string, TimePoint> lease_renewed_ GUARDED_BY(mu_);
  std::map<std::string, std::string> addresses_ GUARDED_BY(mu_);  // given out
  std::set<std::string> given_ GUARDED_BY(mu_);                   // the addresses in addresses_
  uint32_t next_host_ GUARDED_BY(mu_) = 2;  // where AddressFor's search starts
};

}  // namespace flotilla::member
