// Prometheus metrics of the API server: request counts and latency
// histograms by verb, resource and code, storage operation latency, and the
// number of open watches. Thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "base/mutex.h"

namespace flotilla::apiserver {

class Metrics {
 public:
  void ObserveRequest(const std::string& verb, const std::string& resource, int code,
                      double seconds);
  void ObserveStorage(const std::string& operation, double seconds);
  void WatchStarted() { ++watchers_; }
  void WatchEnded() { --watchers_; }
  // The Prometheus text exposition format.
  std::string Render() const;
  // Adds what `source` renders (other components' metrics, e.g. the
  // federation's per-cluster health, in the same format) to Render() under
  // `name`; an empty function removes it, waiting for a Render in progress.
  // `source` runs under this registry's lock: it must neither call back here
  // nor wait for anything that records a request.
  void SetSource(const std::string& name, std::function<std::string()> source);

 private:
  struct Histogram {
    std::vector<uint64_t> buckets;  // cumulative counts per bound
    double sum = 0;
    uint64_t count = 0;
  };
  void Observe(Histogram& h, double seconds);

  mutable Mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests_ GUARDED_BY(mu_);
  std::map<std::pair<std::string, std::string>, Histogram> latency_ GUARDED_BY(mu_);
  std::map<std::string, Histogram> storage_ GUARDED_BY(mu_);
  std::atomic<int64_t> watchers_{0};
  std::map<std::string, std::function<std::string()>> sources_ GUARDED_BY(mu_);
};

}  // namespace flotilla::apiserver
