// The API server and the REST client under many open watches: the server
// stays responsive, a watcher that does not read is cut off without holding
// up the others, and clients survive a server that stops under them. Every
// wait is for a condition; the bounds only end a failing test.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "base/mutex.h"
#include "client/client_test_util.h"
#include "runtime/informer.h"

namespace flotilla::client {
namespace {

using testing::TestCluster;

const ResourceRef kConfigMaps{"", "v1", "configmaps", true};
constexpr auto kBound = std::chrono::minutes(5);

// No client-side rate limit, and no deadline on a request: the tests wait
// for completion, however loaded the machine.
RestOptions Unlimited() {
  RestOptions opts;
  opts.qps = 0;
  opts.timeout = Duration::zero();
  return opts;
}

// Under ASan every event costs the 2,000 client threads and the server
// several times more; the test keeps its shape with fewer watches there.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kManyWatches = 400;
#else
constexpr int kManyWatches = 2000;
#endif

json::object ConfigMap(const std::string& name, size_t data_bytes = 0) {
  json::object cm{{"apiVersion", "v1"},
                  {"kind", "ConfigMap"},
                  {"metadata", {{"name", name}, {"namespace", "default"}}}};
  if (data_bytes > 0) cm["data"] = json::object{{"blob", std::string(data_bytes, 'x')}};
  return cm;
}

// Counts events and ends over many watches, for a test to await totals.
class Tally {
 public:
  WatchCallback OnEvent(std::atomic<int>* mine) {
    return [this, mine](const WatchEvent& e) {
      if (e.type != WatchEvent::Type::kAdded) return;
      mine->fetch_add(1);
      MutexLock lock(mu_);
      ++events_;
      cv_.NotifyAll();
    };
  }
  WatchDone OnDone() {
    return [this](const Status&) {
      MutexLock lock(mu_);
      ++done_;
      cv_.NotifyAll();
    };
  }
  bool WaitEvents(size_t n) {
    MutexLock lock(mu_);
    return cv_.WaitFor(lock, kBound, [&]() REQUIRES(mu_) { return events_ >= n; });
  }
  bool WaitDone(size_t n) {
    MutexLock lock(mu_);
    return cv_.WaitFor(lock, kBound, [&]() REQUIRES(mu_) { return done_ >= n; });
  }

 private:
  Mutex mu_;
  CondVar cv_;
  size_t events_ GUARDED_BY(mu_) = 0;
  size_t done_ GUARDED_BY(mu_) = 0;
};

TEST(ScaleTest, ServerStaysResponsiveWith2000WatchesAnd100Writers) {
  constexpr int kWatches = kManyWatches;
  constexpr int kWriters = 100;
  constexpr int kPerWriter = 2;
  TestCluster cluster;
  auto watching = cluster.Rest(cluster.AdminConfig(), Unlimited());
  auto list = watching->List(kConfigMaps, "default", {});
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  Tally tally;
  std::vector<std::atomic<int>> seen(kWatches);
  std::vector<std::unique_ptr<Watch>> watches;
  for (int i = 0; i < kWatches; ++i) {
    WatchOptions opts{.resource_version = list->resource_version};
    auto w =
        watching->StartWatch(kConfigMaps, "default", opts, tally.OnEvent(&seen[i]), tally.OnDone());
    ASSERT_TRUE(w.ok()) << i << ": " << w.status().ToString();
    watches.push_back(std::move(*w));
  }

  // 100 writers, each on its own connection, while the watches are open.
  std::atomic<int> failed_writes = 0;
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      auto client = cluster.Rest(cluster.AdminConfig(), Unlimited());
      for (int i = 0; i < kPerWriter; ++i) {
        auto created = client->Create(kConfigMaps, "default",
                                      ConfigMap("w" + std::to_string(w) + "-" + std::to_string(i)));
        if (!created.ok()) ++failed_writes;
      }
    });
  }
  // A read through a connection of its own answers while all that goes on.
  auto reader = cluster.Rest(cluster.AdminConfig(), Unlimited());
  auto ns = reader->Get({"", "v1", "namespaces", false}, "", "default");
  EXPECT_TRUE(ns.ok()) << ns.status().ToString();
  for (auto& t : writers) t.join();
  EXPECT_EQ(failed_writes, 0);

  // Every watch sees every write.
  ASSERT_TRUE(tally.WaitEvents(size_t{kWatches} * kWriters * kPerWriter));
  for (int i = 0; i < kWatches; ++i) EXPECT_EQ(seen[i], kWriters * kPerWriter) << "watch " << i;
  auto again = reader->Get({"", "v1", "namespaces", false}, "", "default");
  EXPECT_TRUE(again.ok()) << again.status().ToString();
  watches.clear();
  EXPECT_TRUE(tally.WaitDone(kWatches));
}

