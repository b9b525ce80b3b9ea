#include "runtime/controller_manager.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>
#include <thread>

#include "base/mutex.h"
#include "runtime/fake_client.h"
#include "runtime/test_util.h"

namespace flotilla::runtime {
namespace {

using namespace std::chrono_literals;
using testing::Eventually;

using testing::kConfigMaps;

json::object ConfigMap(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", "ns"}}}};
}

// Counts reconciles per key; thread-safe.
class Calls {
 public:
  void Add(const std::string& key) {
    MutexLock lock(mu_);
    ++counts_[key];
  }
  int Of(const std::string& key) {
    MutexLock lock(mu_);
    return counts_[key];
  }

 private:
  Mutex mu_;
  std::map<std::string, int> counts_;
};

class ControllerManagerTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  FakeClient client_{clock_};
  Calls calls_;
};

TEST_F(ControllerManagerTest, ReconcilesWhatTheInformerSeesAfterTheCacheSynced) {
  ASSERT_TRUE(client_.Create(kConfigMaps, "ns", ConfigMap("a")).ok());
  Informer informer(client_, kConfigMaps, clock_);
  ControllerManager manager(clock_);
  manager.AddInformer(&informer);
  std::atomic<bool> saw_unsynced = false;
  Controller& controller = manager.AddController("cm", 2, [&](const std::string& key) {
    if (!informer.HasSynced()) saw_unsynced = true;
    calls_.Add(key);
    return Result{};
  });
  informer.AddEventHandler(controller.EnqueueHandler());
  ASSERT_TRUE(manager.Start().ok());
  EXPECT_TRUE(Eventually([&] { return calls_.Of("ns/a") == 1; }));
  ASSERT_TRUE(client_.Create(kConfigMaps, "ns", ConfigMap("b")).ok());
  ASSERT_TRUE(client_.Delete(kConfigMaps, "ns", "a").ok());
  EXPECT_TRUE(Eventually([&] { return calls_.Of("ns/b") == 1 && calls_.Of("ns/a") == 2; }));
  EXPECT_FALSE(saw_unsynced);
  EXPECT_EQ(manager.Find("cm"), &controller);
  manager.Stop();
}

// A controller removed (its kind went away): its workers stop, the
// informer's handler it was given goes, and nothing reaches it after.
TEST_F(ControllerManagerTest, ARemovedControllerAndHandlerGetNothingMore) {
  ASSERT_TRUE(client_.Create(kConfigMaps, "ns", ConfigMap("a")).ok());
  Informer informer(client_, kConfigMaps, clock_);
  ControllerManager manager(clock_);
  manager.AddInformer(&informer);
  Controller& controller = manager.AddController("cm", 1, [&](const std::string& key) {
    calls_.Add(key);
    return Result{};
  });
  Informer::HandlerId handler = informer.AddEventHandler(controller.EnqueueHandler());
  std::atomic<int> others = 0;
  informer.AddEventHandler({.on_add = [&](const ObjectPtr&) { ++others; }});
  ASSERT_TRUE(manager.Start().ok());
  ASSERT_TRUE(Eventually([&] { return calls_.Of("ns/a") == 1 && others == 1; }));

  informer.RemoveEventHandler(handler);
  std::unique_ptr<Controller> removed = manager.RemoveController(controller);
  ASSERT_EQ(removed.get(), &controller);
  EXPECT_EQ(manager.Find("cm"), nullptr);
  removed->queue().Add("ns/direct");  // dropped: shut down
  ASSERT_TRUE(client_.Create(kConfigMaps, "ns", ConfigMap("b")).ok());
  // The other handler still hears of it; the removed one did not.
  ASSERT_TRUE(Eventually([&] { return others == 2; }));
  EXPECT_EQ(calls_.Of("ns/b"), 0);
  EXPECT_EQ(calls_.Of("ns/direct"), 0);
  EXPECT_EQ(removed->queue().Stats().depth, 0);
  informer.RemoveEventHandler(handler);  // again: nothing
  manager.Stop();
  // Once stopping, the manager keeps its controllers.
  Controller& late = manager.AddController("late", 1, [](const std::string&) { return Result{}; });
  EXPECT_EQ(manager.RemoveController(late), nullptr);
}

TEST_F(ControllerManagerTest, ErrorsAreRetriedWithBackoffThenForgotten) {
  ControllerManager manager(clock_);
  std::atomic<int> attempts = 0;
  Controller& c = manager.AddController("flaky", 1, [&](const std::string&) -> StatusOr<Result> {
    if (++attempts <= 2) return Status::Unavailable("member cluster unreachable");
    return Result{};
  });
  ASSERT_TRUE(manager.Start().ok());
  c.queue().Add("ns/x");
  ASSERT_TRUE(Eventually([&] { return attempts == 1 && c.queue().Stats().waiting == 1; }));
  clock_.Advance(5ms);  // first retry after 5 ms
  ASSERT_TRUE(Eventually([&] { return attempts == 2 && c.queue().Stats().waiting == 1; }));
  EXPECT_EQ(c.queue().NumRequeues("ns/x"), 2);
  clock_.Advance(9ms);
  EXPECT_EQ(attempts, 2);
  clock_.Advance(1ms);  // second retry after 10 ms
  // The worker counts the reconcile before it forgets the key's failures.
  ASSERT_TRUE(Eventually(
      [&] { return c.Metrics().reconciles == 3 && c.queue().NumRequeues("ns/x") == 0; }));

  ControllerMetrics m = c.Metrics();
  EXPECT_EQ(m.errors, 2u);
  EXPECT_EQ(m.exceptions, 0u);
  EXPECT_EQ(m.queue.retries, 2u);
}

TEST_F(ControllerManagerTest, ThrowingReconcileIsAnErrorNotACrash) {
  ControllerManager manager(clock_);
  std::atomic<int> attempts = 0;
  Controller& c = manager.AddController("thrower", 1, [&](const std::string&) -> StatusOr<Result> {
    int n = ++attempts;
    if (n == 1) throw std::runtime_error("bad annotation");
    if (n == 2) throw 42;
    return Result{};
  });
  ASSERT_TRUE(manager.Start().ok());
  c.queue().Add("k");
  ASSERT_TRUE(Eventually([&] { return attempts == 1 && c.queue().Stats().waiting == 1; }));
  clock_.Advance(5ms);
  ASSERT_TRUE(Eventually([&] { return attempts == 2 && c.queue().Stats().waiting == 1; }));
  clock_.Advance(10ms);
  ASSERT_TRUE(Eventually([&] { return c.Metrics().reconciles == 3; }));
  EXPECT_EQ(c.Metrics().exceptions, 2u);
  EXPECT_EQ(c.Metrics().errors, 2u);
}

TEST_F(ControllerManagerTest, RequeueAfterWaitsOnTheClock) {
  ControllerManager manager(clock_);
  std::atomic<int> attempts = 0;
  Controller& c = manager.AddController("waiter", 1, [&](const std::string&) {
    ++attempts;
    return Result{.requeue_after = 60s};
  });
  ASSERT_TRUE(manager.Start().ok());
  c.queue().Add("frs");
  ASSERT_TRUE(Eventually([&] { return attempts == 1 && c.queue().Stats().waiting == 1; }));
  clock_.Advance(59s);
  EXPECT_EQ(attempts, 1);
  clock_.Advance(1s);
  EXPECT_TRUE(Eventually([&] { return attempts == 2; }));
  EXPECT_EQ(c.queue().NumRequeues("frs"), 0);
  EXPECT_TRUE(Eventually([&] { return c.Metrics().requeues_after == 2; }));
  std::string text = RenderControllerMetrics(manager.Metrics());
  EXPECT_NE(text.find("controller_runtime_reconcile_total{controller=\"waiter\",result="
                      "\"requeue_after\"} 2"),
            std::string::npos)
      << text;
}

// The clock moves while the reconcile runs (a slow reconcile; a test
// moving a fake clock): the check it asked for is due from when it began.
TEST_F(ControllerManagerTest, RequeueAfterCountsFromWhenTheReconcileBegan) {
  ControllerManager manager(clock_);
  std::atomic<int> attempts = 0;
  Controller& c = manager.AddController("slow", 1, [&](const std::string&) {
    if (++attempts == 1) clock_.Advance(50s);
    return Result{.requeue_after = 60s};
  });
  ASSERT_TRUE(manager.Start().ok());
  c.queue().Add("frs");
  ASSERT_TRUE(Eventually([&] { return attempts == 1 && c.queue().Stats().waiting == 1; }));
  clock_.Advance(10s);
  EXPECT_TRUE(Eventually([&] { return attempts == 2; }));
}

TEST_F(ControllerManagerTest, KeyIsNeverReconciledByTwoWorkersAtOnce) {
  ControllerManager manager(clock_);
  std::map<std::string, std::atomic<int>> in_flight;
  for (int k = 0; k < 5; ++k) in_flight["k" + std::to_string(k)] = 0;
  std::atomic<int> overlaps = 0, total = 0;
  Controller& c = manager.AddController("busy", 4, [&](const std::string& key) {
    if (in_flight.at(key).fetch_add(1) != 0) ++overlaps;
    std::this_thread::yield();
    in_flight.at(key).fetch_sub(1);
    ++total;
    return Result{};
  });
  ASSERT_TRUE(manager.Start().ok());
  std::vector<std::thread> producers;
  for (int p = 0; p < 4; ++p) {
    producers.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) c.queue().Add("k" + std::to_string(i % 5));
    });
  }
  for (auto& p : producers) p.join();
  EXPECT_TRUE(Eventually([&] {
    ControllerMetrics m = c.Metrics();
    return m.queue.depth == 0 && m.busy_workers == 0 && m.queue.processing == 0;
  }));
  manager.Stop();
  EXPECT_EQ(overlaps, 0);
  EXPECT_GE(total, 5);
}

