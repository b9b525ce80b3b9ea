// Agents' claims on their clusters (agent_claim.h).
#include "federation/cluster/agent_claim.h"

#include <cctype>
#include <cstdio>

#include "federation/cluster/registration.h"

namespace flotilla::federation::cluster {
namespace {

constexpr char kClaimNamespace[] = "kube-system";
constexpr std::string_view kClaimPrefix = "flotilla-agent-";
// Writes that lose a race are read and judged again this many times.
constexpr int kClaimAttempts = 3;

int64_t ClaimSeconds(Duration d) {
  return std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::seconds>(d).count());
}

}  // namespace

bool ValidAgentInstance(std::string_view id) {
  if (id.size() > 128) return false;
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

std::string AgentClaimName(const std::string& cluster) {
  constexpr size_t kMaxName = 253;
  if (kClaimPrefix.size() + cluster.size() <= kMaxName) return std::string(kClaimPrefix) + cluster;
  // A name too long for a Lease: its head and a digest of the whole
  // (FNV-1a, the same in every process).
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : cluster) hash = (hash ^ c) * 0x100000001b3ULL;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return std::string(kClaimPrefix) + cluster.substr(0, kMaxName - kClaimPrefix.size() - 17) + "-" +
         hex;
}

AgentClaims::AgentClaims(Duration duration, Clock* clock)
    : duration_(duration), clock_(clock != nullptr ? *clock : RealClock()) {}

Status AgentClaims::Claim(client::Client& federation, const json::object& cluster,
                          const std::string& instance) {
  return Write(federation, cluster, instance, false);
}

Status AgentClaims::Renew(client::Client& federation, const json::object& cluster,
                          const std::string& instance) {
  return Write(federation, cluster, instance, true);
}

bool AgentClaims::Lives(const std::string& name, const json::object& lease) {
  const std::string rv = StringAt(lease, "metadata.resourceVersion");
  const json::value* seconds = Find(lease, "spec.leaseDurationSeconds");
  Duration duration = seconds != nullptr && seconds->is_int64()
                          ? std::chrono::seconds(seconds->get_int64())
                          : duration_;
  TimePoint now = clock_.Now();
  MutexLock lock(mu_);
  auto [it, first] = seen_.try_emplace(name, Seen{rv, now});
  if (!first && it->second.resource_version != rv) it->second = Seen{rv, now};
  return now - it->second.at < duration;
}

void AgentClaims::Observed(const std::string& name, const std::string& resource_version) {
  TimePoint now = clock_.Now();
  MutexLock lock(mu_);
  seen_[name] = Seen{resource_version, now};
}

Status AgentClaims::Write(client::Client& federation, const json::object& cluster,
                          const std::string& instance, bool renewal) {
  const std::string cluster_name = StringAt(cluster, "metadata.name");
  const std::string name = AgentClaimName(cluster_name);
  Status last;
  for (int attempt = 0; attempt < kClaimAttempts; ++attempt) {
    const std::string now = FormatRfc3339Micro(clock_.Now());
    json::object spec{{"holderIdentity", instance},
                      {"leaseDurationSeconds", ClaimSeconds(duration_)},
                      {"acquireTime", now},
                      {"renewTime", now},
                      {"leaseTransitions", 0}};
    auto current = federation.Get(client::kLeases, kClaimNamespace, name);
    StatusOr<json::object> written = Status::Internal("the claim was not written");
    if (current.status().Is(Reason::kNotFound)) {
      json::object lease{
          {"apiVersion", "coordination.k8s.io/v1"},
          {"kind", "Lease"},
          {"metadata", OwnedBy(cluster, {{"name", name}, {"namespace", kClaimNamespace}})},
          {"spec", std::move(spec)}};
      written = federation.Create(client::kLeases, kClaimNamespace, lease);
    } else if (!current.ok()) {
      return current.status();
    } else {
      const std::string holder = StringAt(*current, "spec.holderIdentity");
      const json::value* transitions = Find(*current, "spec.leaseTransitions");
      int64_t count =
          transitions != nullptr && transitions->is_int64() ? transitions->get_int64() : 0;
      if (holder == instance) {
        if (const json::value* acquired = Find(*current, "spec.acquireTime")) {
          spec["acquireTime"] = *acquired;
        }
        spec["leaseTransitions"] = count;
      } else if (renewal) {
        return Status::Conflict("cluster \"" + cluster_name + "\" is claimed by agent instance " +
                                holder + " now");
      } else if (!holder.empty() && Lives(name, *current)) {
        return Status::Conflict(
            "cluster \"" + cluster_name + "\" is held by another agent (instance " + holder +
            ", Lease kube-system/" + name +
            "); a second agent is let in only once that one's claim has not been renewed for " +
            std::to_string(ClaimSeconds(duration_)) + "s");
      } else {
        spec["leaseTransitions"] = count + 1;
      }
      json::object lease = std::move(*current);
      lease["spec"] = std::move(spec);
      written = federation.Update(client::kLeases, kClaimNamespace, lease);
    }
    if (written.ok()) {
      Observed(name, StringAt(*written, "metadata.resourceVersion"));
      return Status::Ok();
    }
    last = written.status();
    // Another server wrote first: judge again from what it wrote.
    if (!last.Is(Reason::kConflict) && !last.Is(Reason::kAlreadyExists)) return last;
  }
  return Status::Conflict("cluster \"" + cluster_name +
                          "\": the claim kept changing while it was written (" + last.message() +
                          ")");
}

}  // namespace flotilla::federation::cluster
