#include "member/services/endpoints_controller.h"

#include <algorithm>
#include <map>

#include "api/labels.h"
#include "member/object_util.h"
#include "member/services/endpoint_util.h"

namespace flotilla::member {
namespace {

// One address and whether it is ready, with the ports it serves.
struct Address {
  json::object address;
  bool ready = false;
  json::array ports;
};

// Endpoints ports of `service` as `pod` resolves them; a port the pod does
// not have is left out.
json::array PortsIn(const json::object& pod, const json::object& service) {
  json::array out;
  const json::value* ports = Find(service, "spec.ports");
  if (ports == nullptr || !ports->is_array()) return out;
  for (const json::value& p : ports->get_array()) {
    if (!p.is_object()) continue;
    const json::object& sp = p.get_object();
    std::optional<int64_t> number = services::ResolvePort(pod, sp);
    if (!number) continue;
    json::object port{{"port", *number}};
    if (std::string name = StringAt(sp, "name"); !name.empty()) port["name"] = name;
    std::string protocol = StringAt(sp, "protocol");
    port["protocol"] = protocol.empty() ? "TCP" : protocol;
    if (std::string app = StringAt(sp, "appProtocol"); !app.empty()) port["appProtocol"] = app;
    out.push_back(std::move(port));
  }
  std::sort(out.begin(), out.end(),
            [](const json::value& a, const json::value& b) { return ToJson(a) < ToJson(b); });
  return out;
}

json::array SortedByIp(std::vector<json::object> addresses) {
  std::sort(addresses.begin(), addresses.end(), [](const json::object& a, const json::object& b) {
    return std::make_pair(StringAt(a, "ip"), StringAt(a, "targetRef.uid")) <
           std::make_pair(StringAt(b, "ip"), StringAt(b, "targetRef.uid"));
  });
  return json::array(addresses.begin(), addresses.end());
}

// RepackSubsets: addresses that serve the same ports share one subset.
json::array Subsets(const std::vector<Address>& addresses) {
  std::map<std::string, std::pair<std::vector<json::object>, std::vector<json::object>>> groups;
  std::map<std::string, json::array> ports_of;
  for (const Address& a : addresses) {
    std::string key = ToJson(a.ports);
    ports_of[key] = a.ports;
    auto& [ready, not_ready] = groups[key];
    (a.ready ? ready : not_ready).push_back(a.address);
  }
  json::array out;
  for (auto& [key, group] : groups) {
    json::object subset;
    if (!group.first.empty()) subset["addresses"] = SortedByIp(group.first);
    if (!group.second.empty()) subset["notReadyAddresses"] = SortedByIp(group.second);
    if (!ports_of[key].empty()) subset["ports"] = ports_of[key];
    out.push_back(std::move(subset));
  }
  return out;
}

json::object Labels(const json::object& service) {
  json::object labels;
  if (const json::value* l = Find(service, "metadata.labels"); l != nullptr && l->is_object()) {
    labels = l->get_object();
  }
  if (services::IsHeadless(service)) labels["service.kubernetes.io/headless"] = "";
  return labels;
}

}  // namespace

EndpointsController::EndpointsController(ControllerContext& ctx)
    : client_(ctx.client),
      services_(ctx.informers.For(kServices)),
      pods_(ctx.informers.For(kPods)),
      endpoints_(ctx.informers.For(kEndpoints)) {
  runtime::Controller& c = ctx.manager.AddController(
      "endpoints", 2, [this](const std::string& key) { return Reconcile(key); });
  services::EnqueueServicesAndTheirPods(services_, pods_, c);
  endpoints_.AddEventHandler(c.EnqueueHandler());
}

StatusOr<runtime::Result> EndpointsController::Reconcile(const std::string& key) {
  size_t slash = key.find('/');
  std::string ns = key.substr(0, slash);
  std::string name = slash == std::string::npos ? key : key.substr(slash + 1);
  runtime::ObjectPtr service = services_.cache().Get(key);
  runtime::ObjectPtr current = endpoints_.cache().Get(key);
  if (service == nullptr) {
    if (current == nullptr) return runtime::Result{};
    // The service cache may lag behind Endpoints written just after their
    // service (a selector-less service's Endpoints are the user's): only a
    // service the API server does not have loses its Endpoints.
    StatusOr<json::object> live = client_.Get(kServices, ns, name);
    if (live.ok()) return runtime::Result{};
    if (!live.status().Is(Reason::kNotFound)) return live.status();
    Status s = client_.Delete(kEndpoints, ns, name);
    if (!s.ok() && !s.Is(Reason::kNotFound)) return s;
    return runtime::Result{};
  }
  const json::object* selector = services::SelectorOf(*service);
  if (selector == nullptr || !StringAt(*service, "metadata.deletionTimestamp").empty()) {
    return runtime::Result{};
  }
  bool tolerate_unready = services::PublishesNotReady(*service);
  bool no_ports = Find(*service, "spec.ports") == nullptr ||
                  !Find(*service, "spec.ports")->is_array() ||
                  Find(*service, "spec.ports")->get_array().empty();
  std::vector<Address> addresses;
  for (const runtime::ObjectPtr& pod : pods_.lister().List(ns)) {
    if (!services::Selects(*selector, *pod) || !services::HasEndpoint(*pod)) continue;
    if (services::IsTerminating(*pod) && !tolerate_unready) continue;
    Address a;
    a.address = json::object{{"ip", StringAt(*pod, "status.podIP")}};
    if (std::string host = services::HostnameFor(*pod, *service); !host.empty()) {
      a.address["hostname"] = host;
    }
    if (std::string node = StringAt(*pod, "spec.nodeName"); !node.empty())
      a.address["nodeName"] = node;
    a.address["targetRef"] = services::PodReference(*pod);
    a.ready = tolerate_unready || services::IsReady(*pod);
    a.ports = PortsIn(*pod, *service);
    // A pod that resolves none of the service's ports serves nothing,
    // unless the service is headless without ports.
    if (a.ports.empty() && !(no_ports && services::IsHeadless(*service))) continue;
    addresses.push_back(std::move(a));
  }
  json::object wanted{{"apiVersion", "v1"},
                      {"kind", "Endpoints"},
                      {"metadata", json::object{{"name", name}, {"namespace", ns}}}};
  json::object labels = Labels(*service);
  if (!labels.empty()) wanted["metadata"].as_object()["labels"] = labels;
  json::array subsets = Subsets(addresses);
  if (!subsets.empty()) wanted["subsets"] = std::move(subsets);

  if (current == nullptr) {
    StatusOr<json::object> made = client_.Create(kEndpoints, ns, wanted);
    if (!made.ok() && !made.status().Is(Reason::kAlreadyExists)) return made.status();
    if (!made.ok()) return Status::Conflict("endpoints " + key + " exist but are not cached yet");
    return runtime::Result{};
  }
  const json::value* have_subsets = current->if_contains("subsets");
  const json::value* want_subsets = wanted.if_contains("subsets");
  bool same_subsets =
      (have_subsets == nullptr || (have_subsets->is_array() && have_subsets->get_array().empty()))
          ? want_subsets == nullptr
          : want_subsets != nullptr && *have_subsets == *want_subsets;
  const json::value* have_labels = Find(*current, "metadata.labels");
  bool same_labels = have_labels == nullptr
                         ? labels.empty()
                         : have_labels->is_object() && have_labels->get_object() == labels;
  if (same_subsets && same_labels) return runtime::Result{};
  json::object updated = *current;
  json::object& meta = updated["metadata"].as_object();
  if (labels.empty()) {
    meta.erase("labels");
  } else {
    meta["labels"] = labels;
  }
  if (want_subsets != nullptr) {
    updated["subsets"] = *want_subsets;
  } else {
    updated.erase("subsets");
  }
  StatusOr<json::object> written = client_.Update(kEndpoints, ns, updated);
  if (!written.ok() && !written.status().Is(Reason::kNotFound)) return written.status();
  return runtime::Result{};
}

}  // namespace flotilla::member
