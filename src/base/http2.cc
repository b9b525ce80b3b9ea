// HTTP/2 over TLS (http2.h).
#include "base/http2.h"

#include <openssl/crypto.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/write.hpp>
#include <cctype>

namespace flotilla::http2 {
namespace {

// OpenSSL frees its global state at exit by default, from an atexit
// handler; the shared loop's threads (base/io.h) never stop, and one may
// be closing a TLS stream then, whose BIO locks what was freed. A process
// that ends through exit() (a test binary) keeps that state to the end.
// This runs before any other static initializer, so before OpenSSL's own
// initialization, which is what registers the handler.
__attribute__((constructor(101))) void KeepOpenSslUntilTheEnd() {
  OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr);
}

constexpr auto kAwait = net::as_tuple(net::use_awaitable);
// What one write sends at most: frames are gathered up to this, so that a
// burst of small frames (many watches' events) costs one TLS record each
// 16 KiB rather than one per frame.
constexpr size_t kWriteBatch = 64 * 1024;

constexpr std::string_view kH2 = "h2";
constexpr std::string_view kHttp11 = "http/1.1";
// In the wire format: each name after its length.
constexpr unsigned char kOfferBoth[] = {2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
constexpr unsigned char kOfferHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

// Finds `want` among the client's offered names.
bool Offered(const unsigned char* in, unsigned int inlen, std::string_view want,
             const unsigned char** out, unsigned char* outlen) {
  for (unsigned int i = 0; i < inlen;) {
    unsigned int n = in[i];
    if (i + 1 + n > inlen) return false;
    if (std::string_view(reinterpret_cast<const char*>(in + i + 1), n) == want) {
      *out = in + i + 1;
      *outlen = static_cast<unsigned char>(n);
      return true;
    }
    i += 1 + n;
  }
  return false;
}

int Select(const unsigned char** out, unsigned char* outlen, const unsigned char* in,
           unsigned int inlen, bool h2) {
  if (h2 && Offered(in, inlen, kH2, out, outlen)) return SSL_TLSEXT_ERR_OK;
  if (Offered(in, inlen, kHttp11, out, outlen)) return SSL_TLSEXT_ERR_OK;
  return SSL_TLSEXT_ERR_NOACK;
}

int SelectH2(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
             unsigned int inlen, void*) {
  return Select(out, outlen, in, inlen, true);
}

int SelectHttp11(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
                 unsigned int inlen, void*) {
  return Select(out, outlen, in, inlen, false);
}

bool Forbidden(std::string_view name) {
  return name == "connection" || name == "keep-alive" || name == "proxy-connection" ||
         name == "transfer-encoding" || name == "upgrade";
}

}  // namespace

void SelectAlpn(SSL_CTX* ctx, bool h2) {
  SSL_CTX_set_alpn_select_cb(ctx, h2 ? SelectH2 : SelectHttp11, nullptr);
}

void OfferAlpn(SSL* ssl, bool h2) {
  if (h2) {
    SSL_set_alpn_protos(ssl, kOfferBoth, sizeof(kOfferBoth));
  } else {
    SSL_set_alpn_protos(ssl, kOfferHttp11, sizeof(kOfferHttp11));
  }
}

bool NegotiatedH2(SSL* ssl) {
  const unsigned char* name = nullptr;
  unsigned int len = 0;
  SSL_get0_alpn_selected(ssl, &name, &len);
  return std::string_view(reinterpret_cast<const char*>(name), len) == kH2;
}

SessionPtr NewSession(Side side, const Callbacks& callbacks, void* user,
                      const nghttp2_option* option) {
  nghttp2_session_callbacks* cbs = nullptr;
  nghttp2_session_callbacks_new(&cbs);
  if (callbacks.on_begin_headers) {
    nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, callbacks.on_begin_headers);
  }
  if (callbacks.on_header)
    nghttp2_session_callbacks_set_on_header_callback(cbs, callbacks.on_header);
  if (callbacks.on_data_chunk) {
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, callbacks.on_data_chunk);
  }
  if (callbacks.on_frame_recv) {
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, callbacks.on_frame_recv);
  }
  if (callbacks.on_stream_close) {
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, callbacks.on_stream_close);
  }
  nghttp2_session* raw = nullptr;
  if (side == Side::kServer) {
    nghttp2_session_server_new2(&raw, cbs, user, option);
  } else {
    nghttp2_session_client_new2(&raw, cbs, user, option);
  }
  nghttp2_session_callbacks_del(cbs);
  return SessionPtr(raw);
}

