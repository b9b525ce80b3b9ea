// Interned immutable values: equal values share one copy in the process for
// as long as anyone holds them. The simulated members of one process each
// serve the same discovery documents and hold the same bootstrap RBAC rules;
// interned, a thousand members keep one copy of each.
//
//   std::shared_ptr<const std::string> doc = Intern(std::move(text));
//
// The table keeps a weak reference per value, by hash; values nobody holds
// are freed at once (each is allocated apart from its control block), and
// their entries are swept when the table has doubled since the last sweep,
// so its size stays proportional to the values alive. Thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <unordered_map>

#include "base/mutex.h"

namespace flotilla {

template <typename T, typename Hash = std::hash<T>>
class InternTable {
 public:
  // The one table of T in the process (never destroyed: values may be
  // released by other statics' destructors at exit).
  static InternTable& Instance() {
    static InternTable* table = new InternTable;
    return *table;
  }

  std::shared_ptr<const T> Intern(T value) {
    const size_t hash = Hash{}(value);
    MutexLock lock(mu_);
    auto [first, last] = entries_.equal_range(hash);
    for (auto it = first; it != last; ++it) {
      std::shared_ptr<const T> held = it->second.lock();
      if (held != nullptr && *held == value) return held;
    }
    std::shared_ptr<const T> made(new T(std::move(value)));
    entries_.emplace(hash, made);
    if (entries_.size() >= 2 * swept_size_) Sweep();
    return made;
  }

  // Entries, alive or not yet swept (for tests).
  size_t size() const {
    MutexLock lock(mu_);
    return entries_.size();
  }

 private:
  InternTable() = default;

  void Sweep() REQUIRES(mu_) {
    std::erase_if(entries_, [](const auto& entry) { return entry.second.expired(); });
    swept_size_ = std::max<size_t>(entries_.size(), 16);
  }

  mutable Mutex mu_;
  std::unordered_multimap<size_t, std::weak_ptr<const T>> entries_ GUARDED_BY(mu_);
  size_t swept_size_ GUARDED_BY(mu_) = 16;
};

// The process's shared copy of a value equal to `value`.
template <typename T, typename Hash = std::hash<T>>
std::shared_ptr<const T> Intern(T value) {
  return InternTable<T, Hash>::Instance().Intern(std::move(value));
}

}  // namespace flotilla
