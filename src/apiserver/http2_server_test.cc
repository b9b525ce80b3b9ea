// The HTTP server's HTTP/2 connections, driven by an nghttp2 client whose
// flow control the test holds (no automatic WINDOW_UPDATE), so that one
// stream can be made a slow reader while another on the same connection
// reads.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <nghttp2/nghttp2.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <set>
#include <string>

#include "apiserver/http_server.h"
#include "apiserver/pki.h"
#include "base/http2.h"
#include "base/mutex.h"

namespace flotilla::apiserver {
namespace {

constexpr int kH2WaitMillis = 30000;  // a failing test ends instead of hanging

std::string TempPath() {
  char tmpl[] = "/tmp/flotilla-h2-XXXXXX";
  return ::mkdtemp(tmpl);
}

// An HTTP/2 client on one blocking TLS socket; the test runs its session.
class RawH2Client {
 public:
  struct Seen {
    int status = 0;
    std::string body;
    bool closed = false;
    uint32_t error = 0;
  };

  // `window`: each stream's receive window; nothing is granted back unless
  // the test consumes it (Consume), except what `auto_consume` streams get.
  RawH2Client(int port, int32_t window) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    ctx_ = SSL_CTX_new(TLS_client_method());
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    http2::OfferAlpn(ssl_, true);
    connected_ = connected_ && SSL_connect(ssl_) == 1 && http2::NegotiatedH2(ssl_);
    nghttp2_option* opt = nullptr;
    nghttp2_option_new(&opt);
    nghttp2_option_set_no_auto_window_update(opt, 1);
    owned_ = http2::NewSession(http2::Side::kClient,
                               {.on_header = OnHeader,
                                .on_data_chunk = OnData,
                                .on_frame_recv = OnFrame,
                                .on_stream_close = OnClose},
                               this, opt);
    session_ = owned_.get();
    nghttp2_option_del(opt);
    nghttp2_settings_entry settings[] = {
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, static_cast<uint32_t>(window)}};
    nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, 1);
  }
  ~RawH2Client() {
    owned_.reset();
    SSL_free(ssl_);
    SSL_CTX_free(ctx_);
    ::close(fd_);
  }

  bool connected() const { return connected_; }

  int32_t Request(const std::string& method, const std::string& path, std::string body = "") {
    bodies_.push_back({std::move(body), 0});
    Body& b = bodies_.back();
    http2::HeaderBlock h;
    h.Add(":method", method);
    h.Add(":scheme", "https");
    h.Add(":authority", "127.0.0.1");
    h.Add(":path", path);
    h.Add("x-test", "yes");
    nghttp2_data_provider provider{};
    provider.source.ptr = &b;
    provider.read_callback = ReadBody;
    return nghttp2_submit_request(session_, nullptr, h.data(), h.size(),
                                  b.data.empty() ? nullptr : &provider, nullptr);
  }
  // Grants `stream` more window as it reads (its data consumed at once).
  void AutoConsume(int32_t stream) { auto_consume_.insert(stream); }

  // Runs the session until `done` or the bound; false on the bound.
  bool RunUntil(const std::function<bool()>& done) {
    for (int waited = 0; !done();) {
      if (!Send()) return false;
      if (done()) return true;
      if (SSL_pending(ssl_) == 0) {
        pollfd pfd{fd_, POLLIN, 0};
        if (::poll(&pfd, 1, 100) == 0) {
          waited += 100;
          if (waited >= kH2WaitMillis) return false;
          continue;
        }
      }
      char buf[16384];
      int n = SSL_read(ssl_, buf, sizeof(buf));
      if (n <= 0) {
        eof_ = true;
        return done();
      }
      if (nghttp2_session_mem_recv(session_, reinterpret_cast<uint8_t*>(buf), n) < 0) return false;
    }
    return true;
  }

  std::map<int32_t, Seen> streams;
  bool goaway = false;
  bool eof() const { return eof_; }
  uint32_t remote_max_streams() {
    return nghttp2_session_get_remote_settings(session_, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
  }
  bool settings_seen = false;

 private:
  bool Send() {
    for (;;) {
      const uint8_t* data = nullptr;
      auto n = nghttp2_session_mem_send(session_, &data);
      if (n < 0) return false;
      if (n == 0) return true;
      if (SSL_write(ssl_, data, static_cast<int>(n)) <= 0) return true;  // the peer left
    }
  }
  static RawH2Client& Of(void* user) { return *static_cast<RawH2Client*>(user); }
  static int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name, size_t nl,
                      const uint8_t* value, size_t vl, uint8_t, void* user) {
    if (std::string_view(reinterpret_cast<const char*>(name), nl) == ":status") {
      Of(user).streams[frame->hd.stream_id].status =
          std::stoi(std::string(reinterpret_cast<const char*>(value), vl));
    }
    return 0;
  }
  static int OnData(nghttp2_session* s, uint8_t, int32_t id, const uint8_t* data, size_t len,
                    void* user) {
    auto& self = Of(user);
    self.streams[id].body.append(reinterpret_cast<const char*>(data), len);
    if (self.auto_consume_.contains(id)) {
      nghttp2_session_consume(s, id, len);
    } else {
      nghttp2_session_consume_connection(s, len);  // only the stream's window stays shut
    }
    return 0;
  }
  static int OnClose(nghttp2_session*, int32_t id, uint32_t error, void* user) {
    Of(user).streams[id].closed = true;
    Of(user).streams[id].error = error;
    return 0;
  }
  static int OnFrame(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    if (frame->hd.type == NGHTTP2_GOAWAY) Of(user).goaway = true;
    if (frame->hd.type == NGHTTP2_SETTINGS) Of(user).settings_seen = true;
    return 0;
  }
  static ssize_t ReadBody(nghttp2_session*, int32_t, uint8_t* buf, size_t length, uint32_t* flags,
                          nghttp2_data_source* source, void*) {
    auto& b = *static_cast<Body*>(source->ptr);
    size_t n = std::min(length, b.data.size() - b.sent);
    std::memcpy(buf, b.data.data() + b.sent, n);
    b.sent += n;
    if (b.sent == b.data.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }

  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  http2::SessionPtr owned_;
  nghttp2_session* session_ = nullptr;
  struct Body {
    std::string data;
    size_t sent = 0;
  };
  std::deque<Body> bodies_;  // each request's, kept where the session reads them
  std::set<int32_t> auto_consume_;
};

