// What DNS reads of a Service and its Endpoints (the federation's DNS and
// each member's, docs/dns.md): the named ports that get SRV records and the
// ready addresses.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include "base/json.h"

namespace flotilla::api {

struct NamedPort {
  std::string name;
  std::string protocol;  // lowercase, "tcp" when unset
  int64_t port = 0;
};

// spec.ports entries with a name and a port in 1..65535.
inline std::vector<NamedPort> NamedPorts(const json::object& service) {
  std::vector<NamedPort> out;
  const json::value* ports = Find(service, "spec.ports");
  if (ports == nullptr || !ports->is_array()) return out;
  for (const json::value& p : ports->get_array()) {
    if (!p.is_object()) continue;
    NamedPort port{.name = StringAt(p.get_object(), "name"),
                   .protocol = StringAt(p.get_object(), "protocol"),
                   .port = IntAt(p.get_object(), "port")};
    std::transform(port.protocol.begin(), port.protocol.end(), port.protocol.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (port.protocol.empty()) port.protocol = "tcp";
    if (!port.name.empty() && port.port > 0 && port.port <= 65535) out.push_back(std::move(port));
  }
  return out;
}

// The IPs of an Endpoints object's ready addresses (subsets[].addresses).
inline std::vector<std::string> ReadyAddresses(const json::object& endpoints) {
  std::vector<std::string> out;
  const json::value* subsets = Find(endpoints, "subsets");
  if (subsets == nullptr || !subsets->is_array()) return out;
  for (const json::value& s : subsets->get_array()) {
    const json::value* a = s.is_object() ? s.get_object().if_contains("addresses") : nullptr;
    if (a == nullptr || !a->is_array()) continue;
    for (const json::value& addr : a->get_array()) {
      if (addr.is_object()) out.push_back(StringAt(addr.get_object(), "ip"));
    }
  }
  return out;
}

}  // namespace flotilla::api