// A TLS client on a blocking socket with a small receive buffer, for a
// watcher that stops reading.
class RawTlsClient {
 public:
  explicit RawTlsClient(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int small = 4096;
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    timeval tv{30, 0};  // a failing test ends instead of hanging
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_NONE, nullptr);
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    connected_ = connected_ && SSL_connect(ssl_) == 1;
  }
  ~RawTlsClient() {
    SSL_free(ssl_);
    SSL_CTX_free(ctx_);
    ::close(fd_);
  }
  bool connected() const { return connected_; }
  bool Send(const std::string& data) {
    return SSL_write(ssl_, data.data(), static_cast<int>(data.size())) ==
           static_cast<int>(data.size());
  }
  // Reads until `want` is in what was read, or the stream ends.
  std::string ReadUntil(const std::string& want) {
    while (got_.find(want) == std::string::npos && ReadSome()) {
    }
    return got_;
  }
  // Reads until the peer closes (or the read times out).
  std::string ReadAll() {
    while (ReadSome()) {
    }
    return got_;
  }

 private:
  bool ReadSome() {
    char buf[16384];
    int n = SSL_read(ssl_, buf, sizeof(buf));
    if (n <= 0) return false;
    got_.append(buf, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  std::string got_;
};

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

TEST(ScaleTest, SlowWatcherIsCutOffWithoutDelayingOthers) {
  constexpr int kObjects = 400;
  constexpr size_t kObjectBytes = 32 * 1024;  // 12.8 MB in all
  TestCluster cluster(
      {}, nullptr, [](apiserver::ServerOptions& opts) { opts.watch_buffer_bytes = 1024 * 1024; });
  auto client = cluster.Rest(cluster.AdminConfig(), Unlimited());
  auto list = client->List(kConfigMaps, "default", {});
  ASSERT_TRUE(list.ok());

  RawTlsClient slow(cluster.server().port());
  ASSERT_TRUE(slow.connected());
  ASSERT_TRUE(slow.Send("GET /api/v1/namespaces/default/configmaps?watch=true&resourceVersion=" +
                        list->resource_version +
                        " HTTP/1.1\r\nHost: localhost\r\nAuthorization: "
                        "Bearer " +
                        cluster.server().pki().admin_token + "\r\n\r\n"));
  ASSERT_NE(slow.ReadUntil("\r\n\r\n").find("HTTP/1.1 200"), std::string::npos);

  Tally tally;
  std::atomic<int> fast_seen = 0;
  auto fast =
      client->StartWatch(kConfigMaps, "default", {.resource_version = list->resource_version},
                         tally.OnEvent(&fast_seen), tally.OnDone());
  ASSERT_TRUE(fast.ok());
  for (int i = 0; i < kObjects; ++i) {
    ASSERT_TRUE(
        client->Create(kConfigMaps, "default", ConfigMap("big-" + std::to_string(i), kObjectBytes))
            .ok());
  }
  // The fast watcher has everything while the slow one still reads nothing.
  ASSERT_TRUE(tally.WaitEvents(kObjects));
  EXPECT_EQ(fast_seen, kObjects);

  // The slow one finds a clean end of its stream, short of the writes.
  std::string stream = slow.ReadAll();
  EXPECT_TRUE(stream.ends_with("\r\n0\r\n\r\n")) << stream.substr(stream.size() - 200);
  size_t delivered = Count(stream, R"({"type":"ADDED")");
  EXPECT_LT(delivered, size_t{kObjects});
  std::printf("the slow watcher got %zu of %d events before it was cut off\n", delivered, kObjects);
  (*fast)->Stop();
}

TEST(ScaleTest, ClientSurvivesTheServerStoppingMidStreamWithManyStreamsOpen) {
  constexpr int kWatches = 200;
  TestCluster cluster;
  auto client = cluster.Rest(cluster.AdminConfig(), Unlimited());
  Tally tally;
  std::vector<std::atomic<int>> seen(kWatches);
  std::vector<std::unique_ptr<Watch>> watches;
  for (int i = 0; i < kWatches; ++i) {
    auto w =
        client->StartWatch(kConfigMaps, "default", {}, tally.OnEvent(&seen[i]), tally.OnDone());
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    watches.push_back(std::move(*w));
  }
  ASSERT_TRUE(client->Create(kConfigMaps, "default", ConfigMap("before")).ok());
  ASSERT_TRUE(tally.WaitEvents(kWatches));

  // Every stream ends when the server goes, and the same client carries on
  // with the server that comes back on the same port.
  cluster.Restart();
  ASSERT_TRUE(tally.WaitDone(kWatches));
  auto created = client->Create(kConfigMaps, "default", ConfigMap("after"));
  EXPECT_TRUE(created.ok()) << created.status().ToString();
  auto w = client->StartWatch(kConfigMaps, "default", {}, tally.OnEvent(&seen[0]), tally.OnDone());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_TRUE(tally.WaitEvents(kWatches + 1));  // "after", listed first
  (*w)->Stop();
}

// The process's thread count, from /proc.
int Threads() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("Threads:")) return std::stoi(line.substr(8));
  }
  return -1;
}

