// A zone kept current and served (live_zone.h).
#include "dns/live_zone.h"

#include "base/mutex.h"

namespace flotilla::dns {

Status LiveZone::Start(const ServerOptions& options, metrics::Registry& registry) {
  std::shared_ptr<const Zone> first = Build();
  {
    MutexLock lock(mu_);
    zone_ = std::move(first);
  }
  FLOTILLA_ASSIGN_OR_RETURN(server_, Server::Start(
                                         options, [this] { return zone(); }, registry));
  builder_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void LiveZone::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  changed_.NotifyAll();
  if (builder_.joinable()) builder_.join();
  if (server_) server_->Stop();
}

void LiveZone::MarkStale() {
  {
    MutexLock lock(mu_);
    stale_ = true;
  }
  changed_.NotifyAll();
}

std::shared_ptr<const Zone> LiveZone::zone() const {
  MutexLock lock(mu_);
  return zone_;
}

uint64_t LiveZone::builds() const {
  MutexLock lock(mu_);
  return builds_;
}

std::shared_ptr<const Zone> LiveZone::Build() {
  uint32_t serial;
  {
    MutexLock lock(mu_);
    serial = ++serial_;
    ++builds_;
  }
  return build_(serial);
}

void LiveZone::Loop() {
  MutexLock lock(mu_);
  for (;;) {
    changed_.Wait(lock, [this]() REQUIRES(mu_) { return stale_ || stopping_; });
    if (stopping_) return;
    stale_ = false;
    lock.Unlock();
    std::shared_ptr<const Zone> next = Build();
    lock.Lock();
    zone_ = std::move(next);
  }
}

}  // namespace flotilla::dns
