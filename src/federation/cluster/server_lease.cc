// The federation API servers' Leases (server_lease.h).
#include "federation/cluster/server_lease.h"

#include <openssl/rand.h>

#include <cstdio>

#include "base/io.h"
#include "base/log.h"
#include "federation/common/names.h"

namespace flotilla::federation::cluster {
namespace {

constexpr char kNamespace[] = "kube-system";

}  // namespace

std::string ServerLeaseSelector() {
  return std::string(kServerLeaseLabel) + "=" + std::string(kServerLeaseLabelValue);
}

std::string NewServerId() {
  unsigned char bytes[8];
  if (RAND_bytes(bytes, sizeof bytes) != 1) std::abort();  // no entropy: nothing is safe
  std::string id = "flotilla-apiserver-";
  char hex[3];
  for (unsigned char b : bytes) {
    std::snprintf(hex, sizeof hex, "%02x", b);
    id += hex;
  }
  return id;
}

void ServerLease::Start(client::Client& federation) {
  {
    MutexLock lock(mu_);
    federation_ = &federation;
  }
  thread_ = std::thread([this, &federation] {
    for (;;) {
      Renew(federation);
      MutexLock lock(mu_);
      ScopedBlocking blocking;
      if (cv_.WaitFor(lock, opts_.renew, [&]() REQUIRES(mu_) { return stopping_; })) return;
    }
  });
}

void ServerLease::Stop() {
  client::Client* federation = nullptr;
  {
    MutexLock lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    federation = federation_;
    cv_.NotifyAll();
  }
  if (thread_.joinable()) thread_.join();
  if (federation != nullptr) (void)federation->Delete(client::kLeases, kNamespace, opts_.id);
}

void ServerLease::Renew(client::Client& federation) {
  Clock& clock = opts_.clock != nullptr ? *opts_.clock : RealClock();
  TimePoint now = clock.Now();
  json::object lease{
      {"apiVersion", "coordination.k8s.io/v1"},
      {"kind", "Lease"},
      {"metadata",
       {{"name", opts_.id},
        {"namespace", kNamespace},
        {"labels", {{std::string(kServerLeaseLabel), std::string(kServerLeaseLabelValue)}}},
        {"annotations", {{std::string(kServerUrlAnnotation), opts_.url}}}}},
      {"spec",
       {{"holderIdentity", opts_.id},
        {"leaseDurationSeconds",
         std::chrono::duration_cast<std::chrono::seconds>(opts_.duration).count()},
        {"renewTime", FormatRfc3339Micro(now)}}}};
  // One list: this server's Lease (to renew at its resourceVersion) and
  // those of servers killed without deleting theirs.
  auto listed =
      federation.List(client::kLeases, kNamespace, {.label_selector = ServerLeaseSelector()});
  if (!listed.ok()) {
    spdlog::warn("this server's Lease {}: {}", opts_.id, listed.status().ToString());
    return;
  }
  const json::object* mine = nullptr;
  for (const json::object& other : listed->items) {
    std::string name = StringAt(other, "metadata.name");
    if (name == opts_.id) {
      mine = &other;
      continue;
    }
    TimePoint renewed;
    if (!ParseRfc3339(StringAt(other, "spec.renewTime"), &renewed) ||
        now - renewed < opts_.expire_after) {
      continue;
    }
    Status deleted = federation.Delete(
        client::kLeases, kNamespace, name,
        {.precondition_resource_version = StringAt(other, "metadata.resourceVersion")});
    if (deleted.ok()) spdlog::info("deleted the Lease {} of a server gone since", name);
  }
  Status written;
  if (mine != nullptr) {
    lease["metadata"].as_object()["resourceVersion"] = StringAt(*mine, "metadata.resourceVersion");
    written = federation.Update(client::kLeases, kNamespace, lease).status();
  } else {
    written = federation.Create(client::kLeases, kNamespace, lease).status();
  }
  if (!written.ok()) spdlog::warn("this server's Lease {}: {}", opts_.id, written.ToString());
}

std::map<std::string, std::string> ServerUrls(const std::vector<json::object>& leases) {
  std::map<std::string, std::string> out;
  for (const json::object& lease : leases) {
    // (The label's and annotation's keys have dots: no dotted paths.)
    const json::object* meta = GetObject(lease, "metadata");
    const json::object* labels = meta != nullptr ? GetObject(*meta, "labels") : nullptr;
    if (labels == nullptr || GetString(*labels, kServerLeaseLabel) != kServerLeaseLabelValue) {
      continue;
    }
    const json::object* annotations = GetObject(*meta, "annotations");
    auto url = annotations ? GetString(*annotations, kServerUrlAnnotation) : std::nullopt;
    if (url && !url->empty()) out[StringAt(lease, "metadata.name")] = std::string(*url);
  }
  return out;
}

}  // namespace flotilla::federation::cluster
