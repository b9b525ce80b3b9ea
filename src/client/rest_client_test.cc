// The REST transport: TLS verification, credentials, configuration errors
// (against a real API server), and retries, Retry-After, pooling, prefixes,
// timeouts and streamed watches (against a scripted HTTPS server).
#include "client/rest_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <map>
#include <thread>

#include "base/mutex.h"
#include "base/timer.h"
#include "client/client_test_util.h"
#include "client/connection_pool.h"
#include "client/h2_connection.h"
#include "runtime/test_util.h"

namespace flotilla::client {
namespace {

using std::chrono::milliseconds;
using testing::Fast;
using testing::kJson;
using testing::ScriptedServer;
using testing::TempDir;
using testing::TestCluster;
using testing::WatchRecorder;

using testing::kConfigMaps;
using testing::kNamespaces;
const char* kConfigMapJson = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"}})";

json::object BareConfigMap(const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}}};
}

std::string StatusJson(int code, const std::string& reason, const std::string& message) {
  return json::serialize(json::object{{"kind", "Status"},
                                      {"apiVersion", "v1"},
                                      {"status", "Failure"},
                                      {"reason", reason},
                                      {"message", message},
                                      {"code", code}});
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(RestTlsTest, AWrongCaIsRefusedUnlessInsecure) {
  TestCluster cluster;
  TempDir other;
  auto other_pki = apiserver::EnsurePki({other.path() + "/pki"});
  ASSERT_TRUE(other_pki.ok());
  RestConfig config = cluster.AdminConfig();
  config.ca_pem = other_pki->ca_cert_pem;
  Status refused = cluster.Rest(config, Fast())->Get(kNamespaces, "", "default").status();
  EXPECT_TRUE(refused.Is(Reason::kServiceUnavailable)) << refused.ToString();
  EXPECT_TRUE(Contains(refused.message(), "tls: failed to verify certificate"))
      << refused.message();

  config.ca_pem.clear();  // the system trust store does not know our CA either
  EXPECT_TRUE(
      Contains(cluster.Rest(config, Fast())->Get(kNamespaces, "", "default").status().message(),
               "tls: failed to verify certificate"));

  config.insecure = true;
  EXPECT_TRUE(cluster.Rest(config, Fast())->Get(kNamespaces, "", "default").ok());
}

TEST(RestTlsTest, ServerNameOverridesTheVerifiedName) {
  TestCluster cluster;
  RestConfig config = cluster.AdminConfig();
  config.tls_server_name = "localhost";  // a SAN of the serving certificate
  auto got = cluster.Rest(config, Fast())->Get(kNamespaces, "", "default");
  EXPECT_TRUE(got.ok()) << got.status().ToString();
  config.tls_server_name = "elsewhere.example";
  Status s = cluster.Rest(config, Fast())->Get(kNamespaces, "", "default").status();
  EXPECT_TRUE(Contains(s.message(), "hostname mismatch")) << s.ToString();
}

TEST(RestAuthTest, BearerTokens) {
  TestCluster cluster;
  RestConfig config = cluster.AdminConfig();
  config.token.clear();
  EXPECT_TRUE(
      cluster.Rest(config)->Get(kNamespaces, "", "default").status().Is(Reason::kUnauthorized));
  config.token = cluster.server().pki().readonly_token;
  auto viewer = cluster.Rest(config);
  EXPECT_TRUE(viewer->Get(kNamespaces, "", "default").ok());
  Status forbidden = viewer->Create(kConfigMaps, "default", BareConfigMap("cfg")).status();
  EXPECT_TRUE(forbidden.Is(Reason::kForbidden)) << forbidden.ToString();
  EXPECT_TRUE(Contains(forbidden.message(), "User \"flotilla-viewer\" cannot create"));
}

TEST(RestAuthTest, ClientCertificates) {
  TestCluster cluster;
  RestConfig config = cluster.AdminConfig();
  config.token.clear();
  auto admin = apiserver::IssueClientCert(cluster.server().pki(), "alice", {"system:masters"});
  ASSERT_TRUE(admin.ok());
  config.client_cert_pem = admin->first;
  config.client_key_pem = admin->second;
  auto created = cluster.Rest(config)->Create(kConfigMaps, "default", BareConfigMap("cfg"));
  EXPECT_TRUE(created.ok()) << created.status().ToString();

  auto nobody = apiserver::IssueClientCert(cluster.server().pki(), "bob", {});
  ASSERT_TRUE(nobody.ok());
  config.client_cert_pem = nobody->first;
  config.client_key_pem = nobody->second;
  Status s = cluster.Rest(config)->Get(kConfigMaps, "default", "cfg").status();
  EXPECT_TRUE(s.Is(Reason::kForbidden)) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "User \"bob\"")) << s.message();
}

