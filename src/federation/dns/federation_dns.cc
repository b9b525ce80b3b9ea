// The federation's DNS server (federation_dns.h).
#include "federation/dns/federation_dns.h"

#include "api/annotations.h"
#include "api/federated.h"
#include "api/service_dns.h"
#include "api/views.h"
#include "dns/stale_handler.h"
#include "federation/common/member_copy.h"

namespace flotilla::federation::dns {
FederationDns::FederationDns(FederationContext& ctx, FederationDnsOptions options)
    : ctx_(ctx),
      options_(std::move(options)),
      services_(ctx.informers().For(kServices)),
      ingresses_(ctx.informers().For(client::kIngresses)),
      live_([this](uint32_t serial) { return Build(serial); }) {
  runtime::EventHandler stale = ::flotilla::dns::StaleOn(live_);
  services_.AddEventHandler(stale);
  ingresses_.AddEventHandler(stale);
  // A Cluster's own updates are mostly its probes' and counts', which the
  // zone does not read.
  ctx.cluster_objects().AddEventHandler(
      {.on_add = stale.on_add,
       .on_update =
           [this](const runtime::ObjectPtr& a, const runtime::ObjectPtr& b) {
             if (ClusterFactsOf(*a) != ClusterFactsOf(*b)) live_.MarkStale();
           },
       .on_delete = stale.on_delete,
       .on_synced = stale.on_synced});
  for (const client::ResourceRef* r : {&kServices, &kEndpoints}) {
    ctx.members().AddHandler(*r, [stale](const std::string&) { return stale; });
  }
  ctx.OnClusterChange([this] { live_.MarkStale(); });
}

Status FederationDns::Start() {
  return live_.Start(::flotilla::dns::ServerOptions{.address = options_.address,
                                                    .udp_sockets = options_.udp_sockets},
                     ctx_.metrics());
}

std::shared_ptr<const ::flotilla::dns::Zone> FederationDns::Build(uint32_t serial) {
  ::flotilla::dns::ZoneBuilder zone(::flotilla::dns::ZoneOptions{
      .apex = options_.names.domain, .ttl = options_.ttl, .serial = serial});
  std::vector<ClusterFacts> clusters;
  for (const runtime::ObjectPtr& c : ctx_.cluster_objects().lister().List()) {
    ClusterFacts facts = ClusterFactsOf(*c);
    facts.ready = ctx_.clusters().Get(facts.name) != nullptr;
    clusters.push_back(std::move(facts));
  }
  std::vector<runtime::ObjectPtr> services = services_.lister().List();
  // Stateful pods' own Services (placed in one cluster): their addresses
  // while that cluster is Ready.
  std::map<std::string, std::vector<std::string>> pod_addresses;
  for (const runtime::ObjectPtr& svc : services) {
    std::string cluster = api::AnnotationAt(*svc, api::kPlacementClusterAnnotation);
    if (cluster.empty() || ctx_.clusters().Get(cluster) == nullptr) continue;
    pod_addresses[std::string(api::ObjectView(*svc).ns()) + "/" +
                  std::string(api::ObjectView(*svc).name())] = IngressOf(*svc).ips;
  }
  for (const runtime::ObjectPtr& svc : services) {
    std::string ns(api::ObjectView(*svc).ns());
    std::string name(api::ObjectView(*svc).name());
    std::vector<CopyFacts> copies;
    for (const std::string& cluster : ctx_.members().Clusters()) {
      auto member_services = ctx_.members().Get(cluster, kServices.resource);
      auto member_endpoints = ctx_.members().Get(cluster, kEndpoints.resource);
      if (member_services == nullptr) continue;
      runtime::ObjectPtr copy = member_services->lister().Get(ns, name);
      if (copy == nullptr || !IsManaged(*copy)) continue;
      runtime::ObjectPtr eps =
          member_endpoints != nullptr ? member_endpoints->lister().Get(ns, name) : nullptr;
      copies.push_back(
          CopyFacts{.cluster = cluster,
                    .service = *copy,
                    .ready_endpoint = eps != nullptr && !api::ReadyAddresses(*eps).empty()});
    }
    AddServiceRecords(zone, options_.names, clusters, *svc, copies, pod_addresses);
  }
  for (const runtime::ObjectPtr& ing : ingresses_.lister().List()) AddIngressRecords(zone, *ing);
  return zone.Build();
}

}  // namespace flotilla::federation::dns
