// Expectations, as client-go's (UID-tracking) ControllerExpectations: what a
// controller waits to see in its informer before it acts on a key again, so
// that it never creates or deletes twice because its cache is behind its
// own writes. A key is satisfied when every expected creation and deletion
// has been observed, when it has no record, or when its record is older than
// five minutes (a lost event must not block the controller for ever).
// Thread-safe; time on the injected Clock.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/json.h"
#include "base/mutex.h"
#include "runtime/informer.h"
#include "runtime/work_queue.h"

namespace flotilla::member {

class Expectations {
 public:
  static constexpr Duration kTimeout = std::chrono::minutes(5);

  explicit Expectations(Clock& clock) : clock_(clock) {}

  // Replaces the key's record: `creations` pods to be created.
  void ExpectCreations(const std::string& key, int creations);
  // Replaces the key's record: the pods `pod_keys` to be deleted.
  void ExpectDeletions(const std::string& key, const std::vector<std::string>& pod_keys);
  // One expected creation happened (or will not happen: it failed).
  void CreationObserved(const std::string& key);
  // The pod `pod_key` is gone or going (counted once per pod).
  void DeletionObserved(const std::string& key, const std::string& pod_key);
  bool Satisfied(const std::string& key);
  void Forget(const std::string& key);

 private:
  struct Record {
    int creations = 0;
    std::set<std::string> deletions;
    TimePoint at;
  };

  Clock& clock_;
  Mutex mu_;
  std::map<std::string, Record> records_ GUARDED_BY(mu_);
};

// The key (namespace/name) of the `kind` that controls `pod`; "" when none.
std::string ControllerKey(const json::object& pod, std::string_view kind);

// The pod event handler of a controller that keeps `expectations` per owner
// key: a pod `owner_of` names an owner for ("": none) enqueues it on every
// event, its add observing a creation and its delete a deletion.
runtime::EventHandler OwnedPodHandler(Expectations& expectations, runtime::WorkQueue& queue,
                                      std::function<std::string(const json::object&)> owner_of);

}  // namespace flotilla::member