TEST(RestConfigTest, ConfigsThatCannotWorkAreRejected) {
  auto bad = [](RestConfig config) { return NewRestClient(config).status(); };
  RestConfig config;
  config.server = "http://127.0.0.1:6443";
  EXPECT_EQ(bad(config).message(),
            "invalid server URL \"http://127.0.0.1:6443\": the scheme must be https");
  config.server = "https://127.0.0.1:6443?x=1";
  EXPECT_TRUE(bad(config).Is(Reason::kBadRequest));
  config.server = "not a url";
  EXPECT_TRUE(bad(config).Is(Reason::kBadRequest));
  config.server = "https://127.0.0.1:6443";
  config.ca_pem = "-----BEGIN CERTIFICATE-----\ngarbage\n-----END CERTIFICATE-----\n";
  EXPECT_TRUE(bad(config).Is(Reason::kBadRequest));
  config.ca_pem.clear();
  config.client_cert_pem = "cert without key";
  EXPECT_TRUE(bad(config).Is(Reason::kBadRequest));
}

// A tunnel is TLS from its other end: a tunnelled client makes no TLS
// context of its own (none loads the system's trust store), so what it
// says of TLS is not even read.
TEST(RestConfigTest, ATunnelledClientBuildsNoTlsContext) {
  RestConfig config;
  config.server = "https://edge.agent";
  config.tunnel = std::make_shared<H2Tunnel>("edge");
  config.ca_pem = "-----BEGIN CERTIFICATE-----\ngarbage\n-----END CERTIFICATE-----\n";
  auto client = NewRestClient(config, Fast());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto got = (*client)->Get(kConfigMaps, "default", "x");
  EXPECT_TRUE(got.status().Is(Reason::kServiceUnavailable)) << got.status().ToString();
  EXPECT_NE(got.status().message().find("no agent is connected"), std::string::npos);
}

TEST(RestRetryTest, ServerErrorsAreRetriedForGetOnly) {
  std::atomic<int> failures{2};
  ScriptedServer server([&](apiserver::Request&, apiserver::Responder& resp) {
    if (failures.fetch_sub(1) > 0) {
      return resp.Respond(503, kJson, StatusJson(503, "ServiceUnavailable", "try later"));
    }
    resp.Respond(200, kJson, kConfigMapJson);
  });
  auto client = NewRestClient(server.Config(), Fast());
  ASSERT_TRUE(client.ok());
  auto got = (*client)->Get(kConfigMaps, "default", "cfg");
  EXPECT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(server.requests().size(), 3u);

  failures = 1;
  Status s = (*client)->Create(kConfigMaps, "default", BareConfigMap("cfg")).status();
  EXPECT_TRUE(s.Is(Reason::kServiceUnavailable));
  EXPECT_EQ(s.message(), "try later");
  EXPECT_EQ(server.requests().size(), 4u);
}

TEST(RestRetryTest, RetriesStopAfterMaxRetries) {
  ScriptedServer server([&](apiserver::Request&, apiserver::Responder& resp) {
    resp.Respond(503, {{"Content-Type", "text/plain"}}, "overloaded");
  });
  RestOptions opts = Fast();
  opts.max_retries = 2;
  Status s = NewRestClient(server.Config(), opts).value()->Get(kConfigMaps, "d", "c").status();
  EXPECT_TRUE(s.Is(Reason::kServiceUnavailable));
  ASSERT_EQ(s.causes().size(), 1u);
  EXPECT_EQ(s.causes()[0].message, "overloaded");
  EXPECT_EQ(server.requests().size(), 3u);
}