void HeaderBlock::Add(std::string_view name, std::string_view value) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (Forbidden(lower)) return;
  fields_.emplace_back(std::move(lower), std::string(value));
}

void HeaderBlock::Set(std::string_view name, std::string_view value) {
  std::erase_if(fields_, [&](const auto& f) { return f.first == name; });
  Add(name, value);
}

bool HeaderBlock::Has(std::string_view name) const {
  for (const auto& f : fields_) {
    if (f.first == name) return true;
  }
  return false;
}

const nghttp2_nv* HeaderBlock::data() {
  nv_.clear();
  for (auto& [name, value] : fields_) {
    nv_.push_back({reinterpret_cast<uint8_t*>(name.data()),
                   reinterpret_cast<uint8_t*>(value.data()), name.size(), value.size(),
                   NGHTTP2_NV_FLAG_NONE});
  }
  return nv_.data();
}

Pump::Pump(TlsStream& stream, nghttp2_session* session, std::chrono::seconds write_timeout)
    : stream_(stream),
      session_(session),
      write_timeout_(write_timeout),
      write_timer_(stream.get_executor()) {}

net::awaitable<error_code> Pump::Run(std::shared_ptr<void> owner, std::string received) {
  Flush(owner);  // the connection preface and SETTINGS
  if (!received.empty()) {
    auto rv = nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(received.data()),
                                       received.size());
    if (rv < 0) {
      CloseAfterFlush(owner);
      co_return make_error_code(boost::system::errc::protocol_error);
    }
    Flush(owner);
  }
  for (;;) {
    if (!nghttp2_session_want_read(session_) && !nghttp2_session_want_write(session_)) {
      co_return error_code();
    }
    auto [ec, n] = co_await stream_.async_read_some(net::buffer(in_), kAwait);
    if (ec) co_return ec;
    auto rv = nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(in_.data()), n);
    if (rv < 0) {
      // What the session could still say (a GOAWAY naming the error) goes
      // out before the socket closes.
      CloseAfterFlush(owner);
      co_return make_error_code(boost::system::errc::protocol_error);
    }
    Flush(owner);
  }
}

void Pump::Flush(std::shared_ptr<void> owner) {
  if (writing_ || shut_) return;
  if (!nghttp2_session_want_write(session_)) {
    if (close_after_flush_) ShutDown();
    return;
  }
  writing_ = true;
  net::co_spawn(stream_.get_executor(), Write(std::move(owner)), net::detached);
}

void Pump::CloseAfterFlush(std::shared_ptr<void> owner) {
  close_after_flush_ = true;
  Flush(std::move(owner));
}

void Pump::ShutDown() {
  shut_ = true;
  error_code ignored;
  stream_.next_layer().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
}

net::awaitable<void> Pump::Write(std::shared_ptr<void> owner) {
  for (;;) {
    out_.clear();
    // A write that ends after the connection did: the streams whose data
    // the session would read may be gone.
    if (shut_) break;
    while (out_.size() < kWriteBatch) {
      const uint8_t* data = nullptr;
      auto n = nghttp2_session_mem_send(session_, &data);
      if (n < 0) {
        ShutDown();
        break;
      }
      if (n == 0) break;
      out_.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
    }
    if (out_.empty()) break;
    write_timer_.expires_after(write_timeout_);
    write_timer_.async_wait([this, owner](error_code ec) {
      if (!ec) ShutDown();
    });
    auto [ec, written] = co_await net::async_write(stream_, net::buffer(out_), kAwait);
    write_timer_.cancel();
    if (ec) {
      ShutDown();
      break;
    }
  }
  writing_ = false;
  if (close_after_flush_) ShutDown();
}

}  // namespace flotilla::http2
