// MemberTestEnv: a member's API (an in-process ApiServer over a memory
// store, with the garbage collector) and the controller plumbing of
// context.h, on a FakeClock, without HTTP. Component tests build the
// components under test on it, Start() it, and drive it through client().
// Test-only.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <vector>

#include "api/kinds/kinds.h"
#include "api/schema.h"
#include "apiserver/api_server.h"
#include "apiserver/gc.h"
#include "client/in_process_client.h"
#include "member/context.h"
#include "runtime/test_util.h"
#include "storage/store.h"

namespace flotilla::member::testing {

// A JSON object from a test's text (a failed expectation, and {}, when it
// is not one).
inline json::object Parse(std::string_view text) {
  StatusOr<json::object> o = ParseJsonObject(text);
  EXPECT_TRUE(o.ok()) << o.status().ToString() << "\n" << text;
  return o.ok() ? *o : json::object();
}

class MemberTestEnv {
 public:
  MemberTestEnv() : store_(storage::NewMemoryStore()) {
    api::RegisterFoundationKinds(registry_);
    api::RegisterMemberKinds(registry_);
    apiserver::ApiServerOptions opts;
    opts.registry = &registry_;
    opts.store = store_.get();
    opts.clock = &clock_;
    opts.schemas = &api::SchemaSet::Builtin();
    api_ = std::make_unique<apiserver::ApiServer>(opts);
    api_->SetReady(true);
    (void)api_->EnsureDefaultNamespaces();
    gc_ = std::make_unique<apiserver::GarbageCollector>(api_->objects());
    (void)gc_->Start();
    client_ = client::NewInProcessClient(*api_);
    manager_ = std::make_unique<runtime::ControllerManager>(clock_);
    informers_ = std::make_unique<SharedInformers>(*client_, clock_, *manager_);
    events_ = std::make_unique<runtime::EventRecorder>(*client_, clock_,
                                                       runtime::EventSource{"member-test", ""});
  }
  ~MemberTestEnv() { Stop(); }

  ControllerContext Context() {
    return ControllerContext{*client_, clock_, *manager_, *informers_, *events_, options_, demand_};
  }

  // Builds a component on this env's context (and `args`); the env keeps it.
  template <typename T, typename... Args>
  T& Add(Args&&... args) {
    ControllerContext ctx = Context();
    auto c = std::make_unique<T>(ctx, std::forward<Args>(args)...);
    T& ref = *c;
    components_.push_back(std::move(c));
    return ref;
  }

  // Starts the informers and controllers (after the components are added).
  Status Start() { return manager_->Start(); }

  void Stop() {
    if (stopped_) return;
    stopped_ = true;
    manager_->Stop();
    informers_->StopAll();
    events_.reset();
    components_.clear();
    // The manager refers to the informers: it goes first.
    manager_.reset();
    informers_.reset();
    if (gc_) gc_->Stop();
  }

  // Waits until `done`; while the named controllers have nothing to do but
  // wait for the clock, moves it a second at a time (`limit` in all).
  bool AdvanceUntil(const std::function<bool()>& done, Duration limit,
                    std::initializer_list<std::string_view> controllers) {
    Duration moved{};
    return runtime::testing::Eventually([&] {
      if (done()) return true;
      bool idle = true, waiting = false;
      for (std::string_view name : controllers) {
        runtime::Controller* c = manager_->Find(std::string(name));
        if (c == nullptr) continue;
        runtime::WorkQueueStats q = c->Metrics().queue;
        idle = idle && q.depth == 0 && q.processing == 0;
        waiting = waiting || q.waiting > 0;
      }
      if (idle && waiting && moved < limit) {
        clock_.Advance(std::chrono::seconds(1));
        moved += std::chrono::seconds(1);
      }
      return false;
    });
  }

  client::Client& client() { return *client_; }
  FakeClock& clock() { return clock_; }
  SimulationOptions& options() { return options_; }
  WorkloadDemand& demand() { return demand_; }
  runtime::ControllerManager& manager() { return *manager_; }
  SharedInformers& informers() { return *informers_; }
  apiserver::ApiServer& api() { return *api_; }
  const api::Registry& registry() const { return registry_; }

 private:
  FakeClock clock_;
  api::Registry registry_;
  std::unique_ptr<storage::Store> store_;
  std::unique_ptr<apiserver::ApiServer> api_;
  std::unique_ptr<apiserver::GarbageCollector> gc_;
  std::unique_ptr<client::Client> client_;
  SimulationOptions options_;
  WorkloadDemand demand_;
  std::unique_ptr<runtime::ControllerManager> manager_;
  std::unique_ptr<SharedInformers> informers_;
  std::unique_ptr<runtime::EventRecorder> events_;
  std::vector<std::unique_ptr<Component>> components_;
  bool stopped_ = false;
};

}  // namespace flotilla::member::testing
