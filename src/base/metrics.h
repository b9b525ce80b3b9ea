// Metrics in the Prometheus text exposition format (version 0.0.4): one
// writer that formats families and samples, and a registry of labelled
// counters and histograms that components update and a /metrics endpoint
// renders. Components whose figures live elsewhere (a work queue's depth, a
// cluster's health) add a collector that writes them at render time.
//
//   metrics::Registry registry;
//   auto& writes = registry.Counter("flotilla_x_total", "Writes.", {"cluster"});
//   writes.Add({"a"});
//   registry.Render();  // # HELP flotilla_x_total Writes.\n# TYPE ... counter\n...
//
// Label values are escaped as the format asks (backslash, quote, newline).
// Registry, CounterVec and HistogramVec are thread-safe; a TextWriter is not.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"

namespace flotilla::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

class TextWriter {
 public:
  // "# HELP" and "# TYPE" lines; type is counter, gauge or histogram.
  void Family(std::string_view name, std::string_view type, std::string_view help);
  void Sample(std::string_view name, const Labels& labels, double value);
  // The _bucket (cumulative, then +Inf), _sum and _count lines of one
  // histogram series; `counts` holds one count per bound, not cumulative,
  // and one more for what exceeds the last bound.
  void Histogram(std::string_view name, const Labels& labels, std::span<const double> bounds,
                 std::span<const uint64_t> counts, double sum);
  const std::string& text() const { return out_; }

 private:
  std::string out_;
};

// Counters with the same label names, by label values.
class CounterVec {
 public:
  explicit CounterVec(std::vector<std::string> label_names) : names_(std::move(label_names)) {}
  // REQUIRES: as many values as label names.
  void Add(const std::vector<std::string>& values, double by = 1);
  double Value(const std::vector<std::string>& values) const;
  void Write(TextWriter& w, std::string_view name) const;

 private:
  const std::vector<std::string> names_;
  mutable Mutex mu_;
  std::map<std::vector<std::string>, double> values_ GUARDED_BY(mu_);
};

// Histograms with the same bounds and label names, by label values.
class HistogramVec {
 public:
  HistogramVec(std::vector<std::string> label_names, std::vector<double> bounds)
      : names_(std::move(label_names)), bounds_(std::move(bounds)) {}
  void Observe(const std::vector<std::string>& values, double v);
  uint64_t Count(const std::vector<std::string>& values) const;
  void Write(TextWriter& w, std::string_view name) const;

 private:
  struct Series {
    std::vector<uint64_t> counts;  // per bound, not cumulative, plus overflow
    double sum = 0;
  };
  const std::vector<std::string> names_;
  const std::vector<double> bounds_;
  mutable Mutex mu_;
  std::map<std::vector<std::string>, Series> series_ GUARDED_BY(mu_);
};

// Latency bounds in seconds for requests to another server.
inline const std::vector<double> kLatencyBounds = {0.001, 0.005, 0.01, 0.025, 0.05,
                                                   0.1,   0.25,  0.5,  1,     2.5};

class Registry {
 public:
  // The family `name`, created on first use; a second call with the same
  // name returns the same family (the help and labels of the first count).
  CounterVec& Counter(const std::string& name, const std::string& help,
                      std::vector<std::string> label_names);
  HistogramVec& Histogram(const std::string& name, const std::string& help,
                          std::vector<std::string> label_names,
                          std::vector<double> bounds = kLatencyBounds);
  // Writes figures kept elsewhere at each render, after the families; an
  // empty function removes the collector of that name. A collector must not
  // call back into the registry.
  void SetCollector(const std::string& name, std::function<void(TextWriter&)> collect);

  std::string Render() const;

 private:
  struct Family {
    std::string help;
    std::unique_ptr<CounterVec> counter;
    std::unique_ptr<HistogramVec> histogram;
  };
  mutable Mutex mu_;
  std::map<std::string, Family> families_ GUARDED_BY(mu_);
  std::map<std::string, std::function<void(TextWriter&)>> collectors_ GUARDED_BY(mu_);
};

}  // namespace flotilla::metrics
