// Prometheus metrics of the API server: request counts and latency
// histograms by verb, resource and code, storage operation latency, and the
// number of open watches. Thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/mutex.h"

namespace flotilla::apiserver {

class Metrics {
 public:
  void ObserveRequest(std::string_view verb, std::string_view resource, int code, double seconds);
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

  // What the requests of one verb and resource made: counts by code, and
  // their latency.
  struct Series {
    std::map<int, uint64_t> codes;
    Histogram latency;
  };
  // Orders (verb, resource) keys and views of them alike, so that a request
  // finds its series without copying either.
  struct VerbResourceLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      int c = std::string_view(a.first).compare(std::string_view(b.first));
      return c != 0 ? c < 0 : std::string_view(a.second) < std::string_view(b.second);
    }
  };

  mutable Mutex mu_;
  std::map<std::pair<std::string, std::string>, Series, VerbResourceLess> requests_ GUARDED_BY(mu_);
  std::map<std::string, Histogram> storage_ GUARDED_BY(mu_);
  std::atomic<int64_t> watchers_{0};
  std::map<std::string, std::function<std::string()>> sources_ GUARDED_BY(mu_);
};

}  // namespace flotilla::apiserver
