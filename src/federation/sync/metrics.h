// Counters of the sync controller's writes to members, per cluster, resource
// and operation, rendered in the Prometheus text format:
//   flotilla_sync_propagated_total{cluster,resource,operation} writes that succeeded
//   flotilla_sync_failed_total{cluster,resource,operation}     writes that failed
// operation is create, update or delete. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace flotilla::federation::sync {

class SyncMetrics {
 public:
  void Record(const std::string& cluster, const std::string& resource, const std::string& operation,
              bool ok);
  uint64_t Propagated(const std::string& cluster, const std::string& resource,
                      const std::string& operation) const;
  uint64_t Failed(const std::string& cluster, const std::string& resource,
                  const std::string& operation) const;
  std::string Render() const;

 private:
  using Key = std::tuple<std::string, std::string, std::string>;  // cluster, resource, operation
  struct Counts {
    uint64_t ok = 0;
    uint64_t failed = 0;
  };
  mutable std::mutex mu_;
  std::map<Key, Counts> counts_;  // GUARDED_BY(mu_)
};

}  // namespace flotilla::federation::sync
