// The member's endpoints controller (pkg/controller/endpoint): for every
// service with a selector, a v1 Endpoints of the same name whose subsets
// list the selected pods that have an IP, ready ones under addresses and the
// others under notReadyAddresses (all under addresses with
// publishNotReadyAddresses), each with its targetRef, nodeName and, for a
// pod whose subdomain is the service, hostname; ports are the service's
// ports resolved in each pod (targetPort by number or by container port
// name). Terminating pods are left out. Services without a selector are the
// user's to fill; the Endpoints of a deleted service is deleted.
#pragma once

#include "member/context.h"

namespace flotilla::member {

class EndpointsController : public Component {
 public:
  explicit EndpointsController(ControllerContext& ctx);

 private:
  StatusOr<runtime::Result> Reconcile(const std::string& key);

  client::Client& client_;
  runtime::Informer& services_;
  runtime::Informer& pods_;
  runtime::Informer& endpoints_;
};

}  // namespace flotilla::member
