// What the endpoints and EndpointSlice controllers share
// (pkg/controller/util/endpoint): which pods a service selects, which of
// them get an endpoint, their readiness, the port a service port resolves to
// in a pod (a number, or a container port found by name), the hostname a
// pod publishes under a headless service, and the services to re-check when
// a pod changes. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/json.h"
#include "member/object_util.h"
#include "runtime/cache.h"
#include "runtime/controller_manager.h"

namespace flotilla::member::services {

// The service's spec.selector as a LabelSelector string-map match; nullptr
// when the service has none (its endpoints are the user's).
const json::object* SelectorOf(const json::object& service);
bool Selects(const json::object& selector, const json::object& pod);

bool IsHeadless(const json::object& service);
bool PublishesNotReady(const json::object& service);

// A pod gets an endpoint once it has an IP and while it has not finished
// (Failed or Succeeded).
bool HasEndpoint(const json::object& pod);
bool IsReady(const json::object& pod);  // the Ready condition is True
bool IsTerminating(const json::object& pod);

// podutil.FindPort: the port `service_port` targets in `pod`.
std::optional<int64_t> ResolvePort(const json::object& pod, const json::object& service_port);

// The pod's spec.hostname when it is in the service's namespace and its
// spec.subdomain names the service; "" otherwise.
std::string HostnameFor(const json::object& pod, const json::object& service);

// {"kind":"Pod","namespace","name","uid"}.
json::object PodReference(const json::object& pod);

// Keys ("ns/name") of the services in `services` that select `pod`.
std::vector<std::string> ServicesFor(const std::vector<runtime::ObjectPtr>& services,
                                     const json::object& pod);

// Registers `controller` for every service change and, for every pod change,
// for the services (in `services`' cache) that select the pod before or
// after it.
void EnqueueServicesAndTheirPods(runtime::Informer& services, runtime::Informer& pods,
                                 runtime::Controller& controller);

}  // namespace flotilla::member::services
