#include "apiserver/service_ports.h"

#include <set>

namespace flotilla::apiserver {
namespace {

bool NeedsNodePorts(const json::object& service) {
  std::string type = StringAt(service, "spec.type");
  if (type == "NodePort") return true;
  if (type != "LoadBalancer") return false;
  const json::value* allocate = Find(service, "spec.allocateLoadBalancerNodePorts");
  return allocate == nullptr || !allocate->is_bool() || allocate->get_bool();
}

json::array* Ports(json::object& service) {
  json::value* spec = service.if_contains("spec");
  if (spec == nullptr || !spec->is_object()) return nullptr;
  json::value* ports = spec->get_object().if_contains("ports");
  return ports != nullptr && ports->is_array() ? &ports->get_array() : nullptr;
}

int64_t NodePortOf(const json::object& port) {
  const json::value* v = port.if_contains("nodePort");
  return v != nullptr && v->is_int64() ? v->get_int64() : 0;
}

// The current port that `port` updates: same port number and protocol.
int64_t PreviousNodePort(const json::object& current, const json::object& port) {
  const json::value* ports = Find(current, "spec.ports");
  if (ports == nullptr || !ports->is_array()) return 0;
  for (const json::value& p : ports->get_array()) {
    if (!p.is_object()) continue;
    const json::object& old = p.get_object();
    if (old.if_contains("port") != nullptr && port.if_contains("port") != nullptr &&
        old.at("port") == port.at("port") &&
        StringAt(old, "protocol") == StringAt(port, "protocol")) {
      return NodePortOf(old);
    }
  }
  return 0;
}

std::set<int64_t> TakenNodePorts(storage::Store& store, const std::string& prefix,
                                 const std::string& self_uid) {
  std::set<int64_t> taken;
  StatusOr<storage::ListResult> all = store.List(prefix, {});
  if (!all.ok()) return taken;
  for (const storage::KeyValue& kv : all->items) {
    StatusOr<json::object> svc = ParseJsonObject(kv.value);
    if (!svc.ok() || (!self_uid.empty() && StringAt(*svc, "metadata.uid") == self_uid)) continue;
    if (json::array* ports = Ports(*svc)) {
      for (const json::value& p : *ports) {
        if (p.is_object() && NodePortOf(p.get_object()) != 0)
          taken.insert(NodePortOf(p.get_object()));
      }
    }
  }
  return taken;
}

}  // namespace

void AllocateNodePorts(storage::Store& store, const std::string& services_prefix,
                       const json::object* current, json::object& service, uint64_t seed) {
  json::array* ports = Ports(service);
  if (ports == nullptr) return;
  if (!NeedsNodePorts(service)) {
    // A type change away from NodePort/LoadBalancer drops the node ports the
    // user did not change.
    if (current == nullptr || !NeedsNodePorts(*current)) return;
    for (json::value& p : *ports) {
      if (!p.is_object()) continue;
      json::object& port = p.get_object();
      int64_t node_port = NodePortOf(port);
      if (node_port != 0 && node_port == PreviousNodePort(*current, port)) port.erase("nodePort");
    }
    return;
  }
  bool missing = false;
  for (json::value& p : *ports) {
    if (!p.is_object() || NodePortOf(p.get_object()) != 0) continue;
    json::object& port = p.get_object();
    if (current != nullptr) {
      if (int64_t previous = PreviousNodePort(*current, port)) {
        port["nodePort"] = previous;
        continue;
      }
    }
    missing = true;
  }
  if (!missing) return;
  std::set<int64_t> taken =
      TakenNodePorts(store, services_prefix, StringAt(service, "metadata.uid"));
  for (json::value& p : *ports) {
    if (p.is_object() && NodePortOf(p.get_object()) != 0) taken.insert(NodePortOf(p.get_object()));
  }
  constexpr int64_t kSpan = kNodePortMax - kNodePortMin + 1;
  int64_t next = static_cast<int64_t>(seed % kSpan);
  for (json::value& p : *ports) {
    if (!p.is_object() || NodePortOf(p.get_object()) != 0) continue;
    for (int64_t tried = 0; tried < kSpan; ++tried, next = (next + 1) % kSpan) {
      if (!taken.contains(kNodePortMin + next)) {
        p.get_object()["nodePort"] = kNodePortMin + next;
        taken.insert(kNodePortMin + next);
        break;
      }
    }
  }
}

}  // namespace flotilla::apiserver
