#include "member/services/load_balancer.h"

#include <charconv>
#include <set>

#include "base/mutex.h"
#include "member/object_util.h"
#include "member/services/endpoint_util.h"

namespace flotilla::member {
namespace {

// The addresses in status.loadBalancer.ingress.
std::vector<std::string> IngressIps(const json::object& service) {
  std::vector<std::string> out;
  const json::value* ingress = Find(service, "status.loadBalancer.ingress");
  if (ingress == nullptr || !ingress->is_array()) return out;
  for (const json::value& i : ingress->get_array()) {
    if (i.is_object() && !StringAt(i.get_object(), "ip").empty())
      out.push_back(StringAt(i.get_object(), "ip"));
  }
  return out;
}

}  // namespace

std::optional<uint32_t> AddressPool::ParseIp(std::string_view ip) {
  uint32_t out = 0;
  for (int part = 0; part < 4; ++part) {
    size_t dot = part < 3 ? ip.find('.') : ip.size();
    if (dot == std::string_view::npos || dot == 0 || dot > 3) return std::nullopt;
    unsigned value = 0;
    auto [end, ec] = std::from_chars(ip.data(), ip.data() + dot, value);
    if (ec != std::errc() || end != ip.data() + dot || value > 255) return std::nullopt;
    out = out << 8 | value;
    ip.remove_prefix(part < 3 ? dot + 1 : dot);
  }
  return out;
}

std::string AddressPool::FormatIp(uint32_t ip) {
  return std::to_string(ip >> 24) + "." + std::to_string(ip >> 16 & 255) + "." +
         std::to_string(ip >> 8 & 255) + "." + std::to_string(ip & 255);
}

std::optional<std::string> AddressPool::Nth(std::string_view cidr, int n) {
  size_t slash = cidr.find('/');
  if (slash == std::string_view::npos || n < 0 || !Parse(cidr)) return std::nullopt;
  uint32_t base = *ParseIp(cidr.substr(0, slash));
  int bits = std::stoi(std::string(cidr.substr(slash + 1)));
  uint64_t size = uint64_t{1} << (32 - bits);
  uint64_t network = (base & ~static_cast<uint32_t>(size - 1)) + size * static_cast<uint64_t>(n);
  if (network + size > (uint64_t{1} << 32)) return std::nullopt;
  return FormatIp(static_cast<uint32_t>(network)) + "/" + std::to_string(bits);
}

std::optional<AddressPool> AddressPool::Parse(std::string_view cidr) {
  size_t slash = cidr.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::optional<uint32_t> base = ParseIp(cidr.substr(0, slash));
  std::string_view bits_text = cidr.substr(slash + 1);
  int bits = -1;
  auto [end, ec] = std::from_chars(bits_text.data(), bits_text.data() + bits_text.size(), bits);
  if (!base || ec != std::errc() || end != bits_text.data() + bits_text.size() || bits < 0 ||
      bits > 32) {
    return std::nullopt;
  }
  uint64_t size = uint64_t{1} << (32 - bits);
  uint32_t network = static_cast<uint32_t>(*base & ~(size - 1));
  AddressPool pool;
  pool.first_ = network;
  pool.last_ = static_cast<uint32_t>(network + size - 1);
  if (bits < 31) {
    ++pool.first_;
    --pool.last_;
  }
  return pool;
}

bool AddressPool::Contains(std::string_view ip) const {
  std::optional<uint32_t> v = ParseIp(ip);
  return v && *v >= first_ && *v <= last_;
}

LoadBalancerController::LoadBalancerController(ControllerContext& ctx)
    : client_(ctx.client),
      events_(ctx.events),
      services_(ctx.informers.For(kServices)),
      ingresses_(ctx.informers.For(client::kIngresses)),
      cidr_(ctx.options.lb_cidr),
      pool_(AddressPool::Parse(ctx.options.lb_cidr)) {
  // One worker: allocations are serialized.
  runtime::Controller& c = ctx.manager.AddController(
      "service-lb", 1, [this](const std::string& key) { return Reconcile(key); });
  services_.AddEventHandler(c.EnqueueHandler());
  queue_ = &c.queue();
  auto enqueue = [this](const runtime::ObjectPtr& ing) {
    queue_->Add(std::string(kIngressKeyPrefix) + runtime::ObjectKey(*ing));
  };
  ingresses_.AddEventHandler(
      runtime::EventHandler{.on_add = enqueue,
                            .on_update = [enqueue](const runtime::ObjectPtr&,
                                                   const runtime::ObjectPtr& ing) { enqueue(ing); },
                            .on_delete = enqueue});
}

void LoadBalancerController::RetryPending() {
  for (const runtime::ObjectPtr& service : services_.lister().List()) {
    if (StringAt(*service, "spec.type") == "LoadBalancer" && IngressIps(*service).empty()) {
      queue_->Add(runtime::ObjectKey(*service));
    }
  }
  for (const runtime::ObjectPtr& ing : ingresses_.lister().List()) {
    if (IngressIps(*ing).empty()) {
      queue_->Add(std::string(kIngressKeyPrefix) + runtime::ObjectKey(*ing));
    }
  }
}

std::optional<std::string> LoadBalancerController::Allocate(const std::string& key,
                                                            const json::object& service) {
  std::set<uint32_t> taken;
  {
    MutexLock lock(mu_);
    for (const auto& [other, ip] : assigned_) {
      if (other != key) taken.insert(*AddressPool::ParseIp(ip));
    }
  }
  for (const runtime::ObjectPtr& other : services_.lister().List()) {
    if (runtime::ObjectKey(*other) == key) continue;
    for (const std::string& ip : IngressIps(*other)) {
      if (std::optional<uint32_t> v = AddressPool::ParseIp(ip)) taken.insert(*v);
    }
  }
  for (const runtime::ObjectPtr& other : ingresses_.lister().List()) {
    if (std::string(kIngressKeyPrefix) + runtime::ObjectKey(*other) == key) continue;
    for (const std::string& ip : IngressIps(*other)) {
      if (std::optional<uint32_t> v = AddressPool::ParseIp(ip)) taken.insert(*v);
    }
  }
  std::string requested = StringAt(service, "spec.loadBalancerIP");
  if (!requested.empty()) {
    if (!pool_->Contains(requested) || taken.contains(*AddressPool::ParseIp(requested))) {
      return std::nullopt;
    }
    return requested;
  }
  for (uint64_t ip = pool_->first(); ip <= pool_->last(); ++ip) {
    if (!taken.contains(static_cast<uint32_t>(ip))) {
      return AddressPool::FormatIp(static_cast<uint32_t>(ip));
    }
  }
  return std::nullopt;
}

StatusOr<runtime::Result> LoadBalancerController::ReconcileIngress(const std::string& key) {
  runtime::ObjectPtr cached = ingresses_.cache().Get(key.substr(kIngressKeyPrefix.size()));
  if (cached == nullptr || !StringAt(*cached, "metadata.deletionTimestamp").empty()) {
    bool released = false;
    {
      MutexLock lock(mu_);
      released = assigned_.erase(key) > 0;
    }
    if (released) RetryPending();
    return runtime::Result{};
  }
  std::vector<std::string> current = IngressIps(*cached);
  if (current.size() == 1 && pool_ && pool_->Contains(current[0])) {
    MutexLock lock(mu_);
    assigned_[key] = current[0];
    return runtime::Result{};
  }
  std::optional<std::string> ip = pool_ ? Allocate(key, *cached) : std::nullopt;
  if (!ip) return runtime::Result{kRetryWhenFull};
  json::object ingress = *cached;
  EnsureObject(ingress, "status")["loadBalancer"] =
      json::object{{"ingress", json::array{json::object{{"ip", *ip}}}}};
  StatusOr<json::object> written =
      client_.UpdateStatus(client::kIngresses, MetaAt(ingress, "namespace"), ingress);
  if (written.status().Is(Reason::kNotFound)) return runtime::Result{};
  if (!written.ok()) return written.status();
  MutexLock lock(mu_);
  assigned_[key] = *ip;
  return runtime::Result{};
}

StatusOr<runtime::Result> LoadBalancerController::Reconcile(const std::string& key) {
  if (key.starts_with(kIngressKeyPrefix)) return ReconcileIngress(key);
  runtime::ObjectPtr cached = services_.cache().Get(key);
  bool wants_lb = cached != nullptr && StringAt(*cached, "spec.type") == "LoadBalancer" &&
                  StringAt(*cached, "metadata.deletionTimestamp").empty();
  // A service that names a loadBalancerClass is another implementation's.
  if (cached != nullptr && !StringAt(*cached, "spec.loadBalancerClass").empty()) {
    MutexLock lock(mu_);
    assigned_.erase(key);
    return runtime::Result{};
  }
  if (!wants_lb) {
    bool released = false;
    {
      MutexLock lock(mu_);
      released = assigned_.erase(key) > 0;
    }
    if (cached == nullptr || IngressIps(*cached).empty()) {
      if (released) RetryPending();
      return runtime::Result{};
    }
    // No longer a LoadBalancer: its address goes back to the pool.
    json::object service = *cached;
    EnsureObject(service, "status")["loadBalancer"] = json::object();
    StatusOr<json::object> written = client_.UpdateStatus(kServices, "", service);
    if (!written.ok() && !written.status().Is(Reason::kNotFound)) return written.status();
    RetryPending();
    return runtime::Result{};
  }
  std::vector<std::string> current = IngressIps(*cached);
  std::string requested = StringAt(*cached, "spec.loadBalancerIP");
  if (current.size() == 1 && pool_ && pool_->Contains(current[0]) &&
      (requested.empty() || requested == current[0])) {
    MutexLock lock(mu_);
    assigned_[key] = current[0];
    return runtime::Result{};
  }
  Record(*cached, "Normal", "EnsuringLoadBalancer", "Ensuring load balancer");
  std::optional<std::string> ip = pool_ ? Allocate(key, *cached) : std::nullopt;
  if (!ip) {
    std::string why = !pool_ ? "the address pool " + cidr_ + " is not an IPv4 CIDR"
                      : !requested.empty()
                          ? "requested address " + requested + " is not free in pool " + cidr_
                          : "no addresses left in pool " + cidr_;
    Record(*cached, "Warning", "SyncLoadBalancerFailed",
           "Error syncing load balancer: failed to ensure load balancer: " + why);
    return runtime::Result{kRetryWhenFull};
  }
  json::object service = *cached;
  EnsureObject(service, "status")["loadBalancer"] =
      json::object{{"ingress", json::array{json::object{{"ip", *ip}, {"ipMode", "VIP"}}}}};
  StatusOr<json::object> written = client_.UpdateStatus(kServices, "", service);
  if (written.status().Is(Reason::kNotFound)) return runtime::Result{};
  if (!written.ok()) return written.status();
  {
    MutexLock lock(mu_);
    assigned_[key] = *ip;
  }
  Record(*cached, "Normal", "EnsuredLoadBalancer", "Ensured load balancer");
  return runtime::Result{};
}

void LoadBalancerController::Record(const json::object& service, std::string_view type,
                                    std::string_view reason, const std::string& message) {
  json::object about = service;
  about["apiVersion"] = "v1";
  about["kind"] = "Service";
  events_.Event(about, type, reason, message);
}

}  // namespace flotilla::member
