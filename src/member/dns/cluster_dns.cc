// A member's cluster DNS (cluster_dns.h).
#include "member/dns/cluster_dns.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "dns/stale_handler.h"

namespace flotilla::member {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Ready addresses of an Endpoints object.
std::vector<std::string> ReadyIps(const json::object& endpoints) {
  std::vector<std::string> out;
  const json::value* subsets = Find(endpoints, "subsets");
  if (subsets == nullptr || !subsets->is_array()) return out;
  for (const json::value& s : subsets->get_array()) {
    if (!s.is_object()) continue;
    const json::value* a = s.get_object().if_contains("addresses");
    if (a == nullptr || !a->is_array()) continue;
    for (const json::value& addr : a->get_array()) {
      if (addr.is_object()) out.push_back(StringAt(addr.get_object(), "ip"));
    }
  }
  return out;
}

}  // namespace

std::shared_ptr<const dns::Zone> BuildClusterZone(const ClusterDnsOptions& options, uint32_t serial,
                                                  const std::vector<runtime::ObjectPtr>& services,
                                                  const std::vector<runtime::ObjectPtr>& endpoints,
                                                  const std::vector<runtime::ObjectPtr>& pods) {
  dns::ZoneBuilder zone(
      dns::ZoneOptions{.apex = options.cluster_domain, .ttl = options.ttl, .serial = serial});
  std::map<std::string, const json::object*> eps;  // ns/name
  for (const runtime::ObjectPtr& e : endpoints) {
    eps[StringAt(*e, "metadata.namespace") + "/" + StringAt(*e, "metadata.name")] = e.get();
  }
  // Pods with a hostname in a subdomain: ns/subdomain -> {hostname, ip}.
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> hosts;
  for (const runtime::ObjectPtr& p : pods) {
    std::string host = StringAt(*p, "spec.hostname");
    std::string sub = StringAt(*p, "spec.subdomain");
    std::string ip = StringAt(*p, "status.podIP");
    if (host.empty() || sub.empty() || ip.empty()) continue;
    hosts[StringAt(*p, "metadata.namespace") + "/" + sub].emplace_back(host, ip);
  }
  for (const runtime::ObjectPtr& s : services) {
    std::string ns = StringAt(*s, "metadata.namespace");
    std::string name = StringAt(*s, "metadata.name");
    std::string fqdn = name + "." + ns + ".svc." + options.cluster_domain;
    std::string cluster_ip = StringAt(*s, "spec.clusterIP");
    bool headless = cluster_ip == "None";
    std::vector<std::string> targets;
    zone.AddName(fqdn);
    if (!headless && !cluster_ip.empty()) {
      zone.AddAddress(fqdn, cluster_ip);
      targets.push_back(fqdn);
    } else if (headless) {
      if (auto e = eps.find(ns + "/" + name); e != eps.end()) {
        for (const std::string& ip : ReadyIps(*e->second)) zone.AddAddress(fqdn, ip);
      }
      for (const auto& [host, ip] : hosts[ns + "/" + name]) {
        std::string pod = host + "." + fqdn;
        zone.AddAddress(pod, ip);
        targets.push_back(pod);
      }
    }
    const json::value* ports = Find(*s, "spec.ports");
    if (ports == nullptr || !ports->is_array()) continue;
    for (const json::value& p : ports->get_array()) {
      if (!p.is_object()) continue;
      std::string port_name = StringAt(p.get_object(), "name");
      int64_t port = IntAt(p.get_object(), "port");
      if (port_name.empty() || port <= 0 || port > 65535) continue;
      std::string proto = Lower(StringAt(p.get_object(), "protocol"));
      if (proto.empty()) proto = "tcp";
      for (const std::string& t : targets) {
        zone.AddSrv("_" + port_name + "._" + proto + "." + fqdn,
                    dns::SrvRecord{.priority = 0,
                                   .weight = static_cast<uint16_t>(100 / targets.size()),
                                   .port = static_cast<uint16_t>(port),
                                   .target = t});
      }
    }
  }
  return zone.Build();
}

ClusterDns::ClusterDns(ControllerContext& ctx, ClusterDnsOptions options,
                       metrics::Registry& registry)
    : options_(std::move(options)),
      registry_(registry),
      services_(ctx.informers.For(kServices)),
      endpoints_(ctx.informers.For(kEndpoints)),
      pods_(ctx.informers.For(kPods)),
      live_([this](uint32_t serial) {
        return BuildClusterZone(options_, serial, services_.lister().List(),
                                endpoints_.lister().List(), pods_.lister().List());
      }) {
  runtime::EventHandler stale = dns::StaleOn(live_);
  services_.AddEventHandler(stale);
  endpoints_.AddEventHandler(stale);
  pods_.AddEventHandler(stale);
}

Status ClusterDns::Start() {
  return live_.Start(
      dns::ServerOptions{.address = options_.address, .stub_domains = options_.stub_domains},
      registry_);
}

}  // namespace flotilla::member
