// The federation's DNS records (records.h).
#include "federation/dns/records.h"

#include <algorithm>
#include <set>

#include "api/annotations.h"
#include "api/federated.h"
#include "api/service_dns.h"
#include "api/views.h"

namespace flotilla::federation::dns {
namespace {

using ::flotilla::dns::SrvRecord;
using ::flotilla::dns::ZoneBuilder;

// SRV records for every named port at `name`, one per target.
void AddSrv(ZoneBuilder& zone, const std::vector<api::NamedPort>& ports, const std::string& name,
            const std::vector<std::string>& targets, uint16_t weight) {
  for (const api::NamedPort& p : ports) {
    std::string owner = "_" + p.name + "._" + p.protocol + "." + name;
    for (const std::string& t : targets) {
      zone.AddSrv(
          owner,
          SrvRecord{
              .priority = 0, .weight = weight, .port = static_cast<uint16_t>(p.port), .target = t});
    }
  }
}

void AddStateful(ZoneBuilder& zone, const DnsNames& names, const json::object& service,
                 const std::map<std::string, std::vector<std::string>>& pod_addresses) {
  std::string ns(api::ObjectView(service).ns());
  std::string svc(api::ObjectView(service).name());
  std::string global = names.Global(ns, svc);
  std::vector<std::string> targets;
  std::string list = api::AnnotationAt(service, api::kStatefulReplicaListAnnotation);
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    std::string pod =
        list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? list.size() + 1 : comma + 1;
    pod.erase(0, pod.find_first_not_of(' '));
    pod.erase(pod.find_last_not_of(' ') + 1);
    auto addrs = pod_addresses.find(ns + "/" + pod);
    if (pod.empty() || addrs == pod_addresses.end() || addrs->second.empty()) continue;
    std::string name = names.Pod(ns, svc, pod);
    for (const std::string& ip : addrs->second) {
      zone.AddAddress(name, ip);
      zone.AddAddress(global, ip);
    }
    targets.push_back(name);
  }
  if (targets.empty()) return;
  std::vector<api::NamedPort> ports = api::NamedPorts(service);
  // The bare name's SRV records carry the first port.
  int64_t first = 0;
  if (const json::value* all = Find(service, "spec.ports"); all != nullptr && all->is_array() &&
                                                            !all->get_array().empty() &&
                                                            all->get_array()[0].is_object()) {
    first = IntAt(all->get_array()[0].get_object(), "port");
  }
  for (const std::string& t : targets) {
    zone.AddSrv(
        global,
        SrvRecord{.priority = 0, .weight = 10, .port = static_cast<uint16_t>(first), .target = t});
  }
  AddSrv(zone, ports, global, targets, 10);
}

}  // namespace

std::string DnsNames::Global(const std::string& ns, const std::string& svc) const {
  return svc + "." + ns + "." + federation + ".svc." + domain;
}

std::string DnsNames::Regional(const std::string& ns, const std::string& svc,
                               const std::string& region) const {
  return svc + "." + ns + "." + federation + ".svc." + region + "." + domain;
}

std::string DnsNames::Zonal(const std::string& ns, const std::string& svc, const std::string& zone,
                            const std::string& region) const {
  return svc + "." + ns + "." + federation + ".svc." + zone + "." + region + "." + domain;
}

std::string DnsNames::Pod(const std::string& ns, const std::string& svc,
                          const std::string& pod) const {
  return pod + "." + Global(ns, svc);
}

Ingress IngressOf(const json::object& service) {
  Ingress out;
  const json::value* ingress = Find(service, "status.loadBalancer.ingress");
  if (ingress == nullptr || !ingress->is_array()) return out;
  for (const json::value& i : ingress->get_array()) {
    if (!i.is_object()) continue;
    std::string ip = StringAt(i.get_object(), "ip");
    std::string host = StringAt(i.get_object(), "hostname");
    if (!ip.empty()) out.ips.push_back(ip);
    if (!host.empty()) out.hostnames.push_back(host);
  }
  return out;
}

void AddIngressRecords(ZoneBuilder& zone, const json::object& ingress) {
  Ingress in = IngressOf(ingress);
  const json::value* rules = Find(ingress, "spec.rules");
  if (rules == nullptr || !rules->is_array()) return;
  std::set<std::string> hosts;
  for (const json::value& rule : rules->get_array()) {
    if (!rule.is_object()) continue;
    std::string host = StringAt(rule.get_object(), "host");
    // A wildcard host ("*.shop.example", its only '*' the first label,
    // as the Ingress's validation has it) is a wildcard name of the zone.
    if (host.empty() || !hosts.insert(host).second) continue;
    if (!in.ips.empty()) {
      for (const std::string& ip : in.ips) zone.AddAddress(host, ip);
    } else if (!in.hostnames.empty()) {
      zone.AddCname(host, in.hostnames.front());
    }
  }
}