// A controller destroyed while its worker finishes the last reconcile: the
// worker touches nothing of the controller once it stops counting as
// running, since ShutDown may then return and the controller be freed (a
// worker used to read the queue after that; ASan caught it when a test's
// environment stopped its controllers). Each round releases the reconcile
// just as the destruction begins, so that ShutDown waits for that worker.
TEST_F(ControllerManagerTest, DestroyedWhileItsWorkerFinishes) {
  for (int i = 0; i < 500; ++i) {
    std::atomic<bool> entered = false, release = false;
    auto c = std::make_unique<Controller>(
        "once", 1,
        [&](const std::string&) {
          entered = true;
          while (!release) std::this_thread::yield();
          return Result{};
        },
        clock_, RateLimiterOptions{});
    c->StartWorkers();
    c->queue().Add("k");
    while (!entered) std::this_thread::yield();
    release = true;
    c.reset();
  }
}

TEST_F(ControllerManagerTest, StopWhileWaitingForCachesEndsStart) {
  client_.InjectError(FakeClient::Verb::kList, Status::Unavailable("down"), 1000);
  Informer informer(client_, kConfigMaps, clock_);
  ControllerManager manager(clock_);
  manager.AddInformer(&informer);
  std::atomic<int> reconciles = 0;
  manager.AddController("never", 1, [&](const std::string&) {
    ++reconciles;
    return Result{};
  });
  Status started;
  std::thread starter([&] { started = manager.Start(); });
  ASSERT_TRUE(Eventually([&] { return informer.Stats().list_failures >= 2; }));
  manager.Stop();
  starter.join();
  EXPECT_TRUE(started.Is(Reason::kServiceUnavailable)) << started.ToString();
  EXPECT_EQ(reconciles, 0);
}

