// Expiry: the keys written with a TTL and when each expires, for the
// backends that expire keys themselves (memory and sqlite; etcd has
// leases). A thread, started with the first expiring key, sleeps on the
// injected clock until the earliest deadline and hands the keys that are
// due to the backend, which deletes each one unless it was written since
// (the delete carries the revision it expired at as its precondition).
//
// The backend tells it every applied write (Note) in revision order; it
// keeps one entry per expiring key, none for the others.
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "storage/record.h"

namespace flotilla::storage {

class Expiry {
 public:
  struct Due {
    std::string key;
    int64_t mod_revision = 0;  // the write that gave the key its TTL
  };
  // Deletes the keys given if each is still at its revision. Runs on the
  // expiry thread; may block (a commit). A key it could not delete is
  // offered again a second later.
  using Expire = std::function<void(const std::vector<Due>& due)>;

  Expiry(Clock& clock, Expire expire);
  ~Expiry();  // Stop()s
  // Stops and joins the thread; no thread starts again. Idempotent. The
  // object stays usable for Note (a backend's commits in flight).
  // REQUIRES: the backend still works.
  void Stop();
  Expiry(const Expiry&) = delete;
  Expiry& operator=(const Expiry&) = delete;

  // The deadline `expires` (the epoch: none) of a key written at `revision`,
  // or a delete (`deleted`). In revision order per key.
  void Note(std::string_view key, int64_t revision, TimePoint expires, bool deleted);
  void Note(const std::vector<HistoryEntry>& applied);

  // How many keys wait to expire; the earliest deadline (TimePoint::max()
  // when none).
  size_t size() const;
  TimePoint next() const;

 private:
  struct Armed {
    TimePoint when;
    int64_t revision = 0;
  };
  void Run();

  Clock& clock_;
  const Expire expire_;
  const std::unique_ptr<Sleeper> sleeper_;
  mutable Mutex mu_;
  std::map<std::string, Armed, std::less<>> by_key_ GUARDED_BY(mu_);
  std::set<std::pair<TimePoint, std::string_view>> by_time_ GUARDED_BY(mu_);  // views of by_key_
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;  // started by the first Note
};

}  // namespace flotilla::storage
