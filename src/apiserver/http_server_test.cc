// The HTTPS server's connection handling, driven by a TLS client whose
// bytes the test controls (memory BIOs), so records can be coalesced or
// withheld as a slow or unlucky network would.
#include "apiserver/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <string>
#include <thread>

#include "apiserver/pki.h"
#include "base/timer.h"

namespace flotilla::apiserver {
namespace {

constexpr int kWaitMillis = 30000;  // a failing test ends instead of hanging

int ConnectTcp(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Returns bytes read, 0 at EOF, -1 on error or when nothing came in time.
ssize_t RecvWithin(int fd, char* buf, size_t len, int millis) {
  pollfd pfd{fd, POLLIN, 0};
  if (::poll(&pfd, 1, millis) <= 0) return -1;
  return ::recv(fd, buf, len, 0);
}

// Bytes the server sends before EOF on `fd` (-1: no EOF in time).
ssize_t BytesUntilEof(int fd) {
  char buf[4096];
  ssize_t total = 0;
  while (true) {
    ssize_t n = RecvWithin(fd, buf, sizeof(buf), kWaitMillis);
    if (n <= 0) return n == 0 ? total : -1;
    total += n;
  }
}

// A TLS client over a plain socket. Outgoing records collect in a memory
// BIO until Flush, so the test decides how they are split into writes.
class TlsClient {
 public:
  explicit TlsClient(int port) : fd_(ConnectTcp(port)) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_NONE, nullptr);
    ssl_ = SSL_new(ctx_);
    in_ = BIO_new(BIO_s_mem());
    out_ = BIO_new(BIO_s_mem());
    SSL_set_bio(ssl_, in_, out_);
    SSL_set_connect_state(ssl_);
  }
  ~TlsClient() {
    SSL_free(ssl_);
    SSL_CTX_free(ctx_);
    if (fd_ >= 0) ::close(fd_);
  }

  int fd() const { return fd_; }

  // Runs the handshake but keeps the client's last flight (Finished) in
  // the outgoing buffer: it leaves with the next Flush.
  bool HandshakeHoldingLastFlight() {
    while (true) {
      int rc = SSL_do_handshake(ssl_);
      if (rc == 1) return true;
      if (SSL_get_error(ssl_, rc) != SSL_ERROR_WANT_READ) return false;
      if (!Flush() || !ReadSome()) return false;
    }
  }

  bool Write(const std::string& data) {
    return SSL_write(ssl_, data.data(), static_cast<int>(data.size())) ==
           static_cast<int>(data.size());
  }

  // Queues a close_notify alert; Flush sends it.
  void CloseNotify() { SSL_shutdown(ssl_); }

  // Sends everything buffered in a single send(2).
  bool Flush() {
    char* data = nullptr;
    long n = BIO_get_mem_data(out_, &data);
    if (n <= 0) return true;
    bool ok = ::send(fd_, data, static_cast<size_t>(n), MSG_NOSIGNAL) == n;
    (void)BIO_reset(out_);
    return ok;
  }

  // Reads decrypted bytes until `want` occurs in them (or EOF, error, timeout).
  std::string ReadUntil(const std::string& want) {
    return ReadWhile([&](const std::string& got) { return got.find(want) == std::string::npos; });
  }

  // Reads decrypted bytes until `size` have come (or EOF, error, timeout).
  std::string ReadBytes(size_t size) {
    return ReadWhile([&](const std::string& got) { return got.size() < size; });
  }

 private:
  // Reads decrypted bytes while `more` says so of what came (or to EOF,
  // an error or a timeout).
  template <typename More>
  std::string ReadWhile(More more) {
    std::string got;
    while (more(got)) {
      char buf[16384];
      int n = SSL_read(ssl_, buf, sizeof(buf));
      if (n > 0) {
        got.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (SSL_get_error(ssl_, n) != SSL_ERROR_WANT_READ) break;
      if (!Flush() || !ReadSome()) break;
    }
    return got;
  }

  bool ReadSome() {
    char buf[16384];
    ssize_t n = RecvWithin(fd_, buf, sizeof(buf), kWaitMillis);
    if (n <= 0) return false;
    BIO_write(in_, buf, static_cast<int>(n));
    return true;
  }

  int fd_;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;
  BIO* out_ = nullptr;
};

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("flotilla-http-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    auto pki = EnsurePki({.dir = dir_.string()});
    ASSERT_TRUE(pki.ok()) << pki.status().ToString();
    opts_.cert_path = pki->serving_cert_path;
    opts_.key_path = pki->serving_key_path;
  }
  void TearDown() override {
    if (server_) server_->Stop();
    std::filesystem::remove_all(dir_);
  }