TEST(RestRetryTest, TooManyRequestsWaitsForRetryAfterForEveryVerb) {
  std::atomic<int> throttled{1};
  ScriptedServer server([&](apiserver::Request&, apiserver::Responder& resp) {
    if (throttled.fetch_sub(1) > 0) {
      return resp.Respond(429, {{"Content-Type", "application/json"}, {"Retry-After", "7"}},
                          StatusJson(429, "TooManyRequests", "slow down"));
    }
    resp.Respond(201, kJson, kConfigMapJson);
  });
  FakeClock clock;
  RestOptions opts = Fast();
  opts.clock = &clock;
  opts.timeout = Duration::zero();
  auto client = NewRestClient(server.Config(), opts);
  ASSERT_TRUE(client.ok());
  auto created = std::async(std::launch::async, [&] {
    return (*client)->Create(kConfigMaps, "default", BareConfigMap("cfg"));
  });
  int advanced = 0;
  while (advanced < 100 && created.wait_for(milliseconds(20)) != std::future_status::ready) {
    clock.Advance(std::chrono::seconds(1));
    ++advanced;
  }
  auto result = created.get();
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_GE(advanced, 7);  // seconds of the fake clock that passed before the retry
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST(RestPoolTest, KeepAliveConnectionsAreReused) {
  ScriptedServer server([&](apiserver::Request&, apiserver::Responder& resp) {
    resp.Respond(200, kJson, kConfigMapJson);
  });
  auto client = NewRestClient(server.Config(), Fast()).value();
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(client->Get(kConfigMaps, "default", "cfg").ok());
  EXPECT_EQ(server.connections(), 1u);

  std::vector<std::thread> threads;
  std::atomic<int> failed{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        if (!client->Get(kConfigMaps, "default", "cfg").ok()) ++failed;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failed, 0);
  EXPECT_LE(server.connections(), 4u);  // never more than the requests in flight
  EXPECT_EQ(server.requests().size(), 120u);
}

TEST(RestPoolTest, ConnectionsTheServerClosedAreNotReused) {
  TestCluster cluster;
  RestOptions opts = Fast();
  opts.max_retries = 0;  // a write on a dead connection would fail, not be retried
  auto client = cluster.Rest(cluster.AdminConfig(), opts);
  ASSERT_TRUE(client->Create(kConfigMaps, "default", BareConfigMap("before")).ok());
  cluster.Restart();  // closes the pooled connection
  auto created = client->Create(kConfigMaps, "default", BareConfigMap("after"));
  EXPECT_TRUE(created.ok()) << created.status().ToString();
}

TEST(RestPoolTest, IdleConnectionsCloseWhenTheirTimeoutPassesWithNoOtherRequest) {
  ScriptedServer server([&](apiserver::Request&, apiserver::Responder& resp) {
    resp.Respond(200, kJson, kConfigMapJson);
  });
  FakeClock clock;
  ConnectionPool pool(MakeTlsContext(server.Config()).value(),
                      ParseEndpoint(server.Config()).value(), 4, std::chrono::seconds(90), clock);
  auto open = [&] {
    bool verify_failed = false;
    auto conn = pool.Acquire(std::nullopt, &verify_failed);
    EXPECT_TRUE(conn.ok()) << conn.status().ToString();
    return std::move(*conn);
  };
  // The pool's timer runs on the fake clock's timer thread: poll for what
  // it does (bounded; a failing test, not a timing assertion).
  using runtime::testing::Eventually;
  auto a = open(), b = open(), c = open();
  Connection* last = c.get();
  pool.Release(std::move(a));
  pool.Release(std::move(b));
  clock.Advance(std::chrono::seconds(60));
  pool.Release(std::move(c));
  EXPECT_EQ(pool.idle_count(), 3u);
  clock.Advance(std::chrono::seconds(31));  // a and b have idled 91 s, c 31 s
  Eventually([&] { return pool.idle_count() == 1; });
  EXPECT_EQ(pool.idle_count(), 1u);
  EXPECT_EQ(open().get(), last);  // the one given back last is taken again
  EXPECT_EQ(pool.idle_count(), 0u);

  // A connection given back to the emptied pool is timed again, from its
  // latest release.
  pool.Release(open());
  EXPECT_EQ(pool.idle_count(), 1u);
  clock.Advance(std::chrono::seconds(89));
  pool.Release(open());  // takes that one and gives it back: idle from now
  TimePoint expires = clock.Now() + std::chrono::seconds(90);
  clock.Advance(std::chrono::seconds(2));  // past the first release's expiry
  Eventually([&] { return clock.timers().next_deadline() == expires; });
  EXPECT_EQ(clock.timers().next_deadline(), expires);  // the timer ran and re-armed
  EXPECT_EQ(pool.idle_count(), 1u);
  clock.Advance(std::chrono::seconds(88));
  Eventually([&] { return pool.idle_count() == 0; });
  EXPECT_EQ(pool.idle_count(), 0u);
}

// Session tickets the client has read (OpenSSL's callback takes no state).
std::atomic<int> tickets_read{0};

// A TLS 1.3 server sends its session tickets after the handshake, so they
// reach an idle connection that never carried a request. The idle check
// reads them and the connection stays usable; the TLS state it leaves
// serves a request afterwards.
TEST(RestPoolTest, SessionTicketsAfterTheHandshakeLeaveAnIdleConnectionUsable) {
  tickets_read = 0;  // so that a repeated run reads its own
  ScriptedServer server([&](apiserver::Request&, apiserver::Responder& resp) {
    resp.Respond(200, kJson, kConfigMapJson);
  });
  FakeClock clock;
  std::shared_ptr<boost::asio::ssl::context> tls = MakeTlsContext(server.Config()).value();
  SSL_CTX* ctx = tls->native_handle();
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  // The client counts the tickets it has read.
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx, [](SSL*, SSL_SESSION*) {
    ++tickets_read;
    return 0;  // not kept
  });
  Endpoint ep = ParseEndpoint(server.Config()).value();
  Connection conn(*tls, clock);
  bool verify_failed = false;
  ASSERT_TRUE(conn.Open(ep, std::nullopt, &verify_failed).ok());
  // Checked until the tickets have arrived and the check has read them.
  for (int i = 0; tickets_read == 0; ++i) {
    ASSERT_FALSE(conn.Unusable()) << "check " << i;
    ASSERT_LT(i, 20'000) << "no session ticket was read";
    std::this_thread::sleep_for(milliseconds(1));
  }
  EXPECT_FALSE(conn.Unusable());

  http::request<http::string_body> req{http::verb::get, "/api/v1/namespaces/default/configmaps/a",
                                       11};
  req.set(http::field::host, ep.host_header);
  ASSERT_TRUE(conn.Write(req, std::nullopt).ok());
  http::response_parser<http::string_body> parser;
  Status read = conn.Read(parser, std::nullopt);
  ASSERT_TRUE(read.ok()) << read.ToString();
  EXPECT_EQ(parser.get().result_int(), 200u);
  EXPECT_EQ(parser.get().body(), kConfigMapJson);
}

TEST(RestRequestTest, PathPrefixQueryEncodingAndHeaders) {
  ScriptedServer server([&](apiserver::Request&, apiserver::Responder& resp) {
    resp.Respond(200, kJson,
                 R"({"kind":"ConfigMapList","metadata":{"resourceVersion":"5"},"items":[]})");
  });
  RestConfig config = server.Config();
  config.server += "/prefix/";
  config.token = "secret-token";
  ListOptions opts;
  opts.label_selector = "app in (a,b),tier!=x";
  auto list = NewRestClient(config, Fast()).value()->List(kConfigMaps, "default", opts);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(list->resource_version, "5");
  ASSERT_EQ(server.requests().size(), 1u);
  apiserver::Request req = server.requests()[0];
  EXPECT_EQ(req.path, "/prefix/api/v1/namespaces/default/configmaps");
  EXPECT_EQ(req.Query("labelSelector"), "app in (a,b),tier!=x");
  EXPECT_EQ(req.Header("authorization"), "Bearer secret-token");
  EXPECT_EQ(req.Header("accept"), "application/json");
  EXPECT_EQ(req.Header("user-agent"), "flotilla");
}

TEST(RestRequestTest, TimeoutsAreNotRetried) {
  Mutex mu;
  CondVar cv;
  bool release = false;
  ScriptedServer server([&](apiserver::Request&, apiserver::Responder& resp) {
    MutexLock lock(mu);
    cv.WaitFor(lock, std::chrono::seconds(20), [&]() REQUIRES(mu) { return release; });
    resp.Respond(200, kJson, kConfigMapJson);
  });
  RestOptions opts = Fast();
  opts.timeout = milliseconds(200);
  Status s = NewRestClient(server.Config(), opts).value()->Get(kConfigMaps, "d", "c").status();
  EXPECT_TRUE(s.Is(Reason::kTimeout)) << s.ToString();
  EXPECT_EQ(server.requests().size(), 1u);
  {
    MutexLock lock(mu);
    release = true;
  }
  cv.NotifyAll();
}

// A list that says how long it may last (timeoutSeconds, as an informer's
// do) is waited for that long, past the transport's own timeout, over
// HTTP/2 and HTTP/1.1; a watch's timeoutSeconds does not lengthen its head's.
TEST(RestRequestTest, AListWaitsForItsTimeoutSecondsPastTheTransportsTimeout) {
  for (bool h2 : {true, false}) {
    SCOPED_TRACE(h2 ? "HTTP/2" : "HTTP/1.1");
    ScriptedServer server([&](apiserver::Request& req, apiserver::Responder& resp) {
      // Longer than the client's own timeout of 100 ms.
      std::this_thread::sleep_for(milliseconds(600));
      resp.Respond(200, kJson,
                   R"({"kind":"ConfigMapList","metadata":{"resourceVersion":"5"},"items":[]})");
    });
    RestOptions opts = Fast();
    opts.timeout = milliseconds(100);
    opts.http2 = h2;
    auto client = NewRestClient(server.Config(), opts).value();
    ListOptions patient;
    patient.timeout_seconds = 60;
    auto listed = client->List(kConfigMaps, "d", patient);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    ASSERT_FALSE(server.requests().empty());
    EXPECT_TRUE(Contains(server.requests().back().target, "timeoutSeconds=60"))
        << server.requests().back().target;
    Status hurried = client->List(kConfigMaps, "d", {}).status();
    EXPECT_TRUE(hurried.Is(Reason::kTimeout)) << hurried.ToString();
  }
}

TEST(RestRequestTest, ConnectionRefused) {
  RestConfig config;
  {
    ScriptedServer server([](apiserver::Request&, apiserver::Responder&) {});
    config = server.Config();
  }
  RestOptions opts = Fast();
  opts.max_retries = 2;
  Status s =
      NewRestClient(config, opts).value()->Create(kConfigMaps, "d", BareConfigMap("c")).status();
  EXPECT_TRUE(s.Is(Reason::kServiceUnavailable)) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), "dial tcp 127.0.0.1:")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "refused")) << s.message();
}

