// The member's EndpointSlice controller (pkg/controller/endpointslice): for
// every service with a selector, discovery.k8s.io/v1 EndpointSlices of
// addressType IPv4, labelled kubernetes.io/service-name and
// endpointslice.kubernetes.io/managed-by endpointslice-controller.k8s.io
// and owned by the service. Each selected pod with an IP is an endpoint with
// conditions ready (Ready and not terminating), serving (Ready) and
// terminating, its targetRef, nodeName, the zone of its node
// (topology.kubernetes.io/zone) and, for a pod whose subdomain is the
// service, its hostname. Endpoints that resolve the service's ports alike
// share slices of at most 100; a service without endpoints keeps one empty
// slice, as Kubernetes does. Slices are named "<service>-<5 characters>"
// derived from the service's uid, so a retry never makes a second slice.
#pragma once

#include "member/context.h"

namespace flotilla::member {

class EndpointSliceController : public Component {
 public:
  explicit EndpointSliceController(ControllerContext& ctx);

  static constexpr size_t kMaxEndpointsPerSlice = 100;
  static constexpr std::string_view kManagedBy = "endpointslice-controller.k8s.io";

 private:
  StatusOr<runtime::Result> Reconcile(const std::string& key);
  json::object Endpoint(const json::object& pod, const json::object& service) const;

  client::Client& client_;
  runtime::Informer& services_;
  runtime::Informer& pods_;
  runtime::Informer& nodes_;
  runtime::Informer& slices_;
};

}  // namespace flotilla::member
