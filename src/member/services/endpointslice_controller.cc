#include "member/services/endpointslice_controller.h"

#include <map>

#include "api/owner.h"
#include "member/object_util.h"
#include "member/services/endpoint_util.h"

namespace flotilla::member {
namespace {

constexpr std::string_view kServiceNameLabel = "kubernetes.io/service-name";
constexpr std::string_view kManagedByLabel = "endpointslice.kubernetes.io/managed-by";

// EndpointSlice ports of `service` as `pod` resolves them (name "" when
// unnamed, as the slice controller writes them).
json::array SlicePorts(const json::object& pod, const json::object& service) {
  json::array out;
  const json::value* ports = Find(service, "spec.ports");
  if (ports == nullptr || !ports->is_array()) return out;
  for (const json::value& p : ports->get_array()) {
    if (!p.is_object()) continue;
    const json::object& sp = p.get_object();
    std::optional<int64_t> number = services::ResolvePort(pod, sp);
    if (!number) continue;
    std::string protocol = StringAt(sp, "protocol");
    json::object port{{"name", StringAt(sp, "name")},
                      {"port", *number},
                      {"protocol", protocol.empty() ? "TCP" : protocol}};
    if (std::string app = StringAt(sp, "appProtocol"); !app.empty()) port["appProtocol"] = app;
    out.push_back(std::move(port));
  }
  return out;
}

// The i-th slice's name: "<service>-" and five characters of the alphabet
// rand.String uses, from FNV-1a of the service's uid and i.
std::string SliceName(const json::object& service, size_t i) {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::string seed = StringAt(service, "metadata.uid") + "/" + std::to_string(i);
  uint32_t h = 2166136261u;
  for (unsigned char c : seed) {
    h ^= c;
    h *= 16777619u;
  }
  std::string name = StringAt(service, "metadata.name").substr(0, 57) + "-";
  for (int k = 0; k < 5; ++k) {
    name += kAlphabet[h % kAlphabet.size()];
    h /= kAlphabet.size();
  }
  return name;
}

json::object SliceMeta(const json::object& service, const std::string& name) {
  json::object labels;
  if (const json::value* l = Find(service, "metadata.labels"); l != nullptr && l->is_object()) {
    labels = l->get_object();
  }
  labels[kServiceNameLabel] = StringAt(service, "metadata.name");
  labels[kManagedByLabel] = EndpointSliceController::kManagedBy;
  if (services::IsHeadless(service)) labels["service.kubernetes.io/headless"] = "";
  return json::object{
      {"name", name},
      {"namespace", StringAt(service, "metadata.namespace")},
      {"labels", std::move(labels)},
      {"ownerReferences", json::array{api::NewControllerRef(service, "v1", "Service")}}};
}

// Whether `have` (from the server) already says what `want` says.
bool SameSlice(const json::object& have, const json::object& want) {
  for (std::string_view field : {"endpoints", "ports", "addressType"}) {
    const json::value* a = have.if_contains(field);
    const json::value* b = want.if_contains(field);
    bool a_empty = a == nullptr || a->is_null() || (a->is_array() && a->get_array().empty());
    bool b_empty = b == nullptr || b->is_null() || (b->is_array() && b->get_array().empty());
    if (a_empty != b_empty || (!a_empty && *a != *b)) return false;
  }
  const json::value* labels = Find(have, "metadata.labels");
  return labels != nullptr && *labels == *Find(want, "metadata.labels");
}

// The node's topology.kubernetes.io/zone label, "" without one.
std::string ZoneOf(const json::object& node) {
  const json::value* labels = Find(node, "metadata.labels");
  const json::value* zone = labels != nullptr && labels->is_object()
                                ? labels->get_object().if_contains("topology.kubernetes.io/zone")
                                : nullptr;
  return zone != nullptr && zone->is_string() ? std::string(zone->get_string()) : "";
}

}  // namespace

EndpointSliceController::EndpointSliceController(ControllerContext& ctx)
    : client_(ctx.client),
      services_(ctx.informers.For(kServices)),
      pods_(ctx.informers.For(kPods)),
      nodes_(ctx.informers.For(kNodes)),
      slices_(ctx.informers.For(kEndpointSlices)) {
  runtime::Controller& c = ctx.manager.AddController(
      "endpointslice", 2, [this](const std::string& key) { return Reconcile(key); });
  services::EnqueueServicesAndTheirPods(services_, pods_, c);
  runtime::WorkQueue* queue = &c.queue();
  auto enqueue_service = [queue](const runtime::ObjectPtr& slice) {
    const json::value* labels = Find(*slice, "metadata.labels");
    if (labels == nullptr || !labels->is_object()) return;
    const json::value* name = labels->get_object().if_contains(kServiceNameLabel);
    if (name != nullptr && name->is_string()) {
      queue->Add(runtime::ObjectKey(StringAt(*slice, "metadata.namespace"), name->get_string()));
    }
  };
  slices_.AddEventHandler(runtime::EventHandler{
      enqueue_service,
      [enqueue_service](const runtime::ObjectPtr&, const runtime::ObjectPtr& slice) {
        enqueue_service(slice);
      },
      enqueue_service});
  // Endpoints carry their node's zone: a node that appears, changes zone or
  // goes away re-checks every service (nodes change rarely; heartbeats do
  // not touch the zone).
  runtime::Informer* services = &services_;
  auto enqueue_all = [queue, services] {
    for (const runtime::ObjectPtr& svc : services->lister().List("")) {
      queue->Add(runtime::ObjectKey(*svc));
    }
  };
  nodes_.AddEventHandler(runtime::EventHandler{
      [enqueue_all](const runtime::ObjectPtr&) { enqueue_all(); },
      [enqueue_all](const runtime::ObjectPtr& old_node, const runtime::ObjectPtr& node) {
        if (ZoneOf(*old_node) != ZoneOf(*node)) enqueue_all();
      },
      [enqueue_all](const runtime::ObjectPtr&) { enqueue_all(); }});
}

json::object EndpointSliceController::Endpoint(const json::object& pod,
                                               const json::object& service) const {
  bool ready = services::IsReady(pod);
  bool terminating = services::IsTerminating(pod);
  bool publish = services::PublishesNotReady(service);
  json::object endpoint{{"addresses", json::array{json::value(StringAt(pod, "status.podIP"))}},
                        {"conditions", json::object{{"ready", publish || (ready && !terminating)},
                                                    {"serving", publish || ready},
                                                    {"terminating", terminating}}}};
  if (std::string host = services::HostnameFor(pod, service); !host.empty()) {
    endpoint["hostname"] = host;
  }
  if (std::string node = StringAt(pod, "spec.nodeName"); !node.empty()) {
    endpoint["nodeName"] = node;
    if (runtime::ObjectPtr n = nodes_.lister().Get("", node)) {
      if (std::string zone = ZoneOf(*n); !zone.empty()) endpoint["zone"] = zone;
    }
  }
  endpoint["targetRef"] = services::PodReference(pod);
  return endpoint;
}

StatusOr<runtime::Result> EndpointSliceController::Reconcile(const std::string& key) {
  runtime::ObjectPtr service = services_.cache().Get(key);
  // A deleted service's slices go with it: the service owns them.
  if (service == nullptr || !StringAt(*service, "metadata.deletionTimestamp").empty()) {
    return runtime::Result{};
  }
  const json::object* selector = services::SelectorOf(*service);
  if (selector == nullptr) return runtime::Result{};
  std::string ns = StringAt(*service, "metadata.namespace");

  // Endpoints grouped by the ports they resolve, in pod name order.
  std::map<std::string, std::pair<json::array, json::array>> groups;
  std::vector<std::string> order;
  for (const runtime::ObjectPtr& pod : pods_.lister().List(ns)) {
    if (!services::Selects(*selector, *pod) || !services::HasEndpoint(*pod)) continue;
    json::array ports = SlicePorts(*pod, *service);
    std::string group = ToJson(ports);
    if (!groups.contains(group)) order.push_back(group);
    auto& [group_ports, endpoints] = groups[group];
    group_ports = std::move(ports);
    endpoints.push_back(Endpoint(*pod, *service));
  }
  std::vector<json::object> wanted;
  for (const std::string& group : order) {
    const auto& [ports, endpoints] = groups[group];
    for (size_t i = 0; i < endpoints.size(); i += kMaxEndpointsPerSlice) {
      size_t end = std::min(endpoints.size(), i + kMaxEndpointsPerSlice);
      json::object slice{
          {"addressType", "IPv4"},
          {"endpoints", json::array(endpoints.begin() + i, endpoints.begin() + end)}};
      if (!ports.empty()) slice["ports"] = ports;
      wanted.push_back(std::move(slice));
    }
  }
  if (wanted.empty()) wanted.push_back(json::object{{"addressType", "IPv4"}});  // placeholder

  std::map<std::string, runtime::ObjectPtr> existing;
  for (const runtime::ObjectPtr& s :
       slices_.lister().ByLabel(kServiceNameLabel, StringAt(*service, "metadata.name"))) {
    const json::value* by = Find(*s, "metadata.labels");
    const json::value* managed =
        by != nullptr && by->is_object() ? by->get_object().if_contains(kManagedByLabel) : nullptr;
    if (StringAt(*s, "metadata.namespace") == ns && managed != nullptr && managed->is_string() &&
        managed->get_string() == kManagedBy) {
      existing[StringAt(*s, "metadata.name")] = s;
    }
  }
  for (size_t i = 0; i < wanted.size(); ++i) {
    std::string name = SliceName(*service, i);
    json::object slice{{"apiVersion", "discovery.k8s.io/v1"},
                       {"kind", "EndpointSlice"},
                       {"metadata", SliceMeta(*service, name)}};
    for (auto& [field, value] : wanted[i]) slice[field] = value;
    auto it = existing.find(name);
    if (it == existing.end()) {
      StatusOr<json::object> made = client_.Create(kEndpointSlices, ns, slice);
      if (!made.ok()) return made.status();  // AlreadyExists: the cache is behind; retry
      continue;
    }
    runtime::ObjectPtr have = it->second;
    existing.erase(it);
    if (SameSlice(*have, slice)) continue;
    json::object updated = *have;
    json::object& meta = updated["metadata"].as_object();
    meta["labels"] = slice["metadata"].as_object()["labels"];
    meta["ownerReferences"] = slice["metadata"].as_object()["ownerReferences"];
    for (std::string_view field : {"endpoints", "ports"}) {
      if (const json::value* v = slice.if_contains(field)) {
        updated[field] = *v;
      } else {
        updated.erase(field);
      }
    }
    StatusOr<json::object> written = client_.Update(kEndpointSlices, ns, updated);
    if (!written.ok()) return written.status();
  }
  for (const auto& [name, stale] : existing) {
    Status s = client_.Delete(kEndpointSlices, ns, name);
    if (!s.ok() && !s.Is(Reason::kNotFound)) return s;
  }
  return runtime::Result{};
}

}  // namespace flotilla::member
