// A zone kept current from caches and served (docs/dns.md): whoever owns
// the caches calls MarkStale() on any change; one builder thread then makes
// the next zone at once with the function given (changes that come during
// a build go into the following one) while the server answers from the
// last. The federation's DNS and each member's cluster DNS are one each.
#pragma once

#include <functional>
#include <memory>
#include <thread>

#include "base/mutex.h"
#include "dns/server.h"

namespace flotilla::dns {

class LiveZone {
 public:
  // `build` makes a zone with the SOA serial given (which grows by one per
  // build).
  using BuildFn = std::function<std::shared_ptr<const Zone>(uint32_t serial)>;
  explicit LiveZone(BuildFn build) : build_(std::move(build)) {}
  ~LiveZone() { Stop(); }
  LiveZone(const LiveZone&) = delete;
  LiveZone& operator=(const LiveZone&) = delete;

  // Builds the first zone, starts the builder and the server. `registry`
  // must outlive this.
  Status Start(const ServerOptions& options, metrics::Registry& registry);
  // Idempotent.
  void Stop();
  void MarkStale();

  int port() const { return server_ ? server_->port() : 0; }
  std::shared_ptr<const Zone> zone() const;
  uint64_t builds() const;

 private:
  void Loop();
  std::shared_ptr<const Zone> Build();

  const BuildFn build_;
  std::unique_ptr<Server> server_;
  std::thread builder_;
  mutable Mutex mu_;
  CondVar changed_;
  bool stale_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  uint32_t serial_ GUARDED_BY(mu_) = 0;
  uint64_t builds_ GUARDED_BY(mu_) = 0;
  std::shared_ptr<const Zone> zone_ GUARDED_BY(mu_);
};

}  // namespace flotilla::dns
