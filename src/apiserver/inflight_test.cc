// The max-in-flight limit: how requests are classified, the counting, and
// an API server with limits of one, whose one read-only place a request to
// a blocking path holds while others arrive.
#include "apiserver/inflight.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <future>
#include <thread>

#include "apiserver/api_server.h"
#include "apiserver/api_server_test_util.h"
#include "apiserver/auth.h"

namespace flotilla::apiserver {
namespace {

using testing::RecordingResponder;

RequestInfo Info(const std::string& method, const std::string& target) {
  return ParseRequestInfo(testing::RequestTo(method, target));
}

TEST(ClassifyRequestTest, WatchesAndStreamsAreLongRunningWritesAreMutating) {
  EXPECT_EQ(ClassifyRequest(Info("GET", "/api/v1/pods?watch=true")), RequestKind::kLongRunning);
  EXPECT_EQ(ClassifyRequest(Info("GET", "/api/v1/watch/pods")), RequestKind::kLongRunning);
  EXPECT_EQ(ClassifyRequest(Info("GET", "/api/v1/namespaces/d/pods/p/log")),
            RequestKind::kLongRunning);
  EXPECT_EQ(ClassifyRequest(Info("POST", "/api/v1/namespaces/d/pods/p/exec")),
            RequestKind::kLongRunning);
  EXPECT_EQ(ClassifyRequest(Info("GET", "/api/v1/namespaces/d/pods")), RequestKind::kReadOnly);
  EXPECT_EQ(ClassifyRequest(Info("GET", "/api/v1/namespaces/d/pods/p")), RequestKind::kReadOnly);
  EXPECT_EQ(ClassifyRequest(Info("GET", "/version")), RequestKind::kReadOnly);
  EXPECT_EQ(ClassifyRequest(Info("POST", "/api/v1/namespaces/d/pods")), RequestKind::kMutating);
  EXPECT_EQ(ClassifyRequest(Info("PATCH", "/apis/apps/v1/namespaces/d/deployments/w/scale")),
            RequestKind::kMutating);
  EXPECT_EQ(ClassifyRequest(Info("DELETE", "/api/v1/namespaces/d/pods")), RequestKind::kMutating);
}

TEST(InflightLimiterTest, CountsPlacesPerKindAndGivesThemBack) {
  InflightLimiter limiter({.max_requests = 2, .max_mutating_requests = 1});
  auto a = limiter.TryAcquire(RequestKind::kReadOnly);
  auto b = limiter.TryAcquire(RequestKind::kReadOnly);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(limiter.TryAcquire(RequestKind::kReadOnly), nullptr);
  EXPECT_EQ(limiter.InFlight(RequestKind::kReadOnly), 2);
  auto w = limiter.TryAcquire(RequestKind::kMutating);  // its own limit
  ASSERT_TRUE(w);
  EXPECT_EQ(limiter.TryAcquire(RequestKind::kMutating), nullptr);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(limiter.TryAcquire(RequestKind::kLongRunning));
  a.reset();
  EXPECT_TRUE(limiter.TryAcquire(RequestKind::kReadOnly));  // released at once again
  EXPECT_EQ(limiter.InFlight(RequestKind::kReadOnly), 1);
  EXPECT_EQ(limiter.Dropped(RequestKind::kReadOnly), 1u);
  EXPECT_EQ(limiter.Dropped(RequestKind::kMutating), 1u);
  std::string metrics = limiter.RenderMetrics();
  EXPECT_NE(metrics.find("apiserver_current_inflight_requests{request_kind=\"readOnly\"} 1"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("apiserver_dropped_requests_total{request_kind=\"mutating\"} 1"),
            std::string::npos);

  InflightLimiter unlimited({0, 0});
  std::vector<std::unique_ptr<InflightLimiter::Slot>> held;
  for (int i = 0; i < 1000; ++i) held.push_back(unlimited.TryAcquire(RequestKind::kMutating));
  EXPECT_NE(held.back(), nullptr);
}

class InflightServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tokens = ::testing::TempDir() + "inflight-tokens-" + std::to_string(::getpid());
    std::ofstream(tokens) << "tok-alice,alice,1,flotilla:viewers\n"
                          << "tok-admin,admin,2,system:masters\n";
    auto authn = Authenticator::FromTokenFile(tokens);
    ASSERT_TRUE(authn.ok()) << authn.status().ToString();
    authn_ = std::move(*authn);
    std::remove(tokens.c_str());
    api::RegisterFoundationKinds(registry_);
    ApiServerOptions opts{.registry = &registry_,
                          .store = store_.get(),
                          .clock = &clock_,
                          .authenticator = authn_.get()};
    opts.inflight = {.max_requests = 1, .max_mutating_requests = 1};
    // GET /hold blocks until released: it holds the one read-only place.
    opts.extra_paths = [this](Request& req, const UserInfo&, Responder& resp) {
      if (req.path != "/hold") return false;
      entered_.set_value();
      release_.get_future().wait();
      resp.Respond(200, {}, "held");
      return true;
    };
    server_ = std::make_unique<ApiServer>(opts);
    ASSERT_TRUE(server_->EnsureDefaultNamespaces().ok());
    ASSERT_TRUE(server_->StartRbac().ok());
  }

