#include "storage/expiry.h"

#include "base/mutex.h"

namespace flotilla::storage {
namespace {

constexpr Duration kRetry = std::chrono::seconds(1);

}  // namespace

Expiry::Expiry(Clock& clock, Expire expire)
    : clock_(clock), expire_(std::move(expire)), sleeper_(clock.NewSleeper()) {}

Expiry::~Expiry() { Stop(); }

void Expiry::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  sleeper_->Wake();
  if (thread_.joinable()) thread_.join();
}

void Expiry::Note(std::string_view key, int64_t revision, TimePoint expires, bool deleted) {
  const bool arm = !deleted && expires != TimePoint{};
  bool earliest = false;
  {
    MutexLock lock(mu_);
    auto it = by_key_.find(key);
    if (it == by_key_.end() && !arm) return;
    if (it != by_key_.end()) {
      by_time_.erase({it->second.when, it->first});
      if (!arm) {
        by_key_.erase(it);
        return;
      }
      it->second = {expires, revision};
    } else {
      it = by_key_.emplace(std::string(key), Armed{expires, revision}).first;
    }
    earliest = by_time_.empty() || expires < by_time_.begin()->first;
    by_time_.emplace(expires, it->first);
    if (!thread_.joinable() && !stopping_) thread_ = std::thread([this] { Run(); });
  }
  if (earliest) sleeper_->Wake();
}

void Expiry::Note(const std::vector<HistoryEntry>& applied) {
  for (const HistoryEntry& e : applied) Note(e.key(), e.revision, e.expires, e.is_delete());
}

size_t Expiry::size() const {
  MutexLock lock(mu_);
  return by_key_.size();
}

TimePoint Expiry::next() const {
  MutexLock lock(mu_);
  return by_time_.empty() ? TimePoint::max() : by_time_.begin()->first;
}

void Expiry::Run() {
  MutexLock lock(mu_);
  while (!stopping_) {
    const TimePoint now = clock_.Now();
    std::vector<Due> due;
    for (auto it = by_time_.begin(); it != by_time_.end() && it->first <= now; ++it) {
      due.push_back({std::string(it->second), by_key_.find(it->second)->second.revision});
    }
    if (!due.empty()) {
      // The deletes come back through Note, which forgets the keys; a key
      // written again meanwhile keeps its new deadline.
      lock.Unlock();
      expire_(due);
      lock.Lock();
      // A key still armed at the same revision was not deleted (a failed
      // commit, or a write whose Note is on its way): try again later
      // rather than at once.
      for (const Due& d : due) {
        auto it = by_key_.find(d.key);
        if (it == by_key_.end() || it->second.revision != d.mod_revision) continue;
        by_time_.erase({it->second.when, it->first});
        it->second.when = now + kRetry;
        by_time_.emplace(it->second.when, it->first);
      }
      continue;
    }
    const TimePoint next = by_time_.empty() ? TimePoint::max() : by_time_.begin()->first;
    lock.Unlock();
    sleeper_->SleepUntil(next);
    lock.Lock();
  }
}

}  // namespace flotilla::storage
