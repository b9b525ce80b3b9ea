// The federation's DNS server (federation_dns.h).
#include "federation/dns/federation_dns.h"

#include "api/annotations.h"
#include "api/federated.h"
#include "federation/common/member_copy.h"

namespace flotilla::federation::dns {
namespace {

std::vector<std::string> Strings(const json::object& obj, std::string_view path) {
  std::vector<std::string> out;
  const json::value* v = Find(obj, path);
  if (v == nullptr || !v->is_array()) return out;
  for (const json::value& s : v->get_array()) {
    if (s.is_string()) out.emplace_back(s.get_string());
  }
  return out;
}

bool HasReadyAddress(const json::object& endpoints) {
  const json::value* subsets = Find(endpoints, "subsets");
  if (subsets == nullptr || !subsets->is_array()) return false;
  for (const json::value& s : subsets->get_array()) {
    if (!s.is_object()) continue;
    const json::value* a = s.get_object().if_contains("addresses");
    if (a != nullptr && a->is_array() && !a->get_array().empty()) return true;
  }
  return false;
}

}  // namespace

FederationDns::FederationDns(FederationContext& ctx, FederationDnsOptions options)
    : ctx_(ctx), options_(std::move(options)), services_(ctx.informers().For(kServices)) {
  runtime::EventHandler stale{
      .on_add = [this](const runtime::ObjectPtr&) { MarkStale(); },
      .on_update = [this](const runtime::ObjectPtr&, const runtime::ObjectPtr&) { MarkStale(); },
      .on_delete = [this](const runtime::ObjectPtr&) { MarkStale(); },
      .on_synced = [this] { MarkStale(); }};
  services_.AddEventHandler(stale);
  ctx.cluster_objects().AddEventHandler(stale);
  for (const client::ResourceRef* r : {&kServices, &kEndpoints}) {
    ctx.members().AddHandler(*r, [stale](const std::string&) { return stale; });
  }
  ctx.OnClusterChange([this] { MarkStale(); });
}

FederationDns::~FederationDns() { Stop(); }

Status FederationDns::Start() {
  std::shared_ptr<const ::flotilla::dns::Zone> first = Build();
  {
    std::lock_guard lock(mu_);
    zone_ = std::move(first);
  }
  ::flotilla::dns::ServerOptions server{.address = options_.address,
                                        .udp_threads = options_.udp_threads};
  FLOTILLA_ASSIGN_OR_RETURN(server_, ::flotilla::dns::Server::Start(
                                         server, [this] { return zone(); }, ctx_.metrics()));
  builder_ = std::thread([this] { BuildLoop(); });
  return Status::Ok();
}

void FederationDns::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (builder_.joinable()) builder_.join();
  if (server_) server_->Stop();
}

std::shared_ptr<const ::flotilla::dns::Zone> FederationDns::zone() const {
  std::lock_guard lock(mu_);
  return zone_;
}

uint64_t FederationDns::builds() const {
  std::lock_guard lock(mu_);
  return builds_;
}

void FederationDns::MarkStale() {
  {
    std::lock_guard lock(mu_);
    stale_ = true;
  }
  changed_.notify_all();
}

void FederationDns::BuildLoop() {
  std::unique_lock lock(mu_);
  for (;;) {
    changed_.wait(lock, [this] { return stale_ || stopping_; });
    if (stopping_) return;
    stale_ = false;
    lock.unlock();
    std::shared_ptr<const ::flotilla::dns::Zone> next = Build();
    lock.lock();
    zone_ = std::move(next);
  }
}

std::shared_ptr<const ::flotilla::dns::Zone> FederationDns::Build() {
  uint32_t serial;
  {
    std::lock_guard lock(mu_);
    serial = ++serial_;
    ++builds_;
  }
  ::flotilla::dns::ZoneBuilder zone(::flotilla::dns::ZoneOptions{
      .apex = options_.names.domain, .ttl = options_.ttl, .serial = serial});
  std::vector<ClusterFacts> clusters;
  for (const runtime::ObjectPtr& c : ctx_.cluster_objects().lister().List()) {
    std::string name = StringAt(*c, "metadata.name");
    clusters.push_back(ClusterFacts{.name = name,
                                    .ready = ctx_.clusters().Get(name) != nullptr,
                                    .region = StringAt(*c, "status.region"),
                                    .zones = Strings(*c, "status.zones")});
  }
  std::vector<runtime::ObjectPtr> services = services_.lister().List();
  // Stateful pods' own Services (placed in one cluster): their addresses
  // while that cluster is Ready.
  std::map<std::string, std::vector<std::string>> pod_addresses;
  for (const runtime::ObjectPtr& svc : services) {
    std::string cluster = api::AnnotationAt(*svc, api::kPlacementClusterAnnotation);
    if (cluster.empty() || ctx_.clusters().Get(cluster) == nullptr) continue;
    pod_addresses[StringAt(*svc, "metadata.name")] = IngressOf(*svc).ips;
  }
  for (const runtime::ObjectPtr& svc : services) {
    std::string ns = StringAt(*svc, "metadata.namespace");
    std::string name = StringAt(*svc, "metadata.name");
    std::vector<CopyFacts> copies;
    for (const std::string& cluster : ctx_.members().Clusters()) {
      auto member_services = ctx_.members().Get(cluster, kServices.resource);
      auto member_endpoints = ctx_.members().Get(cluster, kEndpoints.resource);
      if (member_services == nullptr) continue;
      runtime::ObjectPtr copy = member_services->lister().Get(ns, name);
      if (copy == nullptr || !IsManaged(*copy)) continue;
      runtime::ObjectPtr eps =
          member_endpoints != nullptr ? member_endpoints->lister().Get(ns, name) : nullptr;
      copies.push_back(CopyFacts{.cluster = cluster,
                                 .service = *copy,
                                 .ready_endpoint = eps != nullptr && HasReadyAddress(*eps)});
    }
    AddServiceRecords(zone, options_.names, clusters, *svc, copies, pod_addresses);
  }
  return zone.Build();
}

}  // namespace flotilla::federation::dns
