#include "apiserver/metrics.h"

#include <cstdio>

#include "base/mutex.h"

namespace flotilla::apiserver {
namespace {

const std::vector<double> kBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                     0.1,    0.25,  0.5,    1,     2.5,  5,     10};

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

void RenderHistogram(std::string& out, const std::string& name, const std::string& labels,
                     const std::vector<uint64_t>& buckets, double sum, uint64_t count) {
  for (size_t i = 0; i < kBounds.size(); ++i) {
    out += name + "_bucket{" + labels + ",le=\"" + Num(kBounds[i]) + "\"} " +
           std::to_string(buckets[i]) + "\n";
  }
  out += name + "_bucket{" + labels + ",le=\"+Inf\"} " + std::to_string(count) + "\n";
  out += name + "_sum{" + labels + "} " + Num(sum) + "\n";
  out += name + "_count{" + labels + "} " + std::to_string(count) + "\n";
}

}  // namespace

void Metrics::Observe(Histogram& h, double seconds) {
  if (h.buckets.empty()) h.buckets.assign(kBounds.size(), 0);
  for (size_t i = 0; i < kBounds.size(); ++i) {
    if (seconds <= kBounds[i]) ++h.buckets[i];
  }
  h.sum += seconds;
  ++h.count;
}

void Metrics::ObserveRequest(std::string_view verb, std::string_view resource, int code,
                             double seconds) {
  MutexLock lock(mu_);
  auto it = requests_.find(std::pair(verb, resource));
  if (it == requests_.end()) {
    it = requests_.try_emplace(std::pair(std::string(verb), std::string(resource))).first;
  }
  ++it->second.codes[code];
  Observe(it->second.latency, seconds);
}

void Metrics::ObserveStorage(const std::string& operation, double seconds) {
  MutexLock lock(mu_);
  Observe(storage_[operation], seconds);
}

void Metrics::SetSource(const std::string& name, std::function<std::string()> source) {
  MutexLock lock(mu_);
  if (source) {
    sources_[name] = std::move(source);
  } else {
    sources_.erase(name);
  }
}

std::string Metrics::Render() const {
  MutexLock lock(mu_);
  std::string out;
  out +=
      "# HELP apiserver_request_total Counter of apiserver requests by verb, resource and HTTP "
      "code.\n";
  out += "# TYPE apiserver_request_total counter\n";
  for (const auto& [key, series] : requests_) {
    const auto& [verb, resource] = key;
    for (const auto& [code, n] : series.codes) {
      out += "apiserver_request_total{verb=\"" + verb + "\",resource=\"" + resource + "\",code=\"" +
             std::to_string(code) + "\"} " + std::to_string(n) + "\n";
    }
  }
  out += "# HELP apiserver_request_duration_seconds Response latency by verb and resource.\n";
  out += "# TYPE apiserver_request_duration_seconds histogram\n";
  for (const auto& [key, series] : requests_) {
    const Histogram& h = series.latency;
    RenderHistogram(out, "apiserver_request_duration_seconds",
                    "verb=\"" + key.first + "\",resource=\"" + key.second + "\"", h.buckets, h.sum,
                    h.count);
  }
  out += "# HELP flotilla_storage_operation_duration_seconds Storage operation latency.\n";
  out += "# TYPE flotilla_storage_operation_duration_seconds histogram\n";
  for (const auto& [op, h] : storage_) {
    RenderHistogram(out, "flotilla_storage_operation_duration_seconds", "operation=\"" + op + "\"",
                    h.buckets, h.sum, h.count);
  }
  out += "# HELP apiserver_registered_watchers Number of currently open watches.\n";
  out += "# TYPE apiserver_registered_watchers gauge\n";
  out += "apiserver_registered_watchers " + std::to_string(watchers_.load()) + "\n";
  for (const auto& [name, source] : sources_) out += source();
  return out;
}

}  // namespace flotilla::apiserver