  void Do(RecordingResponder& resp, const std::string& method, const std::string& target,
          const std::string& token, const std::string& body = "") {
    Request req;
    req.method = method;
    req.target = target;
    SplitTarget(target, &req.path, &req.query);
    req.headers["authorization"] = "Bearer " + token;
    req.headers["content-type"] = "application/json";
    req.body = body;
    server_->Handle(req, resp);
  }

  FakeClock clock_;
  api::Registry registry_;
  std::unique_ptr<storage::Store> store_ = storage::NewMemoryStore();
  std::unique_ptr<Authenticator> authn_;
  std::unique_ptr<ApiServer> server_;
  std::promise<void> entered_, release_;
};

TEST_F(InflightServerTest, PastTheLimitA429WithRetryAfterExceptForWatchesWritesAndMasters) {
  RecordingResponder held;
  std::thread holder([&] { Do(held, "GET", "/hold", "tok-alice"); });
  entered_.get_future().wait();

  RecordingResponder refused;
  Do(refused, "GET", "/api/v1/namespaces/default/configmaps", "tok-alice");
  EXPECT_EQ(refused.code(), 429) << refused.body();
  EXPECT_EQ(refused.HeaderValue("Retry-After"), "1");
  json::object status = refused.Json();
  EXPECT_EQ(StringAt(status, "reason"), "TooManyRequests");
  EXPECT_EQ(IntAt(status, "details.retryAfterSeconds"), 1);

  // Writes have their own limit (alice may not write: refused by
  // authorization, not by the limit); system:masters is not limited; a
  // watch is not counted.
  RecordingResponder write;
  Do(write, "POST", "/api/v1/namespaces/default/configmaps", "tok-alice",
     R"({"metadata": {"name": "c"}})");
  EXPECT_EQ(write.code(), 403) << write.body();
  RecordingResponder admin;
  Do(admin, "GET", "/api/v1/namespaces/default/configmaps", "tok-admin");
  EXPECT_EQ(admin.code(), 200) << admin.body();
  RecordingResponder watch;
  watch.Leave();  // the watch ends as soon as it has started
  Do(watch, "GET", "/api/v1/namespaces/default/configmaps?watch=true", "tok-alice");
  EXPECT_EQ(watch.code(), 200) << watch.body();

  release_.set_value();
  holder.join();
  EXPECT_EQ(held.code(), 200);
  RecordingResponder again;
  Do(again, "GET", "/api/v1/namespaces/default/configmaps", "tok-alice");
  EXPECT_EQ(again.code(), 200) << again.body();
  RecordingResponder metrics;
  Do(metrics, "GET", "/metrics", "tok-admin");
  EXPECT_NE(metrics.body().find("apiserver_dropped_requests_total{request_kind=\"readOnly\"} 1"),
            std::string::npos)
      << metrics.body();
}

}  // namespace
}  // namespace flotilla::apiserver
