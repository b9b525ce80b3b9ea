#include "federation/sync/metrics.h"

#include <sstream>

namespace flotilla::federation::sync {

void SyncMetrics::Record(const std::string& cluster, const std::string& resource,
                         const std::string& operation, bool ok) {
  std::lock_guard lock(mu_);
  Counts& c = counts_[{cluster, resource, operation}];
  ++(ok ? c.ok : c.failed);
}

uint64_t SyncMetrics::Propagated(const std::string& cluster, const std::string& resource,
                                 const std::string& operation) const {
  std::lock_guard lock(mu_);
  auto it = counts_.find({cluster, resource, operation});
  return it == counts_.end() ? 0 : it->second.ok;
}

uint64_t SyncMetrics::Failed(const std::string& cluster, const std::string& resource,
                             const std::string& operation) const {
  std::lock_guard lock(mu_);
  auto it = counts_.find({cluster, resource, operation});
  return it == counts_.end() ? 0 : it->second.failed;
}

std::string SyncMetrics::Render() const {
  std::map<Key, Counts> counts;
  {
    std::lock_guard lock(mu_);
    counts = counts_;
  }
  std::ostringstream out;
  auto family = [&](const char* name, const char* help, uint64_t Counts::*field) {
    out << "# HELP " << name << " " << help << "\n# TYPE " << name << " counter\n";
    for (const auto& [key, c] : counts) {
      const auto& [cluster, resource, operation] = key;
      out << name << "{cluster=\"" << cluster << "\",resource=\"" << resource << "\",operation=\""
          << operation << "\"} " << c.*field << "\n";
    }
  };
  family("flotilla_sync_propagated_total",
         "Member copies of federated objects created, updated or deleted.", &Counts::ok);
  family("flotilla_sync_failed_total", "Writes of member copies of federated objects that failed.",
         &Counts::failed);
  return out.str();
}

}  // namespace flotilla::federation::sync