TEST(RestWatchTest, ChunksSplitMidEventAndStopClosesTheSocket) {
  std::atomic<bool> gone{false};
  ScriptedServer server([&](apiserver::Request&, apiserver::Responder& resp) {
    std::string stream =
        R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"5"}}})"
        "\n"
        R"({"type":"MODIFIED","object":{"metadata":{"name":"a","resourceVersion":"6"}}})"
        "\n"
        R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})"
        "\n";
    resp.StartStream(200, kJson);
    for (size_t i = 0; i < stream.size(); i += 13) resp.WriteChunk(stream.substr(i, 13));
    for (int i = 0; i < 200 && !gone; ++i) gone = resp.WaitClientGone(100);
  });
  auto client = NewRestClient(server.Config(), Fast()).value();
  WatchRecorder rec;
  auto watch = client->StartWatch(kConfigMaps, "default", {}, rec.OnEvent(), rec.OnDone());
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  ASSERT_TRUE(rec.WaitEvents(3));
  EXPECT_EQ(rec.events()[1].type, WatchEvent::Type::kModified);
  EXPECT_EQ(rec.events()[2].type, WatchEvent::Type::kBookmark);
  EXPECT_EQ((*watch)->LastResourceVersion(), "9");
  (*watch)->Stop();
  ASSERT_EQ(rec.done().size(), 1u);
  EXPECT_TRUE(rec.done()[0].ok());
  for (int i = 0; i < 200 && !gone; ++i) std::this_thread::sleep_for(milliseconds(10));
  EXPECT_TRUE(gone);
  EXPECT_EQ(server.requests()[0].Query("watch"), "true");
}