// A server whose streams the test writes: every GET of /stream/NAME starts
// one; other requests are echoed.
class StreamServer {
 public:
  explicit StreamServer(const std::function<void(HttpServerOptions&)>& configure = nullptr) {
    auto pki = EnsurePki({dir_ + "/pki"});
    EXPECT_TRUE(pki.ok());
    HttpServerOptions opts;
    opts.cert_path = pki->serving_cert_path;
    opts.key_path = pki->serving_key_path;
    if (configure) configure(opts);
    auto server = HttpServer::Start(opts, [this](Request& req, Responder& resp) {
      if (req.path.starts_with("/stream/")) {
        auto stream = resp.StartAsyncStream(200, {{"Content-Type", "application/json"}});
        MutexLock lock(mu_);
        streams_[req.path.substr(8)] = stream;
        return;
      }
      resp.Respond(200, {{"Content-Type", "text/plain"}},
                   req.protocol + " " + req.method + " " + req.path + "?" + req.Query("q") + " " +
                       req.Header("x-test") + " " + req.Header("host") + " " +
                       std::to_string(req.body.size()));
    });
    EXPECT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
  }
  ~StreamServer() {
    if (server_) server_->Stop();
    std::filesystem::remove_all(dir_);
  }
  HttpServer& server() { return *server_; }
  std::shared_ptr<ChunkStream> stream(const std::string& name) {
    MutexLock lock(mu_);
    auto it = streams_.find(name);
    return it == streams_.end() ? nullptr : it->second;
  }

 private:
  std::string dir_ = TempPath();
  Mutex mu_;
  std::map<std::string, std::shared_ptr<ChunkStream>> streams_ GUARDED_BY(mu_);
  std::unique_ptr<HttpServer> server_;
};

TEST(Http2ServerTest, RequestsAndResponsesCarryWhatHttpOneOneWould) {
  StreamServer s;
  RawH2Client c(s.server().port(), 65535);
  ASSERT_TRUE(c.connected());
  int32_t get = c.Request("GET", "/hello?q=a%20b");
  int32_t post = c.Request("POST", "/upload", std::string(100000, 'x'));
  int32_t head = c.Request("HEAD", "/hello");
  for (int32_t id : {get, post, head}) c.AutoConsume(id);
  ASSERT_TRUE(c.RunUntil(
      [&] { return c.streams[get].closed && c.streams[post].closed && c.streams[head].closed; }));
  EXPECT_EQ(c.streams[get].status, 200);
  EXPECT_EQ(c.streams[get].body, "HTTP/2.0 GET /hello?a b yes 127.0.0.1 0");
  EXPECT_EQ(c.streams[post].body, "HTTP/2.0 POST /upload? yes 127.0.0.1 100000");
  EXPECT_EQ(c.streams[head].status, 200);
  EXPECT_EQ(c.streams[head].body, "");
}

