#include "member/services/endpoint_util.h"

#include "api/conditions.h"
#include "member/object_util.h"

namespace flotilla::member::services {

const json::object* SelectorOf(const json::object& service) {
  const json::value* s = Find(service, "spec.selector");
  if (s == nullptr || !s->is_object() || s->get_object().empty()) return nullptr;
  return &s->get_object();
}

bool Selects(const json::object& selector, const json::object& pod) {
  const json::value* labels = Find(pod, "metadata.labels");
  if (labels == nullptr || !labels->is_object()) return false;
  for (const auto& [key, want] : selector) {
    const json::value* have = labels->get_object().if_contains(key);
    if (have == nullptr || *have != want) return false;
  }
  return true;
}

bool IsHeadless(const json::object& service) {
  return StringAt(service, "spec.clusterIP") == "None";
}

bool PublishesNotReady(const json::object& service) {
  const json::value* v = Find(service, "spec.publishNotReadyAddresses");
  return v != nullptr && v->is_bool() && v->get_bool();
}

bool HasEndpoint(const json::object& pod) {
  std::string phase = StringAt(pod, "status.phase");
  return !StringAt(pod, "status.podIP").empty() && phase != "Failed" && phase != "Succeeded";
}

bool IsReady(const json::object& pod) { return api::ConditionTrue(pod, "Ready"); }

bool IsTerminating(const json::object& pod) {
  return !StringAt(pod, "metadata.deletionTimestamp").empty();
}

std::optional<int64_t> ResolvePort(const json::object& pod, const json::object& service_port) {
  const json::value* target = service_port.if_contains("targetPort");
  if (target == nullptr || target->is_null()) target = service_port.if_contains("port");
  if (target == nullptr) return std::nullopt;
  if (target->is_int64()) return target->get_int64();
  if (!target->is_string()) return std::nullopt;
  std::string name(target->get_string());
  std::string protocol = StringAt(service_port, "protocol");
  if (protocol.empty()) protocol = "TCP";
  const json::value* containers = Find(pod, "spec.containers");
  if (containers == nullptr || !containers->is_array()) return std::nullopt;
  for (const json::value& c : containers->get_array()) {
    const json::value* ports = c.is_object() ? c.get_object().if_contains("ports") : nullptr;
    if (ports == nullptr || !ports->is_array()) continue;
    for (const json::value& p : ports->get_array()) {
      if (!p.is_object()) continue;
      std::string port_protocol = StringAt(p.get_object(), "protocol");
      if (port_protocol.empty()) port_protocol = "TCP";
      const json::value* number = p.get_object().if_contains("containerPort");
      if (StringAt(p.get_object(), "name") == name && port_protocol == protocol &&
          number != nullptr && number->is_int64()) {
        return number->get_int64();
      }
    }
  }
  return std::nullopt;
}

std::string HostnameFor(const json::object& pod, const json::object& service) {
  std::string hostname = StringAt(pod, "spec.hostname");
  if (hostname.empty() || StringAt(pod, "spec.subdomain") != StringAt(service, "metadata.name") ||
      StringAt(pod, "metadata.namespace") != StringAt(service, "metadata.namespace")) {
    return "";
  }
  return hostname;
}

json::object PodReference(const json::object& pod) {
  return json::object{{"kind", "Pod"},
                      {"namespace", StringAt(pod, "metadata.namespace")},
                      {"name", StringAt(pod, "metadata.name")},
                      {"uid", StringAt(pod, "metadata.uid")}};
}

std::vector<std::string> ServicesFor(const std::vector<runtime::ObjectPtr>& services,
                                     const json::object& pod) {
  std::vector<std::string> out;
  for (const runtime::ObjectPtr& svc : services) {
    const json::object* selector = SelectorOf(*svc);
    if (selector != nullptr && Selects(*selector, pod)) out.push_back(runtime::ObjectKey(*svc));
  }
  return out;
}

void EnqueueServicesAndTheirPods(runtime::Informer& services, runtime::Informer& pods,
                                 runtime::Controller& controller) {
  services.AddEventHandler(controller.EnqueueHandler());
  runtime::WorkQueue* queue = &controller.queue();
  runtime::Informer* svc = &services;
  auto enqueue = [queue, svc](const runtime::ObjectPtr& pod) {
    std::string ns = StringAt(*pod, "metadata.namespace");
    for (const std::string& key : ServicesFor(svc->lister().List(ns), *pod)) queue->Add(key);
  };
  pods.AddEventHandler(runtime::EventHandler{
      enqueue,
      [enqueue](const runtime::ObjectPtr& old_pod, const runtime::ObjectPtr& new_pod) {
        enqueue(old_pod);
        enqueue(new_pod);
      },
      enqueue});
}

}  // namespace flotilla::member::services
