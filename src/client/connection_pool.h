// Keep-alive connection pooling for the REST client: one pool per server,
// holding a few idle connections that any thread may take and give back.
// An idle connection is reused only while it still looks alive (its peer has
// not closed it) and has not idled longer than the idle timeout; otherwise a
// new one is opened. The most recently used idle connection goes first.
//
// Those idle past the timeout are closed by the pool's timer when they
// expire, on the client pool (base/io.h), and not by the request that next
// gives one back: a burst opens several connections per server, later
// traffic reuses one, and the rest expire together. Closed from the request
// path, the ~650 connections a federation of 100 members opened while
// joining took 50 ms of one propagation sample's fan-out, 90 s later
// (docs/benchmarks.md).
#pragma once

#include <memory>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/timer.h"
#include "client/connection.h"
#include "client/endpoint.h"

namespace flotilla::client {

// Thread-safe.
class ConnectionPool {
 public:
  // `clock` is not owned and must outlive the pool.
  ConnectionPool(std::shared_ptr<boost::asio::ssl::context> ctx, Endpoint endpoint, size_t max_idle,
                 Duration idle_timeout, Clock& clock);

  // An idle connection, or a newly opened one (opening is bounded by
  // `deadline`). *verify_failed as Connection::Open sets it.
  StatusOr<std::unique_ptr<Connection>> Acquire(Deadline deadline, bool* verify_failed);
  // Gives back a connection whose last response was complete and allows
  // keep-alive; it is closed instead when the pool is full.
  void Release(std::unique_ptr<Connection> conn);

  size_t idle_count();

 private:
  std::unique_ptr<Connection> TakeIdle();
  // The timer's callback: takes the expired connections out and closes them
  // on the client pool.
  void Expire();

  std::shared_ptr<boost::asio::ssl::context> ctx_;
  const Endpoint endpoint_;
  const size_t max_idle_;
  const Duration idle_timeout_;
  Clock& clock_;
  Mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_ GUARDED_BY(mu_);  // newest last
  // Armed for the oldest idle connection's expiry. Last, so that it is
  // destroyed (and its callback finished) first.
  Timer expiry_;
};

}  // namespace flotilla::client