void AddServiceRecords(ZoneBuilder& zone, const DnsNames& names,
                       const std::vector<ClusterFacts>& clusters, const json::object& service,
                       const std::vector<CopyFacts>& copies,
                       const std::map<std::string, std::vector<std::string>>& pod_addresses) {
  if (api::ServiceView(service).cluster_ip() == "None") {
    AddStateful(zone, names, service, pod_addresses);
    return;
  }
  std::string ns(api::ObjectView(service).ns());
  std::string svc(api::ObjectView(service).name());
  std::map<std::string, const ClusterFacts*> by_name;
  for (const ClusterFacts& c : clusters) by_name[c.name] = &c;
  // The healthy answers in a scope: addresses, else hostnames.
  auto healthy = [&](const std::function<bool(const ClusterFacts&)>& in_scope) {
    Ingress out;
    std::set<std::string> seen;
    for (const CopyFacts& copy : copies) {
      auto c = by_name.find(copy.cluster);
      if (c == by_name.end() || !c->second->ready || !copy.ready_endpoint) continue;
      if (!in_scope(*c->second)) continue;
      Ingress i = IngressOf(copy.service);
      for (std::string& ip : i.ips) {
        if (seen.insert(ip).second) out.ips.push_back(std::move(ip));
      }
      for (std::string& h : i.hostnames) out.hostnames.push_back(std::move(h));
    }
    return out;
  };
  std::vector<api::NamedPort> ports = api::NamedPorts(service);
  // Writes `name`'s answers; returns the name SRV records there target
  // (itself, or what its alias stands for), "" when it has none.
  auto write = [&](const std::string& name, const Ingress& in, const std::string& fallback,
                   const std::string& fallback_target) -> std::string {
    if (!in.ips.empty()) {
      for (const std::string& ip : in.ips) zone.AddAddress(name, ip);
      return name;
    }
    if (!in.hostnames.empty()) {
      zone.AddCname(name, in.hostnames.front());
      return in.hostnames.front();
    }
    if (!fallback.empty()) zone.AddCname(name, fallback);
    return fallback_target;
  };
  std::string global = names.Global(ns, svc);
  Ingress everywhere = healthy([](const ClusterFacts&) { return true; });
  std::string global_target = write(global, everywhere, "", "");
  if (global_target.empty()) zone.AddName(global);  // exists, without addresses
  if (!global_target.empty()) AddSrv(zone, ports, global, {global_target}, 100);
  std::map<std::string, std::set<std::string>> regions;  // region -> zones
  for (const ClusterFacts& c : clusters) {
    if (c.region.empty()) continue;
    regions[c.region].insert(c.zones.begin(), c.zones.end());
  }
  // Not a structured binding: lambdas capture `region`, which Clang 14 (the
  // thread-safety pass, scripts/thread_safety) does not allow of one.
  for (const auto& entry : regions) {
    const std::string& region = entry.first;
    const std::set<std::string>& zones = entry.second;
    std::string regional = names.Regional(ns, svc, region);
    std::string regional_target =
        write(regional, healthy([&](const ClusterFacts& c) { return c.region == region; }), global,
              global_target);
    if (!regional_target.empty()) AddSrv(zone, ports, regional, {regional_target}, 100);
    for (const std::string& z : zones) {
      std::string zonal = names.Zonal(ns, svc, z, region);
      std::string zonal_target =
          write(zonal, healthy([&](const ClusterFacts& c) {
                  return c.region == region &&
                         std::find(c.zones.begin(), c.zones.end(), z) != c.zones.end();
                }),
                regional, regional_target);
      if (!zonal_target.empty()) AddSrv(zone, ports, zonal, {zonal_target}, 100);
    }
  }
}

ClusterFacts ClusterFactsOf(const json::object& cluster) {
  api::ClusterView view(cluster);
  return ClusterFacts{.name = std::string(view.name()),
                      .region = std::string(view.region()),
                      .zones = StringsAt(cluster, "status.zones")};
}

}  // namespace flotilla::federation::dns