  void StartServer() {
    StartServerWith([](Request& req, Responder& res) {
      res.Respond(200, {{"Content-Type", "text/plain"}}, "path=" + req.path);
    });
  }
  void StartServerWith(Handler handler) {
    auto server = HttpServer::Start(opts_, std::move(handler));
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
  }
  void ExpectAnswersWholeWhateverTheSocketTakes();

  std::filesystem::path dir_;
  HttpServerOptions opts_;
  std::unique_ptr<HttpServer> server_;
};

std::string Get(const std::string& path) {
  return "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
}

// Runs the handshake and sends a GET of `path`; the client's last flight
// and the request leave in one send(2).
bool SendGet(TlsClient& client, const std::string& path) {
  return client.HandshakeHoldingLastFlight() && client.Write(Get(path)) && client.Flush();
}

// SendGet, then reads until the handler's reply to `path` has come.
bool Served(TlsClient& client, const std::string& path) {
  return SendGet(client, path) &&
         client.ReadUntil("path=" + path).find("path=" + path) != std::string::npos;
}

// The client's Finished and its first request arrive in one segment, so the
// request's bytes sit in the server's TLS buffers, not in the socket, when
// the handshake ends. They must be served at once, not after a timeout.
TEST_F(HttpServerTest, RequestArrivingWithTheHandshakeIsServed) {
  opts_.idle_timeout_sec = 120;
  StartServer();
  TlsClient client(server_->port());
  ASSERT_GE(client.fd(), 0);
  ASSERT_TRUE(SendGet(client, "/first"));
  std::string reply = client.ReadUntil("path=/first");
  EXPECT_NE(reply.find("HTTP/1.1 200"), std::string::npos) << reply;
  EXPECT_NE(reply.find("path=/first"), std::string::npos) << reply;
}

// Without a serving certificate: plain HTTP, keep-alive and all.
TEST_F(HttpServerTest, PlainHttpWithoutACertificate) {
  opts_.cert_path.clear();
  opts_.key_path.clear();
  StartServer();
  int fd = ConnectTcp(server_->port());
  ASSERT_GE(fd, 0);
  std::string reply;
  for (const char* path : {"/one", "/two"}) {
    std::string req = Get(path);
    ASSERT_EQ(::send(fd, req.data(), req.size(), 0), static_cast<ssize_t>(req.size()));
    char buf[4096];
    while (reply.find(std::string("path=") + path) == std::string::npos) {
      ssize_t n = RecvWithin(fd, buf, sizeof buf, kWaitMillis);
      ASSERT_GT(n, 0) << reply;
      reply.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  EXPECT_EQ(reply.find("HTTP/1.1 200"), 0u) << reply;
  EXPECT_NE(reply.find("path=/one"), std::string::npos);
}

// Two pipelined requests in one record: both are answered, in order.
TEST_F(HttpServerTest, PipelinedRequestsAreAnsweredInOrder) {
  opts_.idle_timeout_sec = 120;
  StartServer();
  TlsClient client(server_->port());
  ASSERT_TRUE(client.HandshakeHoldingLastFlight());
  ASSERT_TRUE(client.Write(Get("/a") + Get("/b")));
  ASSERT_TRUE(client.Flush());
  std::string reply = client.ReadUntil("path=/b");
  size_t a = reply.find("path=/a");
  size_t b = reply.find("path=/b");
  ASSERT_NE(a, std::string::npos) << reply;
  ASSERT_NE(b, std::string::npos) << reply;
  EXPECT_LT(a, b);
}

// A peer that connects and never starts the handshake is disconnected.
TEST_F(HttpServerTest, SilentPeerIsDisconnected) {
  opts_.handshake_timeout_sec = 1;
  StartServer();
  int fd = ConnectTcp(server_->port());
  ASSERT_GE(fd, 0);
  char buf[64];
  EXPECT_EQ(RecvWithin(fd, buf, sizeof(buf), kWaitMillis), 0) << "expected EOF";
  ::close(fd);
}

// A connection that sends no request after the handshake is closed once
// the idle timeout passes; one that sent a request was served first.
TEST_F(HttpServerTest, IdleConnectionIsClosed) {
  opts_.idle_timeout_sec = 1;
  StartServer();
  TlsClient client(server_->port());
  EXPECT_TRUE(Served(client, "/once"));
  // Nothing more is sent: the server ends the connection (a close_notify
  // alert and then EOF on the socket).
  EXPECT_GE(BytesUntilEof(client.fd()), 0) << "expected EOF";
}

// A peer that closes its end without a close_notify (as a client closing
// an idle pooled connection does) is gone: the server closes the socket
// without writing a TLS alert nobody reads. A peer that ends TLS properly
// gets a close_notify back.
TEST_F(HttpServerTest, ClosingWithoutCloseNotifyGetsNoAlertBack) {
  opts_.idle_timeout_sec = 120;
  StartServer();
  TlsClient dropped(server_->port());
  ASSERT_TRUE(Served(dropped, "/dropped"));
  ASSERT_EQ(::shutdown(dropped.fd(), SHUT_WR), 0);
  EXPECT_EQ(BytesUntilEof(dropped.fd()), 0);

  TlsClient polite(server_->port());
  ASSERT_TRUE(Served(polite, "/polite"));
  polite.CloseNotify();
  ASSERT_TRUE(polite.Flush());
  EXPECT_GT(BytesUntilEof(polite.fd()), 0);  // the server's close_notify
}

// Stop returns while connections are open and idle.
TEST_F(HttpServerTest, StopClosesOpenConnections) {
  StartServer();
  TlsClient client(server_->port());
  ASSERT_TRUE(client.HandshakeHoldingLastFlight());
  ASSERT_TRUE(client.Flush());
  server_->Stop();
  EXPECT_GE(BytesUntilEof(client.fd()), 0) << "expected EOF";
}

// A stream's peer that stops reading while chunks are queued is
// disconnected once a write has made no progress for send_timeout_sec, and
// the stream ends (its queue is well under the stream buffer's limit).
TEST_F(HttpServerTest, StreamToAPeerThatStopsReadingEndsAtTheSendDeadline) {
  constexpr size_t kChunk = 64 * 1024;
  constexpr int kChunks = 384;  // 24 MiB: more than the sockets' buffers hold
  opts_.send_timeout_sec = 1;
  opts_.max_stream_buffer_bytes = 64 * 1024 * 1024;
  std::promise<void> ended;
  StartServerWith([&](Request&, Responder& res) {
    auto stream = res.StartAsyncStream(200, {{"Content-Type", "text/plain"}});
    ASSERT_TRUE(stream);
    stream->OnEnd([&] { ended.set_value(); });
    for (int i = 0; i < kChunks; ++i) ASSERT_TRUE(stream->Write(std::string(kChunk, 'x')));
  });
  TlsClient client(server_->port());
  ASSERT_TRUE(SendGet(client, "/stream"));
  ASSERT_NE(client.ReadUntil("\r\n\r\n").find("HTTP/1.1 200"), std::string::npos);
  // The client reads nothing more.
  EXPECT_EQ(ended.get_future().wait_for(std::chrono::milliseconds(kWaitMillis)),
            std::future_status::ready);
}

// A stream that goes on for longer than the send deadline, to a peer that
// reads, is not cut: the deadline is per write, not per stream.
TEST_F(HttpServerTest, StreamLongerThanTheSendDeadlineIsNotCut) {
  constexpr int kTicks = 15;  // 100 ms apart: 1.5 s in all
  opts_.send_timeout_sec = 1;
  struct Pacer {
    std::shared_ptr<ChunkStream> stream;
    int left = kTicks;
    Timer timer{RealClock(), [this] { Next(); }};
    void Next() {
      if (left-- == 0) return stream->End();
      stream->Write("tick\n");
      timer.ArmAfter(std::chrono::milliseconds(100));
    }
  };
  Pacer pacer;
  StartServerWith([&pacer](Request&, Responder& res) {
    pacer.stream = res.StartAsyncStream(200, {{"Content-Type", "text/plain"}});
    ASSERT_TRUE(pacer.stream);
    pacer.Next();
  });
  TlsClient client(server_->port());
  ASSERT_TRUE(SendGet(client, "/ticks"));
  std::string got = client.ReadUntil("\r\n0\r\n\r\n");
  ASSERT_TRUE(got.ends_with("\r\n0\r\n\r\n")) << got;
  size_t ticks = 0;
  for (size_t at = got.find("tick\n"); at != std::string::npos; at = got.find("tick\n", at + 1)) {
    ++ticks;
  }
  EXPECT_EQ(ticks, size_t{kTicks});
}

// Decodes a chunked body (after its header); false if it is malformed or
// not ended by the last chunk.
bool Dechunk(std::string_view body, std::string* out) {
  while (true) {
    size_t eol = body.find("\r\n");
    if (eol == std::string_view::npos) return false;
    size_t size = std::stoul(std::string(body.substr(0, eol)), nullptr, 16);
    body.remove_prefix(eol + 2);
    if (body.size() < size + 2 || body.substr(size, 2) != "\r\n") return false;
    if (size == 0) return body.size() == 2;
    out->append(body.substr(0, size));
    body.remove_prefix(size + 2);
  }
}

// Chunks of every size, from a byte to several TLS records, arrive whole
// and in order, whether the socket takes them at once or the peer reads
// late (the first chunks wait for the socket).
TEST_F(HttpServerTest, StreamChunksOfEverySizeArriveWholeAndInOrder) {
  std::string want;
  std::vector<std::string> chunks;
  for (size_t size : {1, 100, 16383, 16384, 16385, 40000, 70000, 200000, 3, 1000000, 5}) {
    std::string c(size, '\0');
    for (size_t i = 0; i < size; ++i) c[i] = static_cast<char>('a' + (i * 7 + chunks.size()) % 26);
    want += c;
    chunks.push_back(std::move(c));
  }
  StartServerWith([&](Request&, Responder& res) {
    auto stream = res.StartAsyncStream(200, {{"Content-Type", "text/plain"}});
    ASSERT_TRUE(stream);
    for (const std::string& c : chunks) ASSERT_TRUE(stream->Write(c));
    stream->End();
  });
  TlsClient client(server_->port());
  ASSERT_TRUE(SendGet(client, "/chunks"));
  std::string got = client.ReadUntil("\r\n0\r\n\r\n");
  size_t head_end = got.find("\r\n\r\n");
  ASSERT_NE(head_end, std::string::npos);
  std::string body;
  ASSERT_TRUE(Dechunk(std::string_view(got).substr(head_end + 4), &body));
  EXPECT_EQ(body.size(), want.size());
  EXPECT_TRUE(body == want);
}

// An answer written on the loop or on the pool goes out whole whether the
// socket takes it at once (a small one) or not (one far larger than the
// socket's buffers, to a client with a small receive buffer: the write
// waits for the socket and goes on with the rest), and the
// connection then serves the next request.
TEST_F(HttpServerTest, AnswersOnTheLoopArriveWholeWhateverTheSocketTakes) {
  opts_.runs_on_loop = [](const Request&) { return true; };
  ExpectAnswersWholeWhateverTheSocketTakes();
}

TEST_F(HttpServerTest, AnswersOnThePoolArriveWholeWhateverTheSocketTakes) {
  opts_.runs_on_loop = [](const Request&) { return false; };
  ExpectAnswersWholeWhateverTheSocketTakes();
}

void HttpServerTest::ExpectAnswersWholeWhateverTheSocketTakes() {
  std::string large(12 * 1024 * 1024, '\0');
  for (size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>('a' + (i * 7) % 26);
  StartServerWith([&](Request& req, Responder& res) {
    res.Respond(200, {{"Content-Type", "text/plain"}}, req.path == "/large" ? large : "small");
  });
  for (bool small_buffer : {false, true}) {
    SCOPED_TRACE(small_buffer ? "small receive buffer" : "default receive buffer");
    TlsClient client(server_->port());
    if (small_buffer) {
      int size = 64 * 1024;
      ASSERT_EQ(::setsockopt(client.fd(), SOL_SOCKET, SO_RCVBUF, &size, sizeof size), 0);
    }
    ASSERT_TRUE(client.HandshakeHoldingLastFlight());
    ASSERT_TRUE(client.Write(Get("/small") + Get("/large") + Get("/small")));
    ASSERT_TRUE(client.Flush());
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n";
    auto answer = [&](const std::string& body) {
      return head + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    };
    std::string want = answer("small") + answer(large) + answer("small");
    std::string got = client.ReadBytes(want.size());
    ASSERT_EQ(got.size(), want.size());
    EXPECT_TRUE(got == want) << got.substr(0, 200);
  }
}

// An answer's bytes, on the loop and on the pool, over TLS (written from
// the handler's parts) and over plain HTTP (Beast's serializer), alike:
// the status line with its reason, every header in order (repeated ones
// too: one Warning each), Connection: close when the client asked for it,
// and Content-Length, which Beast sends for every status.
TEST_F(HttpServerTest, AnswersCarryEveryHeaderInOrderAndTheirLength) {
  auto handler = [](Request& req, Responder& res) {
    if (req.path == "/none") return res.Respond(204, {{"Cache-Control", "no-cache"}}, "");
    res.Respond(201,
                {{"Content-Type", "text/plain"},
                 {"Warning", "299 - \"one\""},
                 {"Warning", "299 - \"two\""}},
                "made");
  };
  const std::string made =
      "HTTP/1.1 201 Created\r\nContent-Type: text/plain\r\nWarning: 299 - \"one\"\r\n"
      "Warning: 299 - \"two\"\r\nContent-Length: 4\r\n\r\nmade";
  const std::string none =
      "HTTP/1.1 204 No Content\r\nCache-Control: no-cache\r\nContent-Length: 0\r\n\r\n";
  const std::string made_closing =
      "HTTP/1.1 201 Created\r\nContent-Type: text/plain\r\nWarning: 299 - \"one\"\r\n"
      "Warning: 299 - \"two\"\r\nConnection: close\r\nContent-Length: 4\r\n\r\nmade";
  const std::string requests = Get("/made") + Get("/none") +
                               "GET /made HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
  const std::string want = made + none + made_closing;
  for (bool tls : {true, false}) {
    for (bool on_loop : {true, false}) {
      SCOPED_TRACE(std::string(tls ? "TLS" : "plain") +
                   (on_loop ? ", on the loop" : ", on the pool"));
      if (server_) server_->Stop();
      if (!tls) {
        opts_.cert_path.clear();
        opts_.key_path.clear();
      }
      opts_.runs_on_loop = [on_loop](const Request&) { return on_loop; };
      StartServerWith(handler);
      std::string got;
      if (tls) {
        TlsClient client(server_->port());
        ASSERT_TRUE(client.HandshakeHoldingLastFlight());
        ASSERT_TRUE(client.Write(requests));
        ASSERT_TRUE(client.Flush());
        got = client.ReadBytes(want.size());
      } else {
        int fd = ConnectTcp(server_->port());
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::send(fd, requests.data(), requests.size(), 0),
                  static_cast<ssize_t>(requests.size()));
        char buf[4096];
        while (got.size() < want.size()) {
          ssize_t n = RecvWithin(fd, buf, sizeof buf, kWaitMillis);
          if (n <= 0) break;
          got.append(buf, static_cast<size_t>(n));
        }
        ::close(fd);
      }
      EXPECT_EQ(got, want);
    }
  }
}

// What a handler sees of an HTTP/1.1 request: the method, the target split
// into its decoded path and query, header names in lower case with a
// repeated header's values joined by commas, the body whether it came with
// a length or chunked; a body over the limit gets a 413 and the connection
// ends; a request that asked for it closes the connection after its answer.
TEST_F(HttpServerTest, AHandlerSeesTheRequestAsSent) {
  opts_.cert_path.clear();
  opts_.key_path.clear();
  opts_.max_body_bytes = 64;
  StartServerWith([](Request& req, Responder& res) {
    std::string seen = req.method + " " + req.target + " path=" + req.path +
                       " q=" + req.Query("q") + " h=" + req.Header("x-two") +
                       " ua=" + req.Header("user-agent") + " body=" + req.body;
    res.Respond(200, {{"Content-Type", "text/plain"}}, seen);
  });
  // `done`: the client says it has sent everything (a server draining a
  // body it refused then stops at once, not at its timeout).
  auto exchange = [&](const std::string& requests, size_t answers, bool done = false) {
    int fd = ConnectTcp(server_->port());
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::send(fd, requests.data(), requests.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(requests.size()));
    if (done) ::shutdown(fd, SHUT_WR);
    std::string got;
    char buf[4096];
    // Reads to EOF, or until `answers` whole answers have come.
    auto complete = [&] {
      size_t n = 0, at = 0;
      while ((at = got.find("\r\n\r\n", at)) != std::string::npos) {
        size_t length = got.rfind("Content-Length: ", at);
        size_t size = std::stoul(got.substr(length + 16));
        if (got.size() < at + 4 + size) return false;
        at += 4 + size;
        ++n;
      }
      return n >= answers;
    };
    while (!complete()) {
      ssize_t n = RecvWithin(fd, buf, sizeof buf, kWaitMillis);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    bool closed = RecvWithin(fd, buf, sizeof buf, kWaitMillis) == 0;
    ::close(fd);
    return std::make_pair(got, closed);
  };

  auto [got, closed] = exchange(
      "POST /a%2Fb/c?q=v%20w&z=1 HTTP/1.1\r\nHost: x\r\nX-Two: one\r\nUSER-Agent: t/1\r\n"
      "x-two: two\r\nContent-Length: 5\r\n\r\nhello"
      "PUT /chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3\r\nabc\r\n4;ext=1\r\ndefg\r\n0\r\n\r\n"
      "GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      3);
  EXPECT_NE(got.find("POST /a%2Fb/c?q=v%20w&z=1 path=/a/b/c q=v w h=one,two ua=t/1 body=hello"),
            std::string::npos)
      << got;
  EXPECT_NE(got.find("PUT /chunked path=/chunked q= h= ua= body=abcdefg"), std::string::npos)
      << got;
  EXPECT_NE(got.find("GET /last path=/last"), std::string::npos) << got;
  EXPECT_TRUE(closed) << "the connection stays open after Connection: close";

  // HTTP/1.0 closes unless asked to keep the connection.
  std::tie(got, closed) = exchange("GET /old HTTP/1.0\r\n\r\n", 1);
  EXPECT_NE(got.find("GET /old path=/old"), std::string::npos) << got;
  EXPECT_TRUE(closed);

  // Over the limit, declared or chunked: 413, and nothing reaches the handler.
  for (const std::string& big :
       {"POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 65\r\n\r\n" + std::string(65, 'x'),
        "POST /big HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n41\r\n" +
            std::string(65, 'x') + "\r\n0\r\n\r\n"}) {
    std::tie(got, closed) = exchange(big, 1, true);
    EXPECT_EQ(got.find("HTTP/1.1 413"), 0u) << got;
    EXPECT_EQ(got.find("path=/big"), std::string::npos) << got;
    EXPECT_TRUE(closed);
  }

  // A malformed request line ends the connection without a handler call.
  std::tie(got, closed) = exchange("GET\r\n\r\n", 1);
  EXPECT_EQ(got, "");
  EXPECT_TRUE(closed);
}

// An answer to a peer that stops reading is cut off once its write has
// made no progress for send_timeout_sec, whether it is written on the loop
// (after the socket took what it could at once) or blocking on the pool
// (the loop's watch over a handler's writes), even when the connection had
// served requests before, its idle deadline armed and disarmed each time.
TEST_F(HttpServerTest, AnswerToAPeerThatStopsReadingIsCutAtTheSendDeadline) {
  opts_.send_timeout_sec = 1;
  std::string large(48 * 1024 * 1024, 'x');  // more than the sockets' buffers hold
  for (bool on_loop : {true, false}) {
    SCOPED_TRACE(on_loop ? "on the loop" : "on the pool");
    opts_.runs_on_loop = [on_loop](const Request&) { return on_loop; };
    StartServerWith([&](Request& req, Responder& res) {
      res.Respond(200, {{"Content-Type", "text/plain"}}, req.path == "/large" ? large : "small");
    });
    TlsClient client(server_->port());
    ASSERT_TRUE(client.HandshakeHoldingLastFlight());
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(client.Write(Get("/small")) && client.Flush());
      ASSERT_NE(client.ReadUntil("small").find("small"), std::string::npos);
    }
    ASSERT_EQ(server_->open_connections(), 1u);
    ASSERT_TRUE(client.Write(Get("/large")) && client.Flush());
    // The client reads nothing more (what it would read is queued behind
    // the answer): the server ends the connection.
    for (int waited = 0; server_->open_connections() > 0 && waited < kWaitMillis; waited += 10) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(server_->open_connections(), 0u) << "the connection was not closed";
    // What had been sent arrives, then the end: not the whole answer.
    ssize_t got = BytesUntilEof(client.fd());
    EXPECT_GE(got, 0);
    EXPECT_LT(static_cast<size_t>(got), large.size());
    server_->Stop();
    server_.reset();
  }
}

}  // namespace
}  // namespace flotilla::apiserver
