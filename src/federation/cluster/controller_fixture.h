// The fixture the federation's controller tests share: a federation API
// server and three members started in process on port 0 (MemberServer:
// each can be stopped and started again), joined as Clusters; a
// FederationContext on a fake clock with the controllers a test makes; and
// the waits those tests need. The members run no controllers: a test plays
// them by writing local statuses and pods itself, and decides when a
// cluster is ready through the ClusterClients registry.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/json.h"
#include "client/client_test_util.h"
#include "federation/cluster/join.h"
#include "federation/cluster/test_util.h"
#include "federation/common/context.h"
#include "federation/common/test_util.h"
#include "runtime/event_recorder.h"
#include "runtime/test_util.h"

namespace flotilla::federation::cluster::testing {

// The value at `path` in `obj`, null when absent: a copy, safe to take from
// a temporary.
inline json::value At(const json::object& obj, std::string_view path) {
  const json::value* v = Find(obj, path);
  return v == nullptr ? json::value() : *v;
}

class ControllerTest : public ::testing::Test {
 protected:
  static constexpr int kMembers = 3;
  static constexpr char kNs[] = "default";

  // `controllers`: the names of the controllers whose queues Settle watches,
  // the one under test first (Holds checks `key` again with it).
  ControllerTest(std::vector<std::string> controllers, std::string key)
      : controller_names_(std::move(controllers)), key_(std::move(key)) {}

  void SetUp() override {
    fed_client_ = fed_.InProcess();
    for (int i = 0; i < kMembers; ++i) {
      ASSERT_TRUE(Join(i).ok());
      member_clients_[i] = members_[i].InProcess();
    }
  }
  void TearDown() override { Stop(); }

  // Member i's Cluster name ("a", "b", "c" unless a test says otherwise).
  virtual std::string Name(int i) const { return std::string(1, static_cast<char>('a' + i)); }
  // The labels member i joins with.
  virtual std::map<std::string, std::string> Labels(int i) const { return {}; }
  // The client the registry hands out for member i once it is Ready.
  virtual std::shared_ptr<client::Client> ReadyClient(int i) { return members_[i].InProcess(); }

  // Joins member i as `name` (its Name when empty).
  Status Join(int i, const std::string& name = "") {
    JoinOptions join{.name = name.empty() ? Name(i) : name,
                     .member = members_[i].AdminConfig(),
                     .labels = Labels(i)};
    return cluster::Join(*fed_client_, join).status();
  }

  // Makes the context, lets `make` build the controllers on it (with
  // Make), marks the first `ready` members Ready, starts, and waits for
  // those members' caches to sync: a check that runs before they do plans
  // nothing, and the one their sync brings would read a clock the test has
  // already moved.
  template <typename MakeControllers>
  void StartWith(MakeControllers make, int ready = kMembers) {
    ctx_ = std::make_unique<FederationContext>(*fed_client_, clock_, context_options_);
    make();
    for (int i = 0; i < ready; ++i) SetReady(i);
    ASSERT_TRUE(ctx_->Start().ok());
    ASSERT_TRUE(runtime::testing::Eventually(
        [&] { return federation::testing::MembersSynced(ctx_->members(), ready); }));
  }
  // A controller of type C on the context, owned by the fixture until Stop.
  template <typename C, typename... Args>
  C& Make(Args&&... args) {
    auto controller = std::make_shared<C>(*ctx_, std::forward<Args>(args)...);
    controllers_.push_back(controller);
    return *controller;
  }
  // Stops the context, then drops the controllers (newest first) and it.
  void Stop() {
    if (ctx_) ctx_->Stop();
    while (!controllers_.empty()) controllers_.pop_back();
    ctx_.reset();
  }
  // Marks member i Ready as `name` (its Name when empty).
  void SetReady(int i, const std::string& name = "") {
    ctx_->clusters().SetReady(name.empty() ? Name(i) : name, ReadyClient(i));
  }

  // The controller under test.
  runtime::Controller& Controller() { return *ctx_->manager().Find(controller_names_.front()); }
  // Waits until `done`. When the controllers only wait on a delay (a
  // retry's backoff, a deletion's re-check), nudges the fake time by 10 ms
  // steps, `most` in all: far less than any threshold a test crosses.
  bool Settle(const std::function<bool()>& done, Duration most = std::chrono::seconds(2)) {
    Duration nudged = Duration::zero();
    return runtime::testing::Eventually([&] {
      if (done()) return true;
      bool idle = true, waiting = false;
      for (const std::string& name : controller_names_) {
        runtime::WorkQueueStats q = ctx_->manager().Find(name)->Metrics().queue;
        idle = idle && q.depth == 0 && q.processing == 0;
        waiting = waiting || q.waiting > 0;
      }
      if (idle && waiting && nudged < most) {
        clock_.Advance(std::chrono::milliseconds(10));
        nudged += std::chrono::milliseconds(10);
      }
      return false;
    });
  }
  // Waits for `state`, then checks that it still holds after one more full
  // check of the object: the controller had every chance to do more.
  void Holds(const std::function<bool()>& state, Duration most = std::chrono::seconds(2)) {
    ASSERT_TRUE(Settle(state, most));
    runtime::Controller& c = Controller();
    uint64_t before = c.Metrics().reconciles;
    c.queue().Add(key_);
    ASSERT_TRUE(runtime::testing::Eventually([&] { return c.Metrics().reconciles > before; }));
    ASSERT_TRUE(Settle(
        [&] {
          runtime::WorkQueueStats q = c.Metrics().queue;
          return q.depth == 0 && q.processing == 0;
        },
        most));
    EXPECT_TRUE(state());
  }

