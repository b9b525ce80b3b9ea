// The REST client over HTTP/2: many watches as streams of one connection,
// more connections only past the server's stream limit, the fall-back to
// HTTP/1.1, and watches that end normally when the server says GOAWAY and
// resume from their resourceVersion once it is back.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "client/client_test_util.h"
#include "client/rest_client.h"

namespace flotilla::client {
namespace {

using testing::Fast;
using testing::kConfigMaps;
using testing::kJson;
using testing::ScriptedServer;
using testing::TestCluster;
using testing::WatchRecorder;

std::string Event(const std::string& name, int rv) {
  return R"({"type":"MODIFIED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" +
         name + R"(","resourceVersion":")" + std::to_string(rv) + "\"}}}\n";
}

// Serves every watch as a stream the test writes to, keyed by the watch's
// label selector; answers other requests with an empty object.
class WatchServer {
 public:
  explicit WatchServer(uint32_t max_streams)
      : server_(
            [this](apiserver::Request& req, apiserver::Responder& resp) {
              if (req.Query("watch") != "true") return resp.Respond(200, kJson, "{}");
              auto stream = resp.StartAsyncStream(200, kJson);
              MutexLock lock(mu_);
              streams_[req.Query("labelSelector")] = stream;
              cv_.NotifyAll();
            },
            [max_streams](apiserver::HttpServerOptions& opts) {
              opts.http2_max_streams = max_streams;
            }) {}

  ScriptedServer& server() { return server_; }
  // Waits (bounded) for `n` watches to have started.
  bool WaitStreams(size_t n) {
    MutexLock lock(mu_);
    return cv_.WaitFor(lock, std::chrono::seconds(30),
                       [&]() REQUIRES(mu_) { return streams_.size() >= n; });
  }
  std::shared_ptr<apiserver::ChunkStream> stream(const std::string& selector) {
    MutexLock lock(mu_);
    return streams_.at(selector);
  }