// An informer per watch used to cost two threads (its own and its watch's);
// now neither holds one: the count of threads stays far below the count of
// informers, over HTTPS and in process alike.
TEST(ScaleTest, InformersShareThreadsInsteadOfHoldingOne) {
  constexpr int kEach = 500;
  TestCluster cluster;
  auto rest = cluster.Rest(cluster.AdminConfig(), Unlimited());
  auto in_process = cluster.InProcess();
  ASSERT_TRUE(rest->Create(kConfigMaps, "default", ConfigMap("before")).ok());
  const int threads_before = Threads();

  Mutex mu;
  CondVar cv;
  int adds = 0;
  runtime::EventHandler count{.on_add = [&](const runtime::ObjectPtr&) {
    MutexLock lock(mu);
    ++adds;
    cv.NotifyAll();
  }};
  auto wait_adds = [&](int n) {
    MutexLock lock(mu);
    return cv.WaitFor(lock, kBound, [&]() REQUIRES(mu) { return adds >= n; });
  };
  std::vector<std::unique_ptr<runtime::Informer>> informers;
  for (int i = 0; i < 2 * kEach; ++i) {
    Client& client = i < kEach ? *rest : *in_process;
    informers.push_back(std::make_unique<runtime::Informer>(client, kConfigMaps, RealClock()));
    informers.back()->AddEventHandler(count);
    informers.back()->Start();
  }
  for (auto& informer : informers) ASSERT_TRUE(informer->WaitForSync());
  ASSERT_TRUE(wait_adds(2 * kEach));  // "before", listed
  ASSERT_TRUE(rest->Create(kConfigMaps, "default", ConfigMap("after")).ok());
  ASSERT_TRUE(wait_adds(2 * 2 * kEach));  // "after", watched
  for (auto& informer : informers) EXPECT_NE(informer->cache().Get("default/after"), nullptr);
  const int threads_open = Threads();
  std::printf("%d informers with their watches open: %d threads, %d before\n", 2 * kEach,
              threads_open, threads_before);
  // The pools may have grown for the lists (up to 256 threads each for the
  // informers and for the server's handlers, until they idle), and the
  // shared loop started: fewer threads than informers, where each used to
  // hold two.
  EXPECT_LT(threads_open - threads_before, 2 * kEach);
  informers.clear();
}

}  // namespace
}  // namespace flotilla::client