TEST(Http2ServerTest, TheStreamLimitIsAdvertised) {
  StreamServer s([](HttpServerOptions& o) { o.http2_max_streams = 7; });
  RawH2Client c(s.server().port(), 65535);
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(c.RunUntil([&] { return c.settings_seen; }));
  EXPECT_EQ(c.remote_max_streams(), 7u);
}

TEST(Http2ServerTest, AnOversizeBodyIsRefusedWith413) {
  StreamServer s([](HttpServerOptions& o) { o.max_body_bytes = 1024; });
  RawH2Client c(s.server().port(), 65535);
  ASSERT_TRUE(c.connected());
  int32_t id = c.Request("POST", "/upload", std::string(4096, 'x'));
  c.AutoConsume(id);
  ASSERT_TRUE(c.RunUntil([&] { return c.streams[id].status != 0 && c.streams[id].closed; }));
  EXPECT_EQ(c.streams[id].status, 413);
  EXPECT_NE(c.streams[id].body.find("RequestEntityTooLarge"), std::string::npos);
  // The connection serves on.
  int32_t next = c.Request("GET", "/after");
  c.AutoConsume(next);
  ASSERT_TRUE(c.RunUntil([&] { return c.streams[next].closed; }));
  EXPECT_EQ(c.streams[next].status, 200);
}

// Two watches on one connection: the one whose reader stops holds back
// only its own stream, within its window, while the other goes on; once
// it is the server's stream buffer behind it is reset (cut off) and the
// other still goes on.
TEST(Http2ServerTest, ASlowStreamIsCutOffWithoutDelayingTheOthers) {
  constexpr size_t kBuffer = 64 * 1024;
  StreamServer s([&](HttpServerOptions& o) { o.max_stream_buffer_bytes = kBuffer; });
  RawH2Client c(s.server().port(), 16 * 1024);
  ASSERT_TRUE(c.connected());
  int32_t slow = c.Request("GET", "/stream/slow");
  int32_t fast = c.Request("GET", "/stream/fast");
  c.AutoConsume(fast);
  ASSERT_TRUE(c.RunUntil([&] {
    return c.streams[slow].status == 200 && c.streams[fast].status == 200 && s.stream("slow") &&
           s.stream("fast");
  }));
  const std::string chunk(1024, 'c');
  // The slow reader's window (16 KiB) fills; 24 KiB more wait in the server.
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(s.stream("slow")->Write(chunk));
  ASSERT_TRUE(c.RunUntil([&] { return c.streams[slow].body.size() == 16 * 1024; }));
  // Meanwhile 200 KiB go through on the other stream, in rounds it reads.
  for (int round = 1; round <= 10; ++round) {
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(s.stream("fast")->Write(chunk));
    ASSERT_TRUE(c.RunUntil([&] { return c.streams[fast].body.size() == round * 20 * 1024u; }));
  }
  EXPECT_EQ(c.streams[slow].body.size(), 16 * 1024u);
  EXPECT_FALSE(c.streams[slow].closed);
  // Past the buffer, the slow one is cut off.
  bool cut = false;
  for (int i = 0; i < 200 && !cut; ++i) cut = !s.stream("slow")->Write(chunk);
  EXPECT_TRUE(cut);
  ASSERT_TRUE(c.RunUntil([&] { return c.streams[slow].closed; }));
  EXPECT_EQ(c.streams[slow].error, static_cast<uint32_t>(NGHTTP2_CANCEL));
  ASSERT_TRUE(s.stream("fast")->Write(chunk));
  ASSERT_TRUE(c.RunUntil([&] { return c.streams[fast].body.size() == 201 * 1024u; }));
  EXPECT_FALSE(c.streams[fast].closed);
}

TEST(Http2ServerTest, StoppingSaysGoAwayAndEndsTheStreams) {
  StreamServer s;
  RawH2Client c(s.server().port(), 65535);
  ASSERT_TRUE(c.connected());
  int32_t watch = c.Request("GET", "/stream/w");
  ASSERT_TRUE(c.RunUntil([&] { return c.streams[watch].status == 200 && s.stream("w"); }));
  auto stopped = std::async(std::launch::async, [&] { s.server().Stop(); });
  ASSERT_TRUE(c.RunUntil([&] { return c.goaway && c.eof(); }));
  EXPECT_TRUE(c.streams[watch].closed || c.eof());
  stopped.get();
  EXPECT_FALSE(s.stream("w")->Write("late"));
}

}  // namespace
}  // namespace flotilla::apiserver