 private:
  Mutex mu_;
  CondVar cv_;
  std::map<std::string, std::shared_ptr<apiserver::ChunkStream>> streams_ GUARDED_BY(mu_);
  ScriptedServer server_;  // last: stopped before the streams it serves go
};

struct Watcher {
  WatchRecorder rec;
  std::unique_ptr<Watch> watch;
};

// Starts `n` watches selected by w=0 ... w=n-1.
std::vector<std::unique_ptr<Watcher>> StartWatches(Client& client, int n) {
  std::vector<std::unique_ptr<Watcher>> watchers;
  for (int i = 0; i < n; ++i) {
    auto w = std::make_unique<Watcher>();
    WatchOptions opts;
    opts.label_selector = "w=" + std::to_string(i);
    auto watch = client.StartWatch(kConfigMaps, "default", opts, w->rec.OnEvent(), w->rec.OnDone());
    EXPECT_TRUE(watch.ok()) << watch.status().ToString();
    if (watch.ok()) w->watch = std::move(*watch);
    watchers.push_back(std::move(w));
  }
  return watchers;
}

TEST(Http2Test, TwoHundredWatchesShareOneConnectionWithEachWatchsEventsInOrder) {
  WatchServer ws(250);
  auto client = NewRestClient(ws.server().Config(), Fast()).value();
  constexpr int kWatches = 200;
  constexpr int kEvents = 20;
  auto watchers = StartWatches(*client, kWatches);
  ASSERT_TRUE(ws.WaitStreams(kWatches));
  // Interleaved across the watches, as a server's events for many kinds are.
  for (int e = 1; e <= kEvents; ++e) {
    for (int i = 0; i < kWatches; ++i) {
      ASSERT_TRUE(ws.stream("w=" + std::to_string(i))->Write(Event("cm" + std::to_string(i), e)));
    }
  }
  for (int i = 0; i < kWatches; ++i) {
    ASSERT_TRUE(watchers[i]->rec.WaitEvents(kEvents)) << "watch " << i;
    auto events = watchers[i]->rec.events();
    ASSERT_EQ(events.size(), static_cast<size_t>(kEvents));
    for (int e = 0; e < kEvents; ++e) {
      EXPECT_EQ(events[e].object.at("metadata").at("resourceVersion").as_string(),
                std::to_string(e + 1));
      EXPECT_EQ(events[e].object.at("metadata").at("name").as_string(), "cm" + std::to_string(i));
    }
  }
  EXPECT_EQ(ws.server().connections(), 1u);
  for (const auto& request : ws.server().requests()) EXPECT_EQ(request.protocol, "HTTP/2.0");
  // Requests share the connection with the open watches.
  ASSERT_TRUE(client->Get(kConfigMaps, "default", "x").ok());
  EXPECT_EQ(ws.server().connections(), 1u);
  for (auto& w : watchers) w->watch->Stop();
}

TEST(Http2Test, PastTheServersStreamLimitAnotherConnectionOpens) {
  WatchServer ws(100);
  auto client = NewRestClient(ws.server().Config(), Fast()).value();
  auto watchers = StartWatches(*client, 150);
  ASSERT_TRUE(ws.WaitStreams(150));
  EXPECT_EQ(ws.server().connections(), 2u);
  for (int i : {0, 149}) {
    ASSERT_TRUE(ws.stream("w=" + std::to_string(i))->Write(Event("cm", 7)));
    ASSERT_TRUE(watchers[i]->rec.WaitEvents(1));
  }
  for (auto& w : watchers) w->watch->Stop();
}

// As client-go's transports of one TLS configuration: the clients of a
// process that reach a server as the same TLS client share its connection,
// each with its own token and options; another TLS client has its own.
TEST(Http2Test, ClientsThatAreOneTlsClientOfAServerShareItsConnection) {
  ScriptedServer server(
      [](apiserver::Request&, apiserver::Responder& resp) { resp.Respond(200, kJson, "{}"); });
  RestConfig first_config = server.Config();
  first_config.token = "first";
  RestConfig second_config = server.Config();
  second_config.token = "second";
  RestOptions second_options = Fast();
  second_options.user_agent = "second";
  auto first = NewRestClient(first_config, Fast()).value();
  auto second = NewRestClient(second_config, second_options).value();
  ASSERT_TRUE(first->Get(kConfigMaps, "default", "x").ok());
  ASSERT_TRUE(second->Get(kConfigMaps, "default", "x").ok());
  EXPECT_EQ(server.connections(), 1u);
  auto seen = server.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].Header("authorization"), "Bearer first");
  EXPECT_EQ(seen[1].Header("authorization"), "Bearer second");
  EXPECT_EQ(seen[1].Header("user-agent"), "second");

  // The first client gone, the connection stays the second's.
  first.reset();
  ASSERT_TRUE(second->Get(kConfigMaps, "default", "x").ok());
  EXPECT_EQ(server.connections(), 1u);

  // Other CA material (the same CA, spelt otherwise) is another TLS client.
  RestConfig other_config = server.Config();
  other_config.ca_pem += "\n";
  auto other = NewRestClient(other_config, Fast()).value();
  ASSERT_TRUE(other->Get(kConfigMaps, "default", "x").ok());
  EXPECT_EQ(server.connections(), 2u);

  // Once no client holds it, the connection goes: a new client dials again.
  second.reset();
  other.reset();
  auto again = NewRestClient(first_config, Fast()).value();
  ASSERT_TRUE(again->Get(kConfigMaps, "default", "x").ok());
  EXPECT_EQ(server.connections(), 3u);
}

