// SharedInformers: one informer per resource on one API server, shared by
// every controller of a process that reads that resource (client-go's
// SharedInformerFactory). An informer is created on first use and
// registered with the controller manager, which starts it and waits for its
// cache before any worker runs. Used by a member's controllers and by the
// federation's.
//
// Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "client/client.h"
#include "runtime/controller_manager.h"
#include "runtime/informer.h"

namespace flotilla::runtime {

class SharedInformers {
 public:
  // `client`, `clock` and `manager` must outlive this.
  SharedInformers(client::Client& client, Clock& clock, ControllerManager& manager)
      : client_(client), clock_(clock), manager_(manager) {}
  ~SharedInformers() { StopAll(); }
  SharedInformers(const SharedInformers&) = delete;
  SharedInformers& operator=(const SharedInformers&) = delete;

  // The informer of `resource`, made on first use. One made once the
  // manager has started starts at once; nothing waits for its cache.
  Informer& For(const client::ResourceRef& resource) {
    MutexLock lock(mu_);
    std::string key = resource.group + "/" + resource.version + "/" + resource.resource;
    auto& slot = informers_[key];
    if (slot == nullptr) {
      slot = std::make_unique<Informer>(client_, resource, clock_);
      manager_.AddInformer(slot.get());
    }
    return *slot;
  }

  // The informer of `resource` if some controller uses it; null otherwise.
  Informer* Find(const client::ResourceRef& resource) {
    MutexLock lock(mu_);
    auto it = informers_.find(resource.group + "/" + resource.version + "/" + resource.resource);
    return it == informers_.end() ? nullptr : it->second.get();
  }

  // Stops every informer, all at once: each waits for its list in
  // progress, if any. (The manager stops them too; this makes it safe to
  // destroy them afterwards.) Idempotent.
  void StopAll() {
    MutexLock lock(mu_);
    std::vector<std::thread> stopping;
    for (auto& [key, informer] : informers_) {
      stopping.emplace_back([i = informer.get()] { i->Stop(); });
    }
    for (auto& t : stopping) t.join();
  }

 private:
  client::Client& client_;
  Clock& clock_;
  ControllerManager& manager_;
  Mutex mu_;
  std::map<std::string, std::unique_ptr<Informer>> informers_ GUARDED_BY(mu_);
};

}  // namespace flotilla::runtime