  // Plays member i's scheduler: creates `pod` there, Pending, with no node
  // that fits it (PodScheduled False, Unschedulable, since now).
  void CreateUnschedulablePod(int i, const json::object& pod) {
    auto made = member_clients_[i]->Create(client::kPods, kNs, pod);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    json::object pending = *made;
    pending["status"] = json::object{
        {"phase", "Pending"},
        {"conditions",
         json::array{json::object{{"type", "PodScheduled"},
                                  {"status", "False"},
                                  {"reason", "Unschedulable"},
                                  {"lastTransitionTime", FormatRfc3339(clock_.Now())}}}}};
    ASSERT_TRUE(member_clients_[i]->UpdateStatus(client::kPods, kNs, pending).ok());
  }

  // A ClusterPropagationPolicy `name` selecting the objects of `kind` (of
  // apps/v1) that `selector` names (a ResourceSelector's fields besides
  // apiVersion and kind, each with its leading comma), with `spec` (more
  // members of its spec, each with its leading comma).
  static json::object Cpp(const std::string& name, const std::string& selector,
                          const std::string& spec, const std::string& kind = "ReplicaSet") {
    return *ParseJsonObject(
        R"({"apiVersion":"policy.karmada.io/v1alpha1","kind":"ClusterPropagationPolicy",
            "metadata":{"name":")" +
        name + R"("},"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":")" + kind + "\"" +
        selector + "}]" + spec + "}}");
  }
  // Waits until the federation knows `n` propagation policies: an object
  // checked before its policy is known is placed without it first.
  void WaitForPolicies(size_t n) {
    ASSERT_TRUE(runtime::testing::Eventually([&] { return ctx_->policies().All().size() == n; }));
  }
  // Creates `policy` (a ClusterPropagationPolicy), or replaces the one of
  // its name (again after a conflict: the federation writes the policy's
  // status).
  void PutPolicy(json::object policy) {
    std::string name(StringViewAt(policy, "metadata.name"));
    ASSERT_TRUE(runtime::testing::Eventually([&] {
      auto current = fed_client_->Get(kClusterPropagationPolicies, "", name);
      if (!current.ok()) return fed_client_->Create(kClusterPropagationPolicies, "", policy).ok();
      policy["metadata"].as_object()["resourceVersion"] =
          *Find(*current, "metadata.resourceVersion");
      return fed_client_->Update(kClusterPropagationPolicies, "", policy).ok();
    }));
  }

  // Creates a ClusterOverridePolicy `name` whose one rule changes the copies
  // of the `kind` (of apps/v1) objects in `cluster` by `overriders` (the
  // rule's overriders object), and waits until the federation knows it.
  void CreateOverridePolicy(const std::string& name, const std::string& kind,
                            const std::string& cluster, const std::string& overriders) {
    auto cop = ParseJsonObject(
        R"({"apiVersion":"policy.karmada.io/v1alpha1","kind":"ClusterOverridePolicy",
            "metadata":{"name":")" +
        name + R"("},"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":")" + kind +
        R"("}],"overrideRules":[{"targetCluster":{"clusterNames":[")" + cluster +
        R"("]},"overriders":)" + overriders + "}]}}");
    ASSERT_TRUE(cop.ok()) << cop.status().ToString();
    ASSERT_TRUE(fed_client_->Create(kClusterOverridePolicies, "", *cop).ok());
    ASSERT_TRUE(runtime::testing::Eventually([&] { return !ctx_->overrides().Empty(); }));
  }

  // The reasons, and the messages of one reason, of the federation's Events
  // in the test namespace.
  std::vector<std::string> EventReasons() {
    std::vector<std::string> out;
    for (const json::object& e : Events()) out.push_back(StringAt(e, "reason"));
    return out;
  }
  std::vector<std::string> EventMessages(const std::string& reason) {
    std::vector<std::string> out;
    for (const json::object& e : Events()) {
      if (StringAt(e, "reason") == reason) out.push_back(StringAt(e, "message"));
    }
    return out;
  }

  FakeClock clock_;
  // What StartWith makes the context with.
  ContextOptions context_options_;
  client::testing::TestCluster fed_;
  MemberServer members_[kMembers];
  std::unique_ptr<client::Client> member_clients_[kMembers];
  std::unique_ptr<client::Client> fed_client_;
  std::unique_ptr<FederationContext> ctx_;

 private:
  std::vector<json::object> Events() {
    auto list = fed_client_->List(runtime::kEvents, kNs, {});
    return list.ok() ? list->items : std::vector<json::object>{};
  }

  const std::vector<std::string> controller_names_;
  const std::string key_;
  std::vector<std::shared_ptr<void>> controllers_;
};

}  // namespace flotilla::federation::cluster::testing
