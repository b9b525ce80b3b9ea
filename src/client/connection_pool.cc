// ConnectionPool (connection_pool.h).
#include "client/connection_pool.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "base/io.h"
#include "base/mutex.h"

namespace flotilla::client {

ConnectionPool::ConnectionPool(std::shared_ptr<boost::asio::ssl::context> ctx, Endpoint endpoint,
                               size_t max_idle, Duration idle_timeout, Clock& clock)
    : ctx_(std::move(ctx)),
      endpoint_(std::move(endpoint)),
      max_idle_(max_idle),
      idle_timeout_(idle_timeout),
      clock_(clock),
      expiry_(clock, [this] { Expire(); }) {}

std::unique_ptr<Connection> ConnectionPool::TakeIdle() {
  std::vector<std::unique_ptr<Connection>> stale;  // closed outside the lock
  std::unique_ptr<Connection> found;
  TimePoint now = clock_.Now();
  {
    MutexLock lock(mu_);
    while (!idle_.empty() && !found) {
      std::unique_ptr<Connection> conn = std::move(idle_.back());
      idle_.pop_back();
      if (now - conn->idle_since() > idle_timeout_ || conn->Unusable()) {
        stale.push_back(std::move(conn));
      } else {
        found = std::move(conn);
      }
    }
  }
  return found;
}

StatusOr<std::unique_ptr<Connection>> ConnectionPool::Acquire(Deadline deadline,
                                                              bool* verify_failed) {
  *verify_failed = false;
  if (std::unique_ptr<Connection> conn = TakeIdle()) return conn;
  auto conn = std::make_unique<Connection>(*ctx_, clock_);
  FLOTILLA_RETURN_IF_ERROR(conn->Open(endpoint_, deadline, verify_failed));
  return conn;
}

void ConnectionPool::Release(std::unique_ptr<Connection> conn) {
  conn->set_idle_since(clock_.Now());
  std::unique_ptr<Connection> closed;  // destroyed after the lock is released
  MutexLock lock(mu_);
  if (idle_.size() >= max_idle_) {
    closed = std::move(conn);
    return;
  }
  // The oldest idle connection's expiry is armed already, unless this one
  // is the only one.
  if (idle_.empty()) expiry_.ArmAt(conn->idle_since() + idle_timeout_);
  idle_.push_back(std::move(conn));
}

void ConnectionPool::Expire() {
  auto expired = std::make_shared<std::vector<std::unique_ptr<Connection>>>();
  {
    TimePoint now = clock_.Now();
    MutexLock lock(mu_);
    auto fresh = std::find_if(idle_.begin(), idle_.end(),
                              [&](const auto& c) { return now - c->idle_since() < idle_timeout_; });
    std::move(idle_.begin(), fresh, std::back_inserter(*expired));
    idle_.erase(idle_.begin(), fresh);
    if (!idle_.empty()) expiry_.ArmAt(idle_.front()->idle_since() + idle_timeout_);
  }
  if (!expired->empty()) SharedClientPool().Submit([expired] { expired->clear(); });
}

size_t ConnectionPool::idle_count() {
  MutexLock lock(mu_);
  return idle_.size();
}

}  // namespace flotilla::client
