// A member's cluster DNS (cluster_dns.h).
#include "member/dns/cluster_dns.h"

#include <map>

#include "api/service_dns.h"
#include "dns/stale_handler.h"

namespace flotilla::member {

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
        for (const std::string& ip : api::ReadyAddresses(*e->second)) zone.AddAddress(fqdn, ip);
      }
      for (const auto& [host, ip] : hosts[ns + "/" + name]) {
        std::string pod = host + "." + fqdn;
        zone.AddAddress(pod, ip);
        targets.push_back(pod);
      }
    }
    for (const api::NamedPort& p : api::NamedPorts(*s)) {
      for (const std::string& t : targets) {
        zone.AddSrv("_" + p.name + "._" + p.protocol + "." + fqdn,
                    dns::SrvRecord{.priority = 0,
                                   .weight = static_cast<uint16_t>(100 / targets.size()),
                                   .port = static_cast<uint16_t>(p.port),
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
