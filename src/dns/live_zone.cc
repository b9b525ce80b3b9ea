// A zone kept current and served (live_zone.h).
#include "dns/live_zone.h"

namespace flotilla::dns {

Status LiveZone::Start(const ServerOptions& options, metrics::Registry& registry) {
  std::shared_ptr<const Zone> first = Build();
  {
    std::lock_guard lock(mu_);
    zone_ = std::move(first);
  }
  FLOTILLA_ASSIGN_OR_RETURN(server_, Server::Start(
                                         options, [this] { return zone(); }, registry));
  builder_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void LiveZone::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (builder_.joinable()) builder_.join();
  if (server_) server_->Stop();
}

void LiveZone::MarkStale() {
  {
    std::lock_guard lock(mu_);
    stale_ = true;
  }
  changed_.notify_all();
}

std::shared_ptr<const Zone> LiveZone::zone() const {
  std::lock_guard lock(mu_);
  return zone_;
}

uint64_t LiveZone::builds() const {
  std::lock_guard lock(mu_);
  return builds_;
}

std::shared_ptr<const Zone> LiveZone::Build() {
  uint32_t serial;
  {
    std::lock_guard lock(mu_);
    serial = ++serial_;
    ++builds_;
  }
  return build_(serial);
}

void LiveZone::Loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    changed_.wait(lock, [this] { return stale_ || stopping_; });
    if (stopping_) return;
    stale_ = false;
    lock.unlock();
    std::shared_ptr<const Zone> next = Build();
    lock.lock();
    zone_ = std::move(next);
  }
}

}  // namespace flotilla::dns
