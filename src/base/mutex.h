// Mutexes and a condition variable the thread-safety analysis understands
// (base/thread_annotations.h): std::mutex, std::shared_mutex and
// std::condition_variable underneath, with the same semantics, under
// capability annotations.
//
//   Mutex mu_;
//   std::deque<Item> queue_ GUARDED_BY(mu_);
//   CondVar ready_;
//   ...
//   MutexLock lock(mu_);
//   ready_.Wait(lock, [&]() REQUIRES(mu_) { return !queue_.empty(); });
//
// A wait's predicate runs with the lock held; the analysis cannot see that
// through the call, so the lambda says it with REQUIRES.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#include "base/thread_annotations.h"

namespace flotilla {

class CAPABILITY Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  // Tells the analysis that the caller holds this (a callback documented to
  // run under it); checks nothing at run time.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class MutexLock;
  std::mutex mu_;
};

// Holds a Mutex for its scope; Unlock and Lock release and take it again in
// between.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : lock_(mu.mu_) {}
  ~MutexLock() RELEASE() = default;
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() { lock_.unlock(); }
  void Lock() ACQUIRE() { lock_.lock(); }

 private:
  friend class CondVar;
  std::unique_lock<std::mutex> lock_;
};

// A reader-writer mutex: WriterLock holds it alone, ReaderLock shares it.
class CAPABILITY SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  void LockShared() ACQUIRE_SHARED() { mu_.lock_shared(); }
  void UnlockShared() RELEASE() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

class SCOPED_CAPABILITY WriterLock {
 public:
  explicit WriterLock(SharedMutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~WriterLock() RELEASE() { mu_.Unlock(); }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  SharedMutex& mu_;
};

class SCOPED_CAPABILITY ReaderLock {
 public:
  explicit ReaderLock(SharedMutex& mu) ACQUIRE_SHARED(mu) : mu_(mu) { mu_.LockShared(); }
  ~ReaderLock() RELEASE() { mu_.UnlockShared(); }
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  SharedMutex& mu_;
};

// std::condition_variable over a MutexLock. The predicate forms return as
// std::condition_variable's do: WaitFor and WaitUntil give the predicate's
// last value.
class CondVar {
 public:
  void NotifyOne() noexcept { cv_.notify_one(); }
  void NotifyAll() noexcept { cv_.notify_all(); }

  void Wait(MutexLock& lock) { cv_.wait(lock.lock_); }
  template <typename Pred>
  void Wait(MutexLock& lock, Pred ready) NO_THREAD_SAFETY_ANALYSIS {
    cv_.wait(lock.lock_, std::move(ready));
  }
  template <typename Clock, typename D>
  std::cv_status WaitUntil(MutexLock& lock, const std::chrono::time_point<Clock, D>& deadline) {
    return cv_.wait_until(lock.lock_, deadline);
  }
  template <typename Clock, typename D, typename Pred>
  bool WaitUntil(MutexLock& lock, const std::chrono::time_point<Clock, D>& deadline,
                 Pred ready) NO_THREAD_SAFETY_ANALYSIS {
    return cv_.wait_until(lock.lock_, deadline, std::move(ready));
  }
  template <typename Rep, typename Period, typename Pred>
  bool WaitFor(MutexLock& lock, const std::chrono::duration<Rep, Period>& timeout,
               Pred ready) NO_THREAD_SAFETY_ANALYSIS {
    return cv_.wait_for(lock.lock_, timeout, std::move(ready));
  }

 private:
  std::condition_variable cv_;
};

}  // namespace flotilla