TEST_F(ControllerManagerTest, MetricsHistogramUsesTheClock) {
  ControllerManager manager(clock_);
  Controller& c = manager.AddController("timed", 1, [&](const std::string& key) {
    clock_.Advance(key == "slow" ? 3s : 30ms);
    return Result{};
  });
  c.queue().Add("fast");
  c.queue().Add("slow");
  EXPECT_EQ(c.Metrics().queue.depth, 2u) << "queue depth before the workers start";
  ASSERT_TRUE(manager.Start().ok());
  ASSERT_TRUE(Eventually([&] { return c.Metrics().reconciles == 2; }));
  ControllerMetrics m = c.Metrics();
  EXPECT_EQ(m.duration_buckets[3], 1u);  // 30 ms: the 0.05 s bucket
  EXPECT_EQ(m.duration_buckets[9], 1u);  // 3 s: the 5 s bucket
  EXPECT_EQ(m.reconcile_time_total, 3030ms);
  EXPECT_EQ(m.reconcile_time_max, 3s);
  EXPECT_EQ(m.workers, 1);
  auto all = manager.Metrics();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].first, "timed");
  std::string text = RenderControllerMetrics(all);
  for (const char* line :
       {"controller_runtime_reconcile_total{controller=\"timed\",result=\"success\"} 2",
        "controller_runtime_reconcile_time_seconds_bucket{controller=\"timed\",le=\"0.05\"} 1",
        "controller_runtime_reconcile_time_seconds_bucket{controller=\"timed\",le=\"+Inf\"} 2",
        "controller_runtime_reconcile_time_seconds_sum{controller=\"timed\"} 3.03",
        "workqueue_depth{name=\"timed\"} 0"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
}

}  // namespace
}  // namespace flotilla::runtime
