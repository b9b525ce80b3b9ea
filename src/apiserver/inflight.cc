#include "apiserver/inflight.h"

#include <string_view>

namespace flotilla::apiserver {

RequestKind ClassifyRequest(const RequestInfo& info) {
  // genericfilters.BasicLongRunningRequestCheck with kube-apiserver's sets.
  if (info.verb == "watch" || info.verb == "proxy") return RequestKind::kLongRunning;
  if (info.resource_request) {
    for (std::string_view sub : {"attach", "exec", "proxy", "log", "portforward", "tunnel"}) {
      if (info.subresource == sub) return RequestKind::kLongRunning;
    }
  }
  bool read_only = info.verb == "get" || info.verb == "list" || info.verb == "head";
  return read_only ? RequestKind::kReadOnly : RequestKind::kMutating;
}

std::unique_ptr<InflightLimiter::Slot> InflightLimiter::TryAcquire(RequestKind kind) {
  if (kind == RequestKind::kLongRunning) return std::make_unique<Slot>(nullptr);
  bool mutating = kind == RequestKind::kMutating;
  std::atomic<int>& count = mutating ? mutating_ : read_only_;
  int limit = mutating ? limits_.max_mutating_requests : limits_.max_requests;
  int now = count.fetch_add(1) + 1;
  if (limit > 0 && now > limit) {
    count.fetch_sub(1);
    (mutating ? dropped_mutating_ : dropped_read_only_).fetch_add(1);
    return nullptr;
  }
  return std::make_unique<Slot>(&count);
}

uint64_t InflightLimiter::Dropped(RequestKind kind) const {
  if (kind == RequestKind::kLongRunning) return 0;
  return (kind == RequestKind::kMutating ? dropped_mutating_ : dropped_read_only_).load();
}

std::string InflightLimiter::RenderMetrics() const {
  std::string out;
  auto family = [&](const std::string& name, const char* type, const char* help, auto value) {
    out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    for (auto [kind, label] : {std::pair{RequestKind::kReadOnly, "readOnly"},
                               std::pair{RequestKind::kMutating, "mutating"}}) {
      out += name + "{request_kind=\"" + label + "\"} " + std::to_string(value(kind)) + "\n";
    }
  };
  family("apiserver_current_inflight_requests", "gauge",
         "Requests being served, by kind (long-running ones not counted).",
         [this](RequestKind k) { return InFlight(k); });
  family("apiserver_dropped_requests_total", "counter",
         "Requests refused with 429 past the in-flight limit, by kind.",
         [this](RequestKind k) { return Dropped(k); });
  return out;
}

int InflightLimiter::InFlight(RequestKind kind) const {
  switch (kind) {
    case RequestKind::kReadOnly:
      return read_only_.load();
    case RequestKind::kMutating:
      return mutating_.load();
    case RequestKind::kLongRunning:
      break;
  }
  return 0;
}

}  // namespace flotilla::apiserver
