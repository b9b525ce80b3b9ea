// Prometheus metrics (metrics.h).
#include "base/metrics.h"

#include <cmath>
#include <cstdio>

#include "base/mutex.h"

namespace flotilla::metrics {
namespace {

void AppendEscaped(std::string& out, std::string_view value) {
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

void AppendNumber(std::string& out, double v) {
  if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
    return;
  }
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    out += std::to_string(static_cast<int64_t>(v));
    return;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  out += buf;
}

void AppendLabels(std::string& out, const Labels& labels) {
  if (labels.empty()) return;
  out += '{';
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) out += ',';
    out += labels[i].first;
    out += "=\"";
    AppendEscaped(out, labels[i].second);
    out += '"';
  }
  out += '}';
}

Labels Zip(const std::vector<std::string>& names, const std::vector<std::string>& values) {
  Labels out;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    out.emplace_back(names[i], values[i]);
  }
  return out;
}

}  // namespace

void TextWriter::Family(std::string_view name, std::string_view type, std::string_view help) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  out_ += help;
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void TextWriter::Sample(std::string_view name, const Labels& labels, double value) {
  out_ += name;
  AppendLabels(out_, labels);
  out_ += ' ';
  AppendNumber(out_, value);
  out_ += '\n';
}

void TextWriter::Histogram(std::string_view name, const Labels& labels,
                           std::span<const double> bounds, std::span<const uint64_t> counts,
                           double sum) {
  std::string bucket = std::string(name) + "_bucket";
  uint64_t cumulative = 0;
  Labels with_le = labels;
  with_le.emplace_back("le", "");
  for (size_t b = 0; b < bounds.size(); ++b) {
    cumulative += b < counts.size() ? counts[b] : 0;
    with_le.back().second.clear();
    AppendNumber(with_le.back().second, bounds[b]);
    Sample(bucket, with_le, static_cast<double>(cumulative));
  }
  if (counts.size() > bounds.size()) cumulative += counts[bounds.size()];
  with_le.back().second = "+Inf";
  Sample(bucket, with_le, static_cast<double>(cumulative));
  Sample(std::string(name) + "_sum", labels, sum);
  Sample(std::string(name) + "_count", labels, static_cast<double>(cumulative));
}

void CounterVec::Add(const std::vector<std::string>& values, double by) {
  MutexLock lock(mu_);
  values_[values] += by;
}

double CounterVec::Value(const std::vector<std::string>& values) const {
  MutexLock lock(mu_);
  auto it = values_.find(values);
  return it == values_.end() ? 0 : it->second;
}

void CounterVec::Write(TextWriter& w, std::string_view name) const {
  MutexLock lock(mu_);
  for (const auto& [values, v] : values_) w.Sample(name, Zip(names_, values), v);
}

void HistogramVec::Observe(const std::vector<std::string>& values, double v) {
  MutexLock lock(mu_);
  Series& s = series_[values];
  if (s.counts.empty()) s.counts.resize(bounds_.size() + 1);
  size_t b = 0;
  while (b < bounds_.size() && v > bounds_[b]) ++b;
  ++s.counts[b];
  s.sum += v;
}

uint64_t HistogramVec::Count(const std::vector<std::string>& values) const {
  MutexLock lock(mu_);
  auto it = series_.find(values);
  if (it == series_.end()) return 0;
  uint64_t n = 0;
  for (uint64_t c : it->second.counts) n += c;
  return n;
}

void HistogramVec::Write(TextWriter& w, std::string_view name) const {
  MutexLock lock(mu_);
  for (const auto& [values, s] : series_) {
    w.Histogram(name, Zip(names_, values), bounds_, s.counts, s.sum);
  }
}

CounterVec& Registry::Counter(const std::string& name, const std::string& help,
                              std::vector<std::string> label_names) {
  MutexLock lock(mu_);
  Family& f = families_[name];
  if (!f.counter) {
    f.help = help;
    f.counter = std::make_unique<CounterVec>(std::move(label_names));
  }
  return *f.counter;
}

HistogramVec& Registry::Histogram(const std::string& name, const std::string& help,
                                  std::vector<std::string> label_names,
                                  std::vector<double> bounds) {
  MutexLock lock(mu_);
  Family& f = families_[name];
  if (!f.histogram) {
    f.help = help;
    f.histogram = std::make_unique<HistogramVec>(std::move(label_names), std::move(bounds));
  }
  return *f.histogram;
}

void Registry::SetCollector(const std::string& name, std::function<void(TextWriter&)> collect) {
  MutexLock lock(mu_);
  if (collect) {
    collectors_[name] = std::move(collect);
  } else {
    collectors_.erase(name);
  }
}

std::string Registry::Render() const {
  MutexLock lock(mu_);
  TextWriter w;
  for (const auto& [name, f] : families_) {
    if (f.counter) {
      w.Family(name, "counter", f.help);
      f.counter->Write(w, name);
    } else if (f.histogram) {
      w.Family(name, "histogram", f.help);
      f.histogram->Write(w, name);
    }
  }
  for (const auto& [name, collect] : collectors_) collect(w);
  return w.text();
}

}  // namespace flotilla::metrics
