#include "member/replicaset/expectations.h"

#include "api/owner.h"
#include "base/mutex.h"

namespace flotilla::member {

void Expectations::ExpectCreations(const std::string& key, int creations) {
  MutexLock lock(mu_);
  records_[key] = Record{creations, {}, clock_.Now()};
}

void Expectations::ExpectDeletions(const std::string& key,
                                   const std::vector<std::string>& pod_keys) {
  MutexLock lock(mu_);
  records_[key] = Record{0, {pod_keys.begin(), pod_keys.end()}, clock_.Now()};
}

void Expectations::CreationObserved(const std::string& key) {
  MutexLock lock(mu_);
  auto it = records_.find(key);
  if (it != records_.end() && it->second.creations > 0) --it->second.creations;
}

void Expectations::DeletionObserved(const std::string& key, const std::string& pod_key) {
  MutexLock lock(mu_);
  auto it = records_.find(key);
  if (it != records_.end()) it->second.deletions.erase(pod_key);
}

bool Expectations::Satisfied(const std::string& key) {
  MutexLock lock(mu_);
  auto it = records_.find(key);
  if (it == records_.end()) return true;
  const Record& r = it->second;
  if (r.creations <= 0 && r.deletions.empty()) return true;
  return clock_.Now() - r.at > kTimeout;
}

void Expectations::Forget(const std::string& key) {
  MutexLock lock(mu_);
  records_.erase(key);
}

std::string ControllerKey(const json::object& pod, std::string_view kind) {
  const json::object* ref = api::ControllerRef(pod);
  if (ref == nullptr || GetString(*ref, "kind") != kind) return "";
  return runtime::ObjectKey(StringAt(pod, "metadata.namespace"),
                            std::string(GetString(*ref, "name").value_or("")));
}

runtime::EventHandler OwnedPodHandler(Expectations& expectations, runtime::WorkQueue& queue,
                                      std::function<std::string(const json::object&)> owner_of) {
  return runtime::EventHandler{
      .on_add =
          [&expectations, &queue, owner_of](const runtime::ObjectPtr& pod) {
            std::string key = owner_of(*pod);
            if (key.empty()) return;
            expectations.CreationObserved(key);
            queue.Add(key);
          },
      .on_update =
          [&queue, owner_of](const runtime::ObjectPtr&, const runtime::ObjectPtr& pod) {
            std::string key = owner_of(*pod);
            if (!key.empty()) queue.Add(key);
          },
      .on_delete =
          [&expectations, &queue, owner_of](const runtime::ObjectPtr& pod) {
            std::string key = owner_of(*pod);
            if (key.empty()) return;
            expectations.DeletionObserved(key, runtime::ObjectKey(*pod));
            queue.Add(key);
          }};
}

}  // namespace flotilla::member