TEST(Http2Test, HttpOneOneWhenTheServerDoesNotOfferHttp2OrTheClientDoesNotWantIt) {
  auto answer = [](apiserver::Request&, apiserver::Responder& resp) {
    resp.Respond(200, kJson, "{}");
  };
  ScriptedServer h1_only(answer, [](apiserver::HttpServerOptions& o) { o.http2 = false; });
  auto client = NewRestClient(h1_only.Config(), Fast()).value();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(client->Get(kConfigMaps, "default", "x").ok());
  WatchRecorder rec;
  auto watch = client->StartWatch(kConfigMaps, "default", {}, rec.OnEvent(), rec.OnDone());
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  for (const auto& request : h1_only.requests()) EXPECT_EQ(request.protocol, "HTTP/1.1");
  EXPECT_EQ(h1_only.requests().size(), 4u);

  ScriptedServer both(answer);
  RestOptions h1 = Fast();
  h1.http2 = false;
  ASSERT_TRUE(NewRestClient(both.Config(), h1).value()->Get(kConfigMaps, "default", "x").ok());
  ASSERT_TRUE(NewRestClient(both.Config(), Fast()).value()->Get(kConfigMaps, "default", "x").ok());
  ASSERT_EQ(both.requests().size(), 2u);
  EXPECT_EQ(both.requests()[0].protocol, "HTTP/1.1");
  EXPECT_EQ(both.requests()[1].protocol, "HTTP/2.0");
}

TEST(Http2Test, ErrorsBodiesAndLargeResponsesComeWhole) {
  // Past the windows first granted: the client's 4 MiB per stream, the
  // server's 256 KiB (and under its 3 MiB body limit).
  std::string big(5 << 20, 'x');
  std::string upload(2 << 20, 'u');
  ScriptedServer server([&](apiserver::Request& req, apiserver::Responder& resp) {
    if (req.path.ends_with("/missing")) {
      return resp.Respond(404, kJson,
                          R"({"kind":"Status","apiVersion":"v1","status":"Failure",)"
                          R"("reason":"NotFound","message":"configmaps \"missing\" not found",)"
                          R"("code":404})");
    }
    if (req.method == "POST") return resp.Respond(201, kJson, req.body);
    resp.Respond(200, kJson, R"({"kind":"ConfigMap","data":{"big":")" + big + R"("}})");
  });
  auto client = NewRestClient(server.Config(), Fast()).value();
  Status missing = client->Get(kConfigMaps, "default", "missing").status();
  EXPECT_TRUE(missing.Is(Reason::kNotFound)) << missing.ToString();
  EXPECT_EQ(missing.message(), "configmaps \"missing\" not found");
  auto got = client->Get(kConfigMaps, "default", "big");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->at("data").at("big").as_string().size(), big.size());
  json::object cm{{"apiVersion", "v1"},
                  {"kind", "ConfigMap"},
                  {"metadata", {{"name", "up"}}},
                  {"data", {{"big", upload}}}};
  auto created = client->Create(kConfigMaps, "default", cm);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->at("data").at("big").as_string(), upload);
}

// The server stopping says GOAWAY: the watch ends normally, as one the
// server closes over HTTP/1.1, and the client, once the server is back,
// connects again and resumes the watch from the resourceVersion it had.
TEST(Http2Test, WatchesEndNormallyOnGoAwayAndResumeFromTheirResourceVersion) {
  TestCluster cluster({}, nullptr, [](apiserver::ServerOptions& o) { o.storage = "sqlite"; });
  auto client = cluster.Rest(cluster.AdminConfig(), Fast());
  json::object a{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "a"}}}};
  ASSERT_TRUE(client->Create(kConfigMaps, "default", a).ok());
  WatchRecorder first;
  WatchOptions opts;
  opts.resource_version = "0";
  auto watch = client->StartWatch(kConfigMaps, "default", opts, first.OnEvent(), first.OnDone());
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  ASSERT_TRUE(first.WaitEvents(1));
  std::string rv = (*watch)->LastResourceVersion();

  cluster.Restart();
  ASSERT_TRUE(first.WaitDone());
  EXPECT_TRUE(first.done()[0].ok()) << first.done()[0].ToString();

  WatchRecorder second;
  opts.resource_version = rv;
  auto resumed =
      client->StartWatch(kConfigMaps, "default", opts, second.OnEvent(), second.OnDone());
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  json::object b{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "b"}}}};
  ASSERT_TRUE(client->Create(kConfigMaps, "default", b).ok());
  ASSERT_TRUE(second.WaitEvents(1));
  auto events = second.events();
  ASSERT_EQ(events.size(), 1u);  // b only: a was seen before
  EXPECT_EQ(events[0].object.at("metadata").at("name").as_string(), "b");
  (*resumed)->Stop();
}

}  // namespace
}  // namespace flotilla::client
