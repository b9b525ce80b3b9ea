// What a controller expects its member caches to show after its own writes
// to the copies of a federated object.
//
// A member cache lags the member: right after a write, the cache may still
// hold the copy as it was before. A check that decided on that older copy
// would create a copy again (AlreadyExists: a wasted request), or take a
// cluster's earlier state for its current one (a rollout that counts a
// cluster as finished before it observed the new template). As Kubernetes
// controllers do with their expectations, a check does not decide while a
// cache has not caught up with the writes of the checks before it; the
// cache's event of the write brings the check back.
//
// A write is expected before it is sent, with the copy it is made on (none
// for a create), so the cache's event of it cannot come unnoticed. The
// cache has caught up once it delivered an event of another version of the
// copy since, or holds another version than the one the write was made on (updates carry
// that version as their precondition, so nothing comes between the two).
// An expectation that is never met (a lost watch) lapses after `ttl`.
//
// Thread-safe.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "runtime/cache.h"

namespace flotilla::federation {

class WriteExpectations {
 public:
  WriteExpectations(const Clock& clock, Duration ttl) : clock_(clock), ttl_(ttl) {}

  // A write of the copy of federated object `key` in `cluster` is about to
  // be made on `seen` (null: a create).
  void Expect(const std::string& key, const std::string& cluster, const runtime::ObjectPtr& seen);
  // The write of a create or an update returned: a failed one, or one
  // that stored nothing new (the same resourceVersion), is awaited no
  // longer.
  void Done(const std::string& key, const std::string& cluster,
            const StatusOr<json::object>& written);
  // The write of a delete returned.
  void Done(const std::string& key, const std::string& cluster, const Status& deleted);
  // The cache of `cluster` delivered an event of the copy of `key`, which
  // it now holds as `obj` (or held, deleted). An event of the version the
  // write was made on (an earlier write's, handled late) does not count.
  void Observed(const std::string& key, const std::string& cluster, const json::object& obj);
  // The cache of `cluster` holding `cached` (null: no copy) has not caught
  // up with a write of an earlier check. An expectation met (or lapsed) is
  // forgotten.
  bool Behind(const std::string& key, const std::string& cluster, const runtime::ObjectPtr& cached);
  // The federated object is gone.
  void Forget(const std::string& key);

  size_t size() const;

 private:
  struct Expectation {
    std::string seen_version;  // empty: no copy
    TimePoint at;
    bool observed = false;
  };

  const Clock& clock_;
  const Duration ttl_;
  mutable Mutex mu_;
  std::map<std::pair<std::string, std::string>, Expectation> pending_ GUARDED_BY(mu_);
};

}  // namespace flotilla::federation
