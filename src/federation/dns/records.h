// The federation's DNS records (seeds 003 and 002; docs/dns.md): what the
// zone says about each federated Service, from facts the caches hold.
//
// With F the federation name and D the DNS domain, a Service that is not
// headless has
//   global    <svc>.<ns>.F.svc.D
//   regional  <svc>.<ns>.F.svc.<region>.D           every region of a cluster
//   zonal     <svc>.<ns>.F.svc.<zone>.<region>.D    every zone of a cluster
// whose A/AAAA records are the load-balancer IPs of the healthy copies (the
// cluster Ready, the copy with a ready endpoint) in that scope. A zone
// without one is a CNAME to its region's name, a region without one a
// CNAME to the global name. A scope whose healthy copies have only
// hostname ingresses is a CNAME to the first hostname (a name is either
// addresses or an alias). Each named port has `_<port>._<proto>.<name>`
// SRV records at each level, whose target is the nearest level with
// addresses (never an alias, RFC 2782).
//
// A headless Service whose federation.kubernetes.io/stateful-replica-list
// names stateful pods has, per pod with a load-balancer address, an A
// record at <pod>.<svc>.<ns>.F.svc.D (its own Service's address), SRV
// records at <svc>.<ns>.F.svc.D (and per named port) with those targets,
// and all of the pods' addresses at <svc>.<ns>.F.svc.D.
//
// Pure: no I/O.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/json.h"
#include "dns/zone.h"

namespace flotilla::federation::dns {

struct DnsNames {
  std::string domain = "flotilla.local";
  std::string federation = "flotilla";

  std::string Global(const std::string& ns, const std::string& svc) const;
  std::string Regional(const std::string& ns, const std::string& svc,
                       const std::string& region) const;
  std::string Zonal(const std::string& ns, const std::string& svc, const std::string& zone,
                    const std::string& region) const;
  // <pod>.<svc>.<ns>.F.svc.D
  std::string Pod(const std::string& ns, const std::string& svc, const std::string& pod) const;
};

struct ClusterFacts {
  std::string name;
  bool ready = false;
  std::string region;
  std::vector<std::string> zones;

  bool operator==(const ClusterFacts&) const = default;
};

// What the zone reads of a Cluster object: its name, status.region and
// status.zones. `ready` is left false: the registry says it (a Cluster's
// conditions can lag it). A Cluster update whose facts are the same (a
// probe's times, its federated-object count) leaves the zone as it is.
ClusterFacts ClusterFactsOf(const json::object& cluster);

// A member's copy of a federated Service.
struct CopyFacts {
  std::string cluster;
  json::object service;         // the member's Service (its load-balancer ingress)
  bool ready_endpoint = false;  // its Endpoints have a ready address
};

// Adds the records of the federated Service `service`. `copies` are its
// member copies; `pod_addresses` maps a stateful pod ("namespace/name") to
// the addresses of its own Service (healthy ones only).
void AddServiceRecords(::flotilla::dns::ZoneBuilder& zone, const DnsNames& names,
                       const std::vector<ClusterFacts>& clusters, const json::object& service,
                       const std::vector<CopyFacts>& copies,
                       const std::map<std::string, std::vector<std::string>>& pod_addresses);

// Adds the records of the federated Ingress `ingress`: every rules[].host
// (a wildcard one as the zone's wildcard name) has A/AAAA records of the addresses in its
// status.loadBalancer (the clusters that serve it, ingress/
// ingress_controller.h), or, when it has only hostnames, a CNAME to the
// first. A host outside the zone's domain is not answered (the builder
// skips it).
void AddIngressRecords(::flotilla::dns::ZoneBuilder& zone, const json::object& ingress);

// The IPs and hostnames of a Service's (or an Ingress's) status.loadBalancer.ingress.
struct Ingress {
  std::vector<std::string> ips, hostnames;
};
Ingress IngressOf(const json::object& service);

}  // namespace flotilla::federation::dns
