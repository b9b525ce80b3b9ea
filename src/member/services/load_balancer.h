// The member's service controller for `type: LoadBalancer` (what a cloud
// provider's load balancer controller does, in the spirit of MetalLB):
// every LoadBalancer service gets one address of the member's pool
// (SimulationOptions::lb_cidr) as status.loadBalancer.ingress[{ip}], the
// requested spec.loadBalancerIP when it is in the pool and free. Addresses
// are unique within the member and free again when the service is deleted
// or stops being a LoadBalancer (its ingress is then cleared). A service
// for which no address is left stays <pending> with a Warning event and is
// tried again when an address is freed, and every kRetryWhenFull. Services
// with a spec.loadBalancerClass belong to another implementation and are
// left alone, as the cloud service controller leaves them. Events EnsuringLoadBalancer /
// EnsuredLoadBalancer as the cloud service controller records them.
//
// It is the member's ingress controller too (in the manner of a cloud's,
// which gives each Ingress a load balancer of its own): every
// networking.k8s.io/v1 Ingress, whatever its class, gets one address of the
// same pool in status.loadBalancer.ingress[{ip}], freed when it is deleted.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "base/mutex.h"
#include "member/context.h"

namespace flotilla::member {

// An IPv4 CIDR's host addresses, lowest first (network and broadcast
// addresses excluded below /31).
class AddressPool {
 public:
  // nullopt for anything but "a.b.c.d/n".
  static std::optional<AddressPool> Parse(std::string_view cidr);
  bool Contains(std::string_view ip) const;
  uint32_t first() const { return first_; }
  uint32_t last() const { return last_; }
  static std::optional<uint32_t> ParseIp(std::string_view ip);
  // The `n`th range of the same size after `cidr` (n = 0: `cidr` itself):
  // Nth("172.18.0.0/24", 2) = "172.18.2.0/24"; nullopt when `cidr` does not
  // parse or the range would leave the address space. Each of several
  // members gets its own addresses.
  static std::optional<std::string> Nth(std::string_view cidr, int n);
  static std::string FormatIp(uint32_t ip);

 private:
  uint32_t first_ = 0;
  uint32_t last_ = 0;
};

class LoadBalancerController : public Component {
 public:
  explicit LoadBalancerController(ControllerContext& ctx);

  static constexpr Duration kRetryWhenFull = std::chrono::seconds(30);
  static constexpr std::string_view kIngressKeyPrefix = "ingress:";

 private:
  StatusOr<runtime::Result> Reconcile(const std::string& key);
  // An Ingress (queued as kIngressKeyPrefix + its key).
  StatusOr<runtime::Result> ReconcileIngress(const std::string& key);
  // The address `key` may use: its requested one, else the lowest free.
  std::optional<std::string> Allocate(const std::string& key, const json::object& service);
  void Record(const json::object& service, std::string_view type, std::string_view reason,
              const std::string& message);
  // Re-queues the LoadBalancer services and Ingresses still waiting for an
  // address.
  void RetryPending();

  client::Client& client_;
  runtime::EventRecorder& events_;
  runtime::Informer& services_;
  runtime::Informer& ingresses_;
  runtime::WorkQueue* queue_ = nullptr;
  const std::string cidr_;
  const std::optional<AddressPool> pool_;
  Mutex mu_;
  // Service key, or kIngressKeyPrefix + Ingress key -> ip.
  std::map<std::string, std::string> assigned_ GUARDED_BY(mu_);
};

}  // namespace flotilla::member