// What a proxy needs of a streamed request: its own headers (one replacing
// the transport's Accept, one name sent twice), a path that carries its
// query already encoded, and the response's headers before its head.
TEST(RestWatchTest, StreamsSendExtraHeadersAndReportTheResponses) {
  ScriptedServer server([&](apiserver::Request&, apiserver::Responder& resp) {
    resp.Respond(200, {{"Content-Type", "text/plain"}, {"Warning", "299 - \"careful\""}},
                 "line 1\nline 2\n");
  });
  struct Sink : AsyncStreamSink {
    Mutex mu;
    CondVar done_cv;
    std::vector<std::pair<std::string, std::string>> headers;
    int code = 0;
    std::string body;
    bool done = false;
    void OnHeaders(std::vector<std::pair<std::string, std::string>> h) override {
      MutexLock lock(mu);
      headers = std::move(h);
    }
    void OnHead(int c, std::string) override {
      MutexLock lock(mu);
      code = c;
    }
    bool OnData(std::string_view data) override {
      MutexLock lock(mu);
      body.append(data);
      return true;
    }
    void OnEnd(Status) override {
      MutexLock lock(mu);
      done = true;
      done_cv.NotifyAll();
    }
  };
  auto sink = std::make_shared<Sink>();
  auto transport = NewRestTransport(server.Config(), Fast()).value();
  ApiRequest req{.method = "GET", .path = "/api/v1/pods?labelSelector=a%3Db&limit=5"};
  req.headers = {
      {"Accept", "text/plain"}, {"Impersonate-Group", "g1"}, {"Impersonate-Group", "g2"}};
  auto call = transport->StartStream(req, sink);
  {
    MutexLock lock(sink->mu);
    ASSERT_TRUE(sink->done_cv.WaitFor(lock, std::chrono::seconds(20), [&] { return sink->done; }));
    EXPECT_EQ(sink->code, 200);
    EXPECT_EQ(sink->body, "line 1\nline 2\n");
    // Names as the protocol spells them: HTTP/2's are lower-case.
    std::map<std::string, std::string> got;
    for (auto [name, value] : sink->headers) {
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      got[name] = value;
    }
    EXPECT_EQ(got["content-type"], "text/plain");
    EXPECT_EQ(got["warning"], "299 - \"careful\"");
  }
  ASSERT_EQ(server.requests().size(), 1u);
  apiserver::Request seen = server.requests()[0];  // requests() is a copy
  EXPECT_EQ(seen.path, "/api/v1/pods");
  EXPECT_EQ(seen.Query("labelSelector"), "a=b");
  EXPECT_EQ(seen.Query("limit"), "5");
  EXPECT_EQ(seen.Header("accept"), "text/plain");        // replaced, not added
  EXPECT_EQ(seen.Header("impersonate-group"), "g1,g2");  // sent twice
}

}  // namespace
}  // namespace flotilla::client
