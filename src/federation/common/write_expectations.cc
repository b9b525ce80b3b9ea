// Expectations of a controller's own writes to member copies
// (write_expectations.h).
#include "federation/common/write_expectations.h"

#include "api/views.h"
#include "base/mutex.h"

namespace flotilla::federation {
namespace {

std::string VersionOf(const json::object* obj) {
  return obj == nullptr ? "" : std::string(api::ObjectView(*obj).resource_version());
}

}  // namespace

void WriteExpectations::Expect(const std::string& key, const std::string& cluster,
                               const runtime::ObjectPtr& seen) {
  MutexLock lock(mu_);
  pending_[{key, cluster}] = Expectation{.seen_version = VersionOf(seen.get()), .at = clock_.Now()};
}

void WriteExpectations::Done(const std::string& key, const std::string& cluster,
                             const StatusOr<json::object>& written) {
  MutexLock lock(mu_);
  auto it = pending_.find({key, cluster});
  if (it == pending_.end()) return;
  if (!written.ok() || VersionOf(&*written) == it->second.seen_version) pending_.erase(it);
}

void WriteExpectations::Done(const std::string& key, const std::string& cluster,
                             const Status& deleted) {
  if (deleted.ok()) return;
  MutexLock lock(mu_);
  pending_.erase({key, cluster});
}

void WriteExpectations::Observed(const std::string& key, const std::string& cluster,
                                 const json::object& obj) {
  MutexLock lock(mu_);
  auto it = pending_.find({key, cluster});
  if (it != pending_.end() && VersionOf(&obj) != it->second.seen_version) {
    it->second.observed = true;
  }
}

bool WriteExpectations::Behind(const std::string& key, const std::string& cluster,
                               const runtime::ObjectPtr& cached) {
  MutexLock lock(mu_);
  auto it = pending_.find({key, cluster});
  if (it == pending_.end()) return false;
  const Expectation& e = it->second;
  if (!e.observed && e.seen_version == VersionOf(cached.get()) && clock_.Now() - e.at < ttl_) {
    return true;
  }
  pending_.erase(it);
  return false;
}

void WriteExpectations::Forget(const std::string& key) {
  MutexLock lock(mu_);
  auto it = pending_.lower_bound({key, ""});
  while (it != pending_.end() && it->first.first == key) it = pending_.erase(it);
}

size_t WriteExpectations::size() const {
  MutexLock lock(mu_);
  return pending_.size();
}

}  // namespace flotilla::federation
