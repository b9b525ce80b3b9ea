// kube-apiserver's max-in-flight filter (--max-requests-inflight,
// --max-mutating-requests-inflight): at most so many read-only and so many
// mutating requests are served at once; one past the limit is answered 429
// TooManyRequests with Retry-After: 1, which clients (kubectl, client-go,
// ours) wait out and retry. Long-running requests (watches, and the proxy,
// exec, attach, log and portforward subresources) are not counted, nor are
// requests of system:masters, as in Kubernetes.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "apiserver/http.h"
#include "apiserver/request_info.h"

namespace flotilla::apiserver {

struct InflightLimits {
  int max_requests = 400;           // read-only; 0: no limit
  int max_mutating_requests = 200;  // 0: no limit
};

enum class RequestKind { kLongRunning, kReadOnly, kMutating };

RequestKind ClassifyRequest(const RequestInfo& info);

class InflightLimiter {
 public:
  explicit InflightLimiter(InflightLimits limits) : limits_(limits) {}

  // Holds one request's place until destroyed.
  class Slot {
   public:
    explicit Slot(std::atomic<int>* count) : count_(count) {}
    Slot(Slot&& other) noexcept : count_(other.count_) { other.count_ = nullptr; }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    Slot& operator=(Slot&&) = delete;
    ~Slot() {
      if (count_ != nullptr) count_->fetch_sub(1);
    }

   private:
    std::atomic<int>* count_;
  };

  // A place for a request of `kind` (always, for long-running ones); null
  // when the limit for its kind is reached.
  std::unique_ptr<Slot> TryAcquire(RequestKind kind);

  // Requests of `kind` being served now (0 for long-running ones), and
  // those refused so far.
  int InFlight(RequestKind kind) const;
  uint64_t Dropped(RequestKind kind) const;
  // apiserver_current_inflight_requests and apiserver_dropped_requests_total
  // by request_kind (readOnly, mutating), in the Prometheus text format.
  std::string RenderMetrics() const;
  const InflightLimits& limits() const { return limits_; }

 private:
  const InflightLimits limits_;
  std::atomic<int> read_only_{0};
  std::atomic<int> mutating_{0};
  std::atomic<uint64_t> dropped_read_only_{0};
  std::atomic<uint64_t> dropped_mutating_{0};
};

}  // namespace flotilla::apiserver
